//! Building the event graph from a trace (Argus §3.1, §4.2).
//!
//! Vertices: each thread's timeline is cut at the entry of every blocking wait
//! (§4.2.1), giving exec vertices (running or queued for a CPU) and wait vertices
//! (one blocked segment each). An exec vertex is cut again where two consecutive
//! wake-ups it sends go to different threads (non-overlapping peer sets, §4.2.1).
//!
//! Edges: a wake-up by a thread is a strong edge from the waker's vertex; a wait ended
//! by its own timer is a strong edge from the vertex that began the wait (it armed the
//! timer); wake-ups by device interrupts are left out (§3.1: they do not show what the
//! application meant) and counted. A wait's end strongly leads to the exec vertex after
//! it; a fork strongly leads to the child's first vertex; a data flag's write strongly
//! leads to the first read that sees it. Each cut adds a weak edge across it (§4.2.2).
//!
//! A wait on a pipe, socket, eventfd or futex ends by the kernel's wake-up, which
//! names the waker. A read that found its data already queued has no wake-up: the
//! write it took the data of is found by replaying the object's queue
//! ([`crate::objects`]). Exec vertices of batching loops (an event loop serving many
//! peers in one wake-up) are cut per item ([`crate::batching`]). Signal and
//! timer-arm edges come from the recorded signal and timer events
//! ([`crate::signals`]).

use crate::batching;
use crate::graph::BuildCounts;
use crate::graph::{
    BlockType, Call, Edge, EdgeKind, EventGraph, Strength, Vertex, VertexId, VertexKind, WokenBy,
};
use crate::objects::{self, Link, Waits};
use crate::options::Options;
use causeway_format::{DurationNs, SoftirqVec, TaskState, Tid, Timestamp, Waker};
use causeway_model::{Segment, SegmentId, SegmentState, TimeSpan, Trace};
use causeway_stacks::SyscallSpan;
use std::collections::BTreeMap;

/// Interrupt number the recorder gives hrtimer expiries that run in hard-IRQ context.
const TIMER_IRQ: u32 = u32::MAX;

/// x86-64 `sched_yield`.
const SCHED_YIELD: u32 = 24;

/// A vertex before it gets its global id: the thread's segments it covers.
struct Raw {
    vertex: Vertex,
    /// For a wait: its segment, to find the waker's segment in the model.
    segment: Option<u32>,
    /// For a part of a cut exec vertex: why it was cut from the part before
    /// ([`EdgeKind::PeerSplit`] or [`EdgeKind::BatchItem`]).
    cut: Option<EdgeKind>,
}

/// Build the event graph of a trace. `syscalls` are the trace's system calls (from a
/// second pass over its events; empty if it recorded none).
pub fn build(trace: &Trace, syscalls: &[SyscallSpan], opts: &Options) -> EventGraph {
    let model = trace.model();
    let mut per_thread: Vec<Vec<Raw>> = model
        .threads()
        .enumerate()
        .map(|(ti, t)| thread_vertices(ti as u32, t.tid, t.tgid, &t.segments))
        .collect();
    let thread_of: Vec<Option<u32>> = syscalls
        .iter()
        .map(|c| model.thread_index_at(c.tid, c.start))
        .collect();
    let waits = waits_of(&per_thread);
    let tgid_of = |t: u32| model.thread_by_index(t).and_then(|t| t.tgid);
    let links = objects::links(syscalls, &thread_of, &tgid_of, &waits);
    let items = if opts.split_batches {
        batch_items(syscalls, &thread_of, &links, &waits, per_thread.len())
    } else {
        Vec::new()
    };
    let mut splits = 0u64;
    if opts.split_peers {
        let wakes = outgoing_wakes(trace, &per_thread);
        for (ti, raws) in per_thread.iter_mut().enumerate() {
            let segs = model
                .thread_by_index(ti as u32)
                .map_or(&[][..], |t| t.segments.as_slice());
            let mine = items.get(ti).map_or(&[][..], Vec::as_slice);
            splits += split_by_peers(raws, wakes.get(&(ti as u32)), mine, segs);
        }
    }
    let mut batch_splits = 0u64;
    for (ti, raws) in per_thread.iter_mut().enumerate() {
        let Some(mine) = items.get(ti).filter(|l| !l.is_empty()) else {
            continue;
        };
        let cuts: Vec<Timestamp> = mine.iter().map(|s| s.start).collect();
        let segs = model
            .thread_by_index(ti as u32)
            .map_or(&[][..], |t| t.segments.as_slice());
        batch_splits += cut_at(raws, &cuts, EdgeKind::BatchItem, segs);
    }
    assign_calls(trace, syscalls, &mut per_thread, opts);
    for raws in &mut per_thread {
        for r in raws.iter_mut() {
            let tid = r.vertex.tid;
            let s = trace
                .facts()
                .samples_between(tid, r.vertex.span.start, r.vertex.span.end);
            let mut by: BTreeMap<Option<causeway_format::StackId>, u32> = BTreeMap::new();
            for x in s {
                *by.entry(x.user).or_default() += 1;
            }
            let mut v: Vec<_> = by.into_iter().collect();
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            r.vertex.samples = v;
        }
    }
    // Sized once: these hold a vertex per segment run of a trace of millions of
    // events, and growing them copies and faults in each size on the way.
    let n: usize = per_thread.iter().map(Vec::len).sum();
    let mut wait_segments = Vec::with_capacity(n);
    let mut cuts = Vec::with_capacity(n);
    let mut vertices = Vec::with_capacity(n);
    for raws in per_thread {
        for mut r in raws {
            if let Some(index) = r.segment {
                let seg = causeway_model::SegmentId {
                    thread: r.vertex.thread,
                    index,
                };
                let kind = crate::classify::classify(&r.vertex, Some(seg), model, trace.tables());
                r.vertex.waits_on = Some(kind);
            }
            wait_segments.push(r.segment);
            cuts.push(r.cut);
            vertices.push(r.vertex);
        }
    }
    let mut graph = EventGraph::from_parts(vertices, Vec::new());
    let (edges, interrupts, socket_wakeups) = edges(trace, &graph, &wait_segments, &cuts);
    graph = graph.with_edges(edges);
    // Data edges last: whether a wake-up already links a read needs the others.
    let data = objects::edges(&graph, &links);
    let data_edges = data.len() as u64;
    if !data.is_empty() {
        let mut all = graph.edges().to_vec();
        all.extend(data);
        graph = graph.with_edges(all);
    }
    graph.set_build_counts(BuildCounts {
        peer_splits: splits,
        batch_splits,
        data_edges,
        interrupt_wakeups: interrupts,
        socket_wakeups,
    });
    graph
}

/// Each thread's waits, in time order, with what ended them.
fn waits_of(per_thread: &[Vec<Raw>]) -> Waits {
    Waits::new(
        per_thread
            .iter()
            .map(|raws| {
                raws.iter()
                    .filter(|r| r.vertex.kind == VertexKind::Wait)
                    .map(|r| (r.vertex.span, r.vertex.woken_by))
                    .collect()
            })
            .collect(),
    )
}

/// The calls that begin an item of a batching loop ([`crate::batching`]), per thread
/// (by model index), in time order.
fn batch_items(
    syscalls: &[SyscallSpan],
    thread_of: &[Option<u32>],
    links: &[Link],
    waits: &Waits,
    threads: usize,
) -> Vec<Vec<TimeSpan>> {
    let mut new_data = vec![false; syscalls.len()];
    for l in links.iter().filter(|l| !l.blocked && l.fresh) {
        if let Some(x) = new_data.get_mut(l.call) {
            *x = true;
        }
    }
    let mut calls: Vec<Vec<usize>> = vec![Vec::new(); threads];
    for (i, t) in thread_of.iter().enumerate() {
        if let Some(list) = t.and_then(|t| calls.get_mut(t as usize)) {
            list.push(i);
        }
    }
    calls
        .iter()
        .enumerate()
        .map(|(ti, list)| batching::item_calls(ti as u32, syscalls, list, &new_data, waits))
        .collect()
}

/// Cut exec vertices at the times `cuts` (sorted) that fall strictly inside them;
/// returns the number of cuts made.
fn cut_at(raws: &mut Vec<Raw>, cuts: &[Timestamp], why: EdgeKind, segs: &[Segment]) -> u64 {
    if cuts.is_empty() {
        return 0;
    }
    let mut out = Vec::with_capacity(raws.len() + cuts.len());
    let mut n = 0u64;
    for r in raws.drain(..) {
        if r.vertex.kind != VertexKind::Exec {
            out.push(r);
            continue;
        }
        let span = r.vertex.span;
        let lo = cuts.partition_point(|&c| c <= span.start);
        let hi = cuts.partition_point(|&c| c < span.end);
        let inside = cuts.get(lo..hi).unwrap_or(&[]);
        if inside.is_empty() {
            out.push(r);
            continue;
        }
        let mut start = span.start;
        let mut first = true;
        for &c in inside {
            let mut p = part(&r, start, c, segs);
            if !first {
                p.cut = Some(why);
            }
            out.push(p);
            start = c;
            first = false;
            n += 1;
        }
        let mut last = part(&r, start, span.end, segs);
        last.cut = Some(why);
        out.push(last);
    }
    *raws = out;
    n
}

/// Exec and wait vertices of one thread, in time order (unknown stretches cut exec
/// vertices and get none).
fn thread_vertices(
    ti: u32,
    tid: Tid,
    tgid: Option<causeway_format::Tgid>,
    segs: &[Segment],
) -> Vec<Raw> {
    // At most a vertex per segment; capacity never written is never faulted in, so
    // the bound costs address space only.
    let mut out = Vec::with_capacity(segs.len());
    let mut open: Option<(usize, usize)> = None;
    let flush = |open: &mut Option<(usize, usize)>, out: &mut Vec<Raw>| {
        if let Some((a, b)) = open.take() {
            out.push(exec_vertex(ti, tid, tgid, segs, a, b));
        }
    };
    for (i, s) in segs.iter().enumerate() {
        match s.state {
            SegmentState::Running { .. } | SegmentState::Runnable { .. } => {
                open = Some(open.map_or((i, i), |(a, _)| (a, i)));
            }
            SegmentState::Blocked {
                state,
                syscall,
                switch_out_stack,
                ..
            } => {
                flush(&mut open, &mut out);
                let stopped = state
                    .is_some_and(|st| st.0 & (TaskState::STOPPED.0 | TaskState::TRACED.0) != 0);
                out.push(Raw {
                    vertex: Vertex {
                        thread: ti,
                        tid,
                        tgid,
                        span: s.span(),
                        kind: VertexKind::Wait,
                        block: if stopped {
                            BlockType::Stopped
                        } else {
                            BlockType::Wait
                        },
                        running: DurationNs(0),
                        runnable: DurationNs(0),
                        calls: Vec::new(),
                        yields: 0,
                        wait_call: syscall,
                        stack: switch_out_stack,
                        woken_by: s.end_known.then(|| woken_by(s.wake().map(|w| w.waker))),
                        waits_on: None,
                        samples: Vec::new(),
                        complete: s.start_known && s.end_known,
                    },
                    segment: Some(i as u32),
                    cut: None,
                });
            }
            SegmentState::Unknown { .. } => flush(&mut open, &mut out),
        }
    }
    flush(&mut open, &mut out);
    out
}

/// What ended a wait, from the model's waker.
fn woken_by(w: Option<Waker>) -> WokenBy {
    match w {
        Some(Waker::Thread { tid }) => WokenBy::Thread { tid },
        Some(Waker::Irq { irq, .. }) if irq == TIMER_IRQ => WokenBy::Timer,
        Some(Waker::Softirq { vec }) if vec == SoftirqVec::TIMER || vec == SoftirqVec::HRTIMER => {
            WokenBy::Timer
        }
        Some(Waker::Irq { irq, .. }) => WokenBy::Interrupt {
            number: irq,
            softirq: false,
        },
        Some(Waker::Softirq { vec }) => WokenBy::Interrupt {
            number: u32::from(vec.0),
            softirq: true,
        },
        Some(Waker::Unknown) | None => WokenBy::Unknown,
    }
}

/// An exec vertex over segments `a..=b`.
fn exec_vertex(
    ti: u32,
    tid: Tid,
    tgid: Option<causeway_format::Tgid>,
    segs: &[Segment],
    a: usize,
    b: usize,
) -> Raw {
    let first = segs.get(a);
    let last = segs.get(b);
    let span = TimeSpan {
        start: first.map_or(Timestamp(0), |s| s.start),
        end: last.map_or(Timestamp(0), |s| s.end),
    };
    let (running, runnable) = time_in(segs, span);
    Raw {
        vertex: Vertex {
            thread: ti,
            tid,
            tgid,
            span,
            kind: VertexKind::Exec,
            block: BlockType::Running,
            running,
            runnable,
            calls: Vec::new(),
            yields: 0,
            wait_call: None,
            waits_on: None,
            stack: None,
            woken_by: None,
            samples: Vec::new(),
            complete: first.is_some_and(|s| s.start_known) && last.is_some_and(|s| s.end_known),
        },
        segment: None,
        cut: None,
    }
}

/// Running and runnable time of a thread's segments inside `span`.
fn time_in(segs: &[Segment], span: TimeSpan) -> (DurationNs, DurationNs) {
    let lo = segs.partition_point(|s| s.end <= span.start);
    let (mut run, mut queued) = (0u64, 0u64);
    for s in segs.get(lo..).unwrap_or(&[]) {
        if s.start >= span.end {
            break;
        }
        let o = s
            .end
            .min(span.end)
            .saturating_since(s.start.max(span.start))
            .0;
        match s.state {
            SegmentState::Running { .. } => run += o,
            SegmentState::Runnable { .. } => queued += o,
            _ => {}
        }
    }
    (DurationNs(run), DurationNs(queued))
}

/// For each waker thread, `(time, wakee thread)` of the wake-ups it sent, in time order.
fn outgoing_wakes(trace: &Trace, per_thread: &[Vec<Raw>]) -> BTreeMap<u32, Vec<(Timestamp, u32)>> {
    let model = trace.model();
    let mut out: BTreeMap<u32, Vec<(Timestamp, u32)>> = BTreeMap::new();
    for (ti, raws) in per_thread.iter().enumerate() {
        for r in raws {
            let Some(WokenBy::Thread { tid }) = r.vertex.woken_by else {
                continue;
            };
            let ts = r.vertex.span.end;
            if let Some(w) = model.thread_index_at(tid, ts) {
                out.entry(w).or_default().push((ts, ti as u32));
            }
        }
    }
    for list in out.values_mut() {
        list.sort_unstable();
    }
    out
}

/// Cut each exec vertex just after a wake-up it sent when the next wake-up it sends
/// goes to another thread; returns the number of cuts. A wake-up sent inside a call
/// that begins a batch item (`items`, in time order) cuts nothing: reading a peer's
/// message wakes that peer if it waits on the same queue (a Unix socket's reader
/// wakes its writer), and the item's own cut, at the call's entry, already separates
/// the peers where the new one's work begins.
fn split_by_peers(
    raws: &mut Vec<Raw>,
    wakes: Option<&Vec<(Timestamp, u32)>>,
    items: &[TimeSpan],
    segs: &[Segment],
) -> u64 {
    let Some(wakes) = wakes else { return 0 };
    let mut out = Vec::with_capacity(raws.len());
    let mut cuts = 0u64;
    for r in raws.drain(..) {
        if r.vertex.kind != VertexKind::Exec {
            out.push(r);
            continue;
        }
        let span = r.vertex.span;
        let lo = wakes.partition_point(|w| w.0 < span.start);
        let hi = wakes.partition_point(|w| w.0 < span.end);
        let inside = wakes.get(lo..hi).unwrap_or(&[]);
        let mut start = span.start;
        for pair in inside.windows(2) {
            let (Some(a), Some(b)) = (pair.first(), pair.get(1)) else {
                continue;
            };
            if a.1 == b.1 || a.0 >= b.0 || within(items, a.0) {
                continue;
            }
            let cut = Timestamp(a.0.0 + 1);
            let mut p = part(&r, start, cut, segs);
            if start != span.start {
                p.cut = Some(EdgeKind::PeerSplit);
            }
            out.push(p);
            start = cut;
            cuts += 1;
        }
        if start == span.start {
            // Not split (most vertices): the whole of it is the vertex as it is.
            out.push(r);
            continue;
        }
        let mut last = part(&r, start, span.end, segs);
        last.cut = Some(EdgeKind::PeerSplit);
        out.push(last);
    }
    *raws = out;
    cuts
}

/// True if `ts` falls inside one of `spans` (in time order, not overlapping).
fn within(spans: &[TimeSpan], ts: Timestamp) -> bool {
    let i = spans.partition_point(|s| s.start <= ts);
    i.checked_sub(1)
        .and_then(|i| spans.get(i))
        .is_some_and(|s| ts <= s.end)
}

/// The part `[start, end)` of an exec vertex (it keeps the vertex's own cut reason
/// when it begins where the vertex did).
fn part(r: &Raw, start: Timestamp, end: Timestamp, segs: &[Segment]) -> Raw {
    let mut v = r.vertex.clone();
    v.span = TimeSpan { start, end };
    let (run, queued) = time_in(segs, v.span);
    v.running = run;
    v.runnable = queued;
    Raw {
        vertex: v,
        segment: None,
        cut: (start == r.vertex.span.start).then_some(r.cut).flatten(),
    }
}

/// Put each system call into the vertex where it began, collapsing repeats, and set
/// the exec vertices' block types.
fn assign_calls(
    trace: &Trace,
    syscalls: &[SyscallSpan],
    per_thread: &mut [Vec<Raw>],
    opts: &Options,
) {
    let model = trace.model();
    for c in syscalls {
        let Some(ti) = model.thread_index_at(c.tid, c.start) else {
            continue;
        };
        let Some(raws) = per_thread.get_mut(ti as usize) else {
            continue;
        };
        let i = raws.partition_point(|r| r.vertex.span.start <= c.start);
        let Some(r) = i.checked_sub(1).and_then(|i| raws.get_mut(i)) else {
            continue;
        };
        if c.start > r.vertex.span.end {
            continue;
        }
        let v = &mut r.vertex;
        if c.nr == SCHED_YIELD {
            v.yields += 1;
        }
        match v.calls.last_mut() {
            Some(last) if last.nr == c.nr => last.repeats += 1,
            _ => v.calls.push(Call {
                nr: c.nr,
                args: [0; 3],
                ret: c.ret,
                repeats: 1,
                stack: c.stack,
            }),
        }
    }
    for raws in per_thread.iter_mut() {
        for r in raws.iter_mut() {
            let v = &mut r.vertex;
            if v.kind != VertexKind::Exec {
                continue;
            }
            v.block = if v.yields >= opts.yield_min {
                BlockType::Yielding
            } else if v.runnable > v.running && v.running < opts.long {
                // A long computation that also waited for CPUs (a busy machine) is
                // still a long computation.
                BlockType::Runnable
            } else {
                BlockType::Running
            };
        }
    }
}

/// The edges of a graph whose vertices are built; also the number of wake-ups by
/// interrupts that were left out.
fn edges(
    trace: &Trace,
    g: &EventGraph,
    wait_segments: &[Option<u32>],
    cuts: &[Option<EdgeKind>],
) -> (Vec<Edge>, u64, u64) {
    let model = trace.model();
    let mut out = Vec::new();
    let mut interrupts = 0u64;
    let mut socket = 0u64;
    // A thread's vertex list is in id order, so the vertices met here in id order are
    // at consecutive positions of it: a counter per thread finds each (no search).
    let mut seen: Vec<usize> = Vec::new();
    for (i, v) in (0u32..).zip(g.vertices()) {
        let id = VertexId(i);
        let list = g.thread_vertices(v.thread);
        let t = v.thread as usize;
        if seen.len() <= t {
            seen.resize(t + 1, 0);
        }
        let pos = seen[t];
        seen[t] += 1;
        debug_assert_eq!(list.get(pos), Some(&id));
        let prev = pos.checked_sub(1).and_then(|p| list.get(p)).copied();
        let prev_v = prev.and_then(|p| g.vertex(p).map(|pv| (p, pv)));
        let edge = |from: VertexId, kind, strength, ts| Edge {
            from,
            to: id,
            kind,
            strength,
            ts,
        };
        match v.kind {
            VertexKind::Wait => {
                let prev_exec = prev_v
                    .filter(|(_, pv)| pv.kind == VertexKind::Exec && pv.span.end == v.span.start);
                match v.woken_by {
                    Some(WokenBy::Thread { .. }) => {
                        let seg = wait_segments
                            .get(i as usize)
                            .copied()
                            .flatten()
                            .map(|index| SegmentId {
                                thread: v.thread,
                                index,
                            });
                        // Socket data: the sender's vertex when it sent it (on loopback
                        // the wake-up itself; later when a softirq delivered it).
                        let data = seg.and_then(|s| model.data_wake(s));
                        let at = data.map_or(v.span.end, |d| d.link_time(v.span.end));
                        let waker = seg
                            .and_then(|s| model.waker_segment(s))
                            .and_then(|w| g.vertex_at(w.thread, at));
                        if let Some(w) = waker.filter(|&w| w != id) {
                            out.push(edge(w, EdgeKind::Wakeup, Strength::Strong, at));
                            socket += u64::from(data.is_some());
                        }
                    }
                    Some(WokenBy::Timer) => {
                        // The recorded arm names the vertex that set the timer; without
                        // it, the run that began the wait did.
                        let armed = crate::signals::timer_source(trace, g, v)
                            .filter(|(a, _)| *a != id)
                            .or(prev_exec.map(|(p, _)| (p, v.span.end)));
                        if let Some((p, ts)) = armed {
                            out.push(edge(p, EdgeKind::Timer, Strength::Strong, ts));
                        }
                    }
                    Some(WokenBy::Interrupt { .. }) => interrupts += 1,
                    _ => {}
                }
                if let Some((p, _)) = prev_exec
                    && v.woken_by != Some(WokenBy::Timer)
                {
                    out.push(edge(p, EdgeKind::SameThread, Strength::Weak, v.span.start));
                }
            }
            VertexKind::Exec => match prev_v {
                Some((p, pv)) if pv.span.end == v.span.start => {
                    let (kind, strength) = if pv.kind == VertexKind::Wait {
                        (EdgeKind::Resume, Strength::Strong)
                    } else {
                        let why = cuts.get(i as usize).copied().flatten();
                        (why.unwrap_or(EdgeKind::PeerSplit), Strength::Weak)
                    };
                    out.push(edge(p, kind, strength, v.span.start));
                }
                None => {
                    if let Some(f) = fork_source(trace, g, v) {
                        out.push(edge(f.0, EdgeKind::Fork, Strength::Strong, f.1));
                    }
                }
                _ => {}
            },
        }
    }
    out.extend(flag_edges(trace, g));
    out.extend(crate::signals::signal_edges(trace, g));
    (out, interrupts, socket)
}

/// The parent's vertex at a thread's creation, for its first vertex.
fn fork_source(trace: &Trace, g: &EventGraph, v: &Vertex) -> Option<(VertexId, Timestamp)> {
    let model = trace.model();
    let t = model.thread_by_index(v.thread)?;
    let created = t.created?;
    let parent = model.thread_index_at(t.parent_tid?, created)?;
    if parent == v.thread {
        return None;
    }
    Some((g.vertex_at(parent, created)?, created))
}

/// A strong edge from each data-flag write to the first read (by another thread)
/// that comes after it.
fn flag_edges(trace: &Trace, g: &EventGraph) -> Vec<Edge> {
    let model = trace.model();
    let facts = trace.facts();
    let mut out = Vec::new();
    for addr in facts.flag_addresses() {
        let writes = facts.flag_writes(addr);
        let reads = facts.flag_reads(addr);
        let mut seen: BTreeMap<Tid, usize> = BTreeMap::new();
        for r in reads {
            let n = writes.partition_point(|w| w.ts <= r.ts);
            let Some(w) = n.checked_sub(1).and_then(|i| writes.get(i)) else {
                continue;
            };
            if w.tid == r.tid || seen.get(&r.tid) == Some(&n) {
                continue;
            }
            seen.insert(r.tid, n);
            let from = model
                .thread_index_at(w.tid, w.ts)
                .and_then(|t| g.vertex_at(t, w.ts));
            // A thread busy-waiting on the flag when it was written ends its loop with
            // this read, but a watchpoint traps after the read, often just past the
            // loop's last yield (its vertex's end): the edge goes to the loop it ended.
            let to = model.thread_index_at(r.tid, r.ts).and_then(|t| {
                g.vertex_at(t, w.ts)
                    .filter(|&v| g.vertex(v).is_some_and(|v| v.block == BlockType::Yielding))
                    .or_else(|| g.vertex_at(t, r.ts))
            });
            if let (Some(from), Some(to)) = (from, to)
                && from != to
            {
                out.push(Edge {
                    from,
                    to,
                    kind: EdgeKind::DataFlag,
                    strength: Strength::Strong,
                    ts: r.ts,
                });
            }
        }
    }
    out
}
