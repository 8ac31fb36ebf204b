//! The goroutine view: a model in which the goroutines of the followed Go programs
//! stand in for the threads that carried them.
//!
//! Go multiplexes goroutines on a few threads. A goroutine that waits on a channel, a
//! lock or the network parks, and its thread runs another one or sleeps in the
//! scheduler; whichever thread readies it later looks like the waker at thread level.
//! So in this view:
//!
//! - A goroutine is on a thread from the thread's `GoRun` of it until the thread parks
//!   it, runs another one, or blocks in the scheduler (a stack that runs on the
//!   thread's system stack, see [`SCHEDULER_FRAMES`]). While on the thread it has the
//!   thread's states: running, runnable, and blocked in system calls (a disk wait
//!   stays a disk wait, with its waker).
//! - Parked from its `GoPark` until its `GoReady`; the waker is the goroutine that
//!   readied it. A goroutine readied by the scheduler itself (the network poller's
//!   results, timers run by an idle thread) gets the wake-up that brought that thread
//!   back to the scheduler: the socket data that ended its `epoll_wait` (whose sender
//!   is then the goroutine that sent it) or the timer. Without one, a park for a sleep
//!   or a timer ends by the timer, one for network I/O by the network device, others
//!   by nobody known.
//! - Runnable from its `GoReady` (or from leaving its thread without parking) until
//!   its next `GoRun`.
//! - The threads of these programs are left out: what they do without a goroutine is
//!   the runtime's scheduling, never an answer. Every wake-up or data wake-up by such a
//!   thread, in any process, names the goroutine it carried then.
//!
//! A goroutine's name (its vertex's `comm`) is its start function; for the wrapper Go
//! compiles a `go f(x)` statement into (`pkg.caller.gowrapN`), the function it calls,
//! read from the goroutine's park stacks. The runtime's own goroutines (garbage
//! collection, finalizers) are left out, as its threads are.

use crate::goroutines::{GoEvent, GoEventKind, GoroutineInfo, NetWait};
use crate::model::Model;
use crate::segment::{Segment, SegmentState, StackRef, WakeInfo};
use crate::sockets::DataWake;
use crate::thread::{Thread, ThreadIdentity};
use crate::totals::ThreadTotals;
use causeway_format::{Cpu, SoftirqVec, StackId, Tables, TaskState, Tgid, Tid, Timestamp, Waker};
use rustc_hash::FxHashMap;

/// Thread ids of goroutines in the view start here (above Linux's largest pid,
/// 2^22), in the order the goroutines first appear.
pub const GOROUTINE_TID_BASE: u32 = 0x4000_0000;

/// Frames that only the system stack of a Go thread has: a thread blocked with one
/// of them on its stack is in the scheduler (idle, spinning for work, polling the
/// network, the monitor), not in a goroutine's system call.
pub const SCHEDULER_FRAMES: &[&str] = &[
    "runtime.schedule",
    "runtime.findRunnable",
    "runtime.stopm",
    "runtime.sysmon",
    "runtime.mstart",
    "runtime.mstart0",
    "runtime.mstart1",
    "runtime.templateThread",
];

/// How long after a thread stops running a goroutine its runtime code still acts for
/// that goroutine (1 ms: the scheduler's work between two goroutines takes
/// microseconds; a process's exit after its last goroutine ran is as quick).
const AFTER_CARRY: u64 = 1_000_000;

/// A goroutine: its process and runtime id.
type Key = (Tgid, u64);

/// A stretch of time a thread carried a goroutine.
#[derive(Clone, Copy, Debug)]
struct Carry {
    start: Timestamp,
    end: Timestamp,
    key: Key,
}

/// Everything the view is built from.
struct Lift<'m> {
    model: &'m Model,
    tables: &'m Tables,
    /// Processes whose threads carry goroutines.
    carriers: FxHashMap<Tgid, ()>,
    /// Goroutines in order of first appearance (index + base = view tid).
    keys: Vec<Key>,
    index: FxHashMap<Key, u32>,
    /// Carries per carrier thread (model thread index), by time.
    carries: FxHashMap<u32, Vec<Carry>>,
}

impl Model {
    /// True if the trace has goroutine events (a Go program was followed).
    pub fn has_goroutines(&self) -> bool {
        !self.go_events.is_empty()
    }

    /// The goroutine events, in time order.
    pub fn go_events(&self) -> &[GoEvent] {
        &self.go_events
    }

    /// In a goroutine view, the goroutine standing as thread `tid`.
    pub fn goroutine(&self, tid: Tid) -> Option<&GoroutineInfo> {
        self.goroutines
            .binary_search_by_key(&tid, |g| g.tid)
            .ok()
            .and_then(|i| self.goroutines.get(i))
    }

    /// The goroutine view of this model (see the module documentation); the model
    /// itself when it has no goroutine events.
    pub fn goroutine_view(&self, tables: &Tables) -> Model {
        self.goroutine_view_with_carries(tables).0
    }

    /// The goroutine view and which goroutine each carrier thread ran when, for
    /// handing the carriers' on-CPU samples to their goroutines.
    pub(crate) fn goroutine_view_with_carries(&self, tables: &Tables) -> (Model, Vec<Carried>) {
        if !self.has_goroutines() {
            return (self.clone(), Vec::new());
        }
        let lift = Lift::new(self, tables);
        let carried = lift.carried_list();
        (lift.build(), carried)
    }
}

/// A stretch of time an OS thread ran a goroutine of the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Carried {
    /// The OS thread.
    pub(crate) carrier: Tid,
    pub(crate) start: Timestamp,
    pub(crate) end: Timestamp,
    /// The goroutine's thread in the view.
    pub(crate) goroutine: Tid,
}

/// Whether a stack runs on a Go thread's system stack.
fn on_system_stack(tables: &Tables, stack: Option<StackRef>) -> bool {
    let Some(frames) = stack.and_then(|s| s.user).and_then(|u| tables.stack(u)) else {
        return false;
    };
    frames.frames.iter().any(|&f| {
        tables
            .frame(f)
            .is_some_and(|fr| SCHEDULER_FRAMES.contains(&tables.string(fr.symbol)))
    })
}

/// The symbol of a stack's innermost frame.
fn first_symbol(tables: &Tables, stack: StackId) -> Option<String> {
    let s = tables.stack(stack)?;
    let f = tables.frame(*s.frames.first()?)?;
    Some(tables.string(f.symbol).to_string())
}

/// The runtime's own goroutines (the garbage collector's workers, the sweeper, the
/// scavenger, finalizers): they wait on the runtime's conditions, never for the
/// program's work, so like the runtime's threads they are left out of the view.
/// `runtime.main` runs the program's `main.main` and stays.
fn is_runtime_goroutine(name: &str) -> bool {
    name.starts_with("runtime.") && name != "runtime.main"
}

/// A `go f(x)` wrapper's name: `pkg.caller.gowrapN`.
fn is_go_wrapper(name: &str) -> bool {
    name.rsplit_once(".gowrap")
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The function a wrapper calls: the frame just inside it on a park stack.
fn wrapped_function(tables: &Tables, wrapper: &str, stack: Option<StackRef>) -> Option<String> {
    let s = tables.stack(stack?.user?)?;
    let names: Vec<&str> = s
        .frames
        .iter()
        .filter_map(|&f| tables.frame(f).map(|fr| tables.string(fr.symbol)))
        .collect();
    let at = names.iter().position(|n| *n == wrapper)?;
    names.get(at.checked_sub(1)?).map(|n| n.to_string())
}

impl<'m> Lift<'m> {
    fn new(model: &'m Model, tables: &'m Tables) -> Lift<'m> {
        let mut lift = Lift {
            model,
            tables,
            carriers: FxHashMap::default(),
            keys: Vec::new(),
            index: FxHashMap::default(),
            carries: FxHashMap::default(),
        };
        lift.find_carries();
        lift
    }

    fn tgid_of(&self, tid: Tid, ts: Timestamp) -> Option<(u32, Tgid)> {
        let i = self.model.thread_index_at(tid, ts)?;
        Some((i, self.model.thread_by_index(i)?.tgid?))
    }

    fn key_index(&mut self, key: Key) -> u32 {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.keys.len() as u32;
        self.keys.push(key);
        self.index.insert(key, i);
        i
    }

    fn view_tid(&self, key: Key) -> Option<Tid> {
        self.index.get(&key).map(|&i| Tid(GOROUTINE_TID_BASE + i))
    }

    /// Which thread carried which goroutine when, from the events; then cut where a
    /// carrier blocks in the scheduler.
    fn find_carries(&mut self) {
        let model = self.model;
        // Open carry per thread index: (goroutine, since).
        let mut open: FxHashMap<u32, (Key, Timestamp)> = FxHashMap::default();
        // Thread index per goroutine on a thread now.
        let mut on: FxHashMap<Key, u32> = FxHashMap::default();
        let mut last_event: FxHashMap<u32, Timestamp> = FxHashMap::default();
        for ev in &model.go_events {
            let Some((ti, tgid)) = self.tgid_of(ev.tid, ev.ts) else {
                continue;
            };
            self.carriers.insert(tgid, ());
            let key = (tgid, ev.kind.goid());
            self.key_index(key);
            if let GoEventKind::Ready { by, .. } = ev.kind
                && by != 0
            {
                self.key_index((tgid, by));
            }
            match ev.kind {
                GoEventKind::Run { .. } => {
                    if let Some((k, since)) = open.remove(&ti) {
                        on.remove(&k);
                        self.close(ti, k, since, ev.ts);
                    }
                    if let Some(t2) = on.remove(&key)
                        && let Some((k, since)) = open.remove(&t2)
                    {
                        self.close(t2, k, since, ev.ts);
                    }
                    open.insert(ti, (key, ev.ts));
                    on.insert(key, ti);
                }
                GoEventKind::Park { .. } => match open.get(&ti) {
                    Some(&(k, since)) if k == key => {
                        open.remove(&ti);
                        on.remove(&k);
                        self.close(ti, k, since, ev.ts);
                    }
                    // Running since before the recording (or the probes) began: it
                    // was on this thread since the thread's last goroutine event.
                    None => {
                        let since = last_event.get(&ti).copied().unwrap_or_else(|| {
                            model
                                .thread_by_index(ti)
                                .and_then(|t| t.span())
                                .map_or(ev.ts, |s| s.start)
                        });
                        self.close(ti, key, since, ev.ts);
                    }
                    Some(_) => {}
                },
                GoEventKind::Ready { .. } => {}
            }
            last_event.insert(ti, ev.ts);
        }
        for (ti, (k, since)) in open {
            let end = model
                .thread_by_index(ti)
                .and_then(|t| t.span())
                .map_or(since, |s| s.end);
            self.close(ti, k, since, end);
        }
        for list in self.carries.values_mut() {
            list.sort_by_key(|c| c.start);
        }
    }

    /// Every carry, as OS thread and view thread.
    fn carried_list(&self) -> Vec<Carried> {
        let mut out = Vec::new();
        for (&ti, list) in &self.carries {
            let Some(t) = self.model.thread_by_index(ti) else {
                continue;
            };
            out.extend(list.iter().filter_map(|c| {
                Some(Carried {
                    carrier: t.tid,
                    start: c.start,
                    end: c.end,
                    goroutine: self.view_tid(c.key)?,
                })
            }));
        }
        out.sort_by_key(|c| (c.carrier, c.start));
        out
    }

    /// Record a carry, ended early where the thread blocks in the scheduler.
    fn close(&mut self, ti: u32, key: Key, start: Timestamp, mut end: Timestamp) {
        if let Some(t) = self.model.thread_by_index(ti) {
            for s in t.segments_overlapping(start, end) {
                if let SegmentState::Blocked {
                    switch_out_stack, ..
                } = s.state
                    && s.start >= start
                    && on_system_stack(self.tables, switch_out_stack)
                {
                    end = s.start;
                    break;
                }
            }
        }
        if end > start {
            self.carries
                .entry(ti)
                .or_default()
                .push(Carry { start, end, key });
        }
    }

    /// The goroutine thread `ti` carried at `ts` (a carry ending exactly at `ts`
    /// counts: a waker that parks right after the wake-up). Between two goroutines,
    /// the one it ran last, within [`AFTER_CARRY`]: the runtime finishing that
    /// goroutine's business on the thread (its exit, readying what it unblocked).
    fn carried(&self, ti: u32, ts: Timestamp) -> Option<Key> {
        let list = self.carries.get(&ti)?;
        let i = list.partition_point(|c| c.start <= ts);
        let c = list.get(i.checked_sub(1)?)?;
        (ts.0 <= c.end.0 + AFTER_CARRY).then_some(c.key)
    }

    /// For a wake-up by carrier thread `ti` as it exits (its timeline ends within
    /// [`AFTER_CARRY`] of `ts`: a parent woken from `waitid` by the process's end),
    /// the goroutine its process ran last: the one that ended the program (returned
    /// from `main.main` or called `os.Exit`), since the other threads only die with it.
    fn exit_cause(&self, ti: u32, ts: Timestamp) -> Option<Key> {
        let t = self.model.thread_by_index(ti)?;
        let end = t.segments.last()?.end;
        if end < ts || end.0 - ts.0 > AFTER_CARRY {
            return None;
        }
        let tgid = t.tgid?;
        self.carries
            .iter()
            .filter(|(i, _)| self.model.thread_by_index(**i).and_then(|x| x.tgid) == Some(tgid))
            .flat_map(|(_, l)| l.iter().filter(|c| c.start <= ts))
            .max_by_key(|c| (c.end, c.start))
            .map(|c| c.key)
    }

    fn is_carrier(&self, tid: Tid, ts: Timestamp) -> Option<u32> {
        let (ti, tgid) = self.tgid_of(tid, ts)?;
        self.carriers.contains_key(&tgid).then_some(ti)
    }

    /// A waker in the view: a carrier thread becomes the goroutine it carried.
    fn translate(&self, w: Waker, ts: Timestamp) -> Waker {
        match w {
            Waker::Thread { tid } => match self.is_carrier(tid, ts) {
                Some(ti) => match self
                    .carried(ti, ts)
                    .or_else(|| self.exit_cause(ti, ts))
                    .and_then(|k| self.view_tid(k))
                {
                    Some(g) => Waker::Thread { tid: g },
                    None => Waker::Unknown,
                },
                None => w,
            },
            other => other,
        }
    }

    /// A data wake-up in the view (the sender translated), at segment `segment`.
    fn translate_data(&self, d: &DataWake, segment: u32, wake_ts: Timestamp) -> Option<DataWake> {
        let sender = match self.translate(Waker::Thread { tid: d.sender }, d.link_time(wake_ts)) {
            Waker::Thread { tid } => tid,
            _ => return None,
        };
        Some(DataWake {
            segment,
            sender,
            ..*d
        })
    }

    /// Why a goroutine that the scheduler readied at `ts` on thread `ti` woke: the
    /// wake-up that brought that thread back from its last wait while it carried no
    /// goroutine, with its data wake-up if it had one.
    fn scheduler_cause(&self, ti: u32, ts: Timestamp) -> Option<(WakeInfo, Option<DataWake>)> {
        let t = self.model.thread_by_index(ti)?;
        let i = t.segments.partition_point(|s| s.start <= ts);
        let (j, seg) = t.segments[..i]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, s)| s.state.is_blocked())?;
        let SegmentState::Blocked { waker: Some(w), .. } = seg.state else {
            return None;
        };
        // A goroutine run in between means the wake-up was for other work.
        if self
            .carries
            .get(&ti)
            .is_some_and(|l| l.iter().any(|c| c.start >= seg.end && c.start < ts))
        {
            return None;
        }
        let data = t.data_wake(j as u32).copied();
        Some((w, data))
    }

    fn build(self) -> Model {
        let m = self.model;
        let mut threads: Vec<Thread> = Vec::new();
        for t in &m.threads {
            let carrier = t.tgid.is_some_and(|g| self.carriers.contains_key(&g));
            if !carrier {
                threads.push(self.translated_thread(t));
            } else if let Some(exec) = t.tgid.and_then(|g| self.replaced_at(g)) {
                // A Go program that exec'd another program (a container runtime's
                // `runc init` becomes the container's process): its threads are the
                // new program's from the exec on, as OS threads.
                let mut kept = self.translated_thread(t);
                kept.segments.retain(|s| s.start >= exec);
                let first = t.segments.len() - kept.segments.len();
                kept.data_wakes.retain(|d| d.segment as usize >= first);
                for d in &mut kept.data_wakes {
                    d.segment -= first as u32;
                }
                if !kept.segments.is_empty() {
                    threads.push(kept);
                }
            }
        }
        let mut infos = Vec::with_capacity(self.keys.len());
        for (i, &key) in self.keys.iter().enumerate() {
            let tid = Tid(GOROUTINE_TID_BASE + i as u32);
            let (thread, info) = self.goroutine_thread(key, tid);
            infos.push(info);
            if !thread.segments.is_empty() && !is_runtime_goroutine(&thread.comm) {
                threads.push(thread);
            }
        }
        threads.sort_by_key(|t| (t.tid, t.span().map(|s| s.start), t.created));
        Model {
            span: m.span,
            threads,
            processes: m.processes.clone(),
            cpus: m.cpus.clone(),
            interrupts: m.interrupts.clone(),
            block_requests: self.block_requests(),
            losses: m.losses.clone(),
            stats: m.stats.clone(),
            wake_links: Default::default(),
            go_events: Vec::new(),
            goroutines: infos,
        }
    }

    /// When process `g` exec'd a new image after its last goroutine event: from then
    /// on it runs another program, not the followed Go one.
    fn replaced_at(&self, g: Tgid) -> Option<Timestamp> {
        let p = self.model.processes.iter().find(|p| p.tgid == g)?;
        let exec = p.images.last().filter(|_| p.images.len() > 1)?.since;
        let last_go = self
            .model
            .go_events
            .iter()
            .filter(|e| self.tgid_of(e.tid, e.ts).is_some_and(|(_, t)| t == g))
            .map(|e| e.ts)
            .max()?;
        (exec > last_go).then_some(exec)
    }

    /// Block requests, issued by the goroutine their carrier thread ran (the device
    /// waits for that goroutine when it is idle).
    fn block_requests(&self) -> Vec<crate::irq::BlockRequest> {
        let mut out = self.model.block_requests.clone();
        for q in &mut out {
            if let Waker::Thread { tid } =
                self.translate(Waker::Thread { tid: q.issue_tid }, q.issue)
            {
                q.issue_tid = tid;
            }
        }
        out
    }

    /// A thread outside the Go programs, with its wakers translated.
    fn translated_thread(&self, t: &Thread) -> Thread {
        let mut t = t.clone();
        for s in &mut t.segments {
            if let SegmentState::Blocked { waker: Some(w), .. } = &mut s.state {
                w.waker = self.translate(w.waker, w.ts);
            }
        }
        let ends: Vec<Timestamp> = t.segments.iter().map(|s| s.end).collect();
        t.data_wakes = t
            .data_wakes
            .iter()
            .filter_map(|d| {
                let end = *ends.get(d.segment as usize)?;
                self.translate_data(d, d.segment, end)
            })
            .collect();
        t
    }

    /// The timeline of one goroutine.
    fn goroutine_thread(&self, key: Key, tid: Tid) -> (Thread, GoroutineInfo) {
        let m = self.model;
        let mut tl = Timeline::default();
        // Carries of this goroutine, by time, with their thread.
        let mut pieces: Vec<(u32, Carry)> = self
            .carries
            .iter()
            .flat_map(|(&ti, l)| l.iter().filter(|c| c.key == key).map(move |c| (ti, *c)))
            .collect();
        pieces.sort_by_key(|(_, c)| c.start);
        let events: Vec<&GoEvent> = m
            .go_events
            .iter()
            .filter(|e| {
                e.kind.goid() == key.1 && self.tgid_of(e.tid, e.ts).is_some_and(|(_, g)| g == key.0)
            })
            .collect();
        let mut start: Option<StackId> = None;
        let mut parent = 0;
        let mut park_stack: Option<StackRef> = None;
        for e in &events {
            match e.kind {
                GoEventKind::Run {
                    parent: p,
                    start: s,
                    ..
                } => {
                    start = start.or(s);
                    if p != 0 {
                        parent = p;
                    }
                }
                GoEventKind::Park { stack, .. } => park_stack = park_stack.or(stack),
                GoEventKind::Ready { .. } => {}
            }
        }
        // Before its first carry: readied (runnable) since the first event, if any.
        let first_carry = pieces.first().map(|(_, c)| c.start);
        if let Some(first) = events.first()
            && let Some(fc) = first_carry
            && first.ts < fc
            && matches!(first.kind, GoEventKind::Ready { .. })
        {
            tl.runnable(first.ts, fc);
        }
        for (n, &(ti, c)) in pieces.iter().enumerate() {
            self.copy_carried(&mut tl, ti, c);
            let next = pieces.get(n + 1).map(|(nti, nc)| (*nti, nc.start));
            let park = events
                .iter()
                .find(|e| e.ts == c.end && matches!(e.kind, GoEventKind::Park { .. }));
            let Some((next_ti, next_start)) = next else {
                // Its last carry: parked for good (the wait did not end in the trace),
                // or it ended (goroutines are not seen again after they exit).
                if let Some(p) = park
                    && let Some(end) = m.span.map(|s| s.end)
                    && end > c.end
                {
                    tl.parked(c.end, end, None, park_info(self.tables, p), false);
                }
                continue;
            };
            match park {
                Some(p) => {
                    let ready = events.iter().find(|e| {
                        e.ts >= c.end
                            && e.ts <= next_start
                            && matches!(e.kind, GoEventKind::Ready { .. })
                    });
                    let (until, wake, data) = match ready {
                        Some(r) => {
                            let (w, d) = self.ready_waker(key, r, p);
                            (r.ts, w, d)
                        }
                        None => {
                            let (w, d) = self.unreadied_waker(next_ti, next_start, p);
                            (next_start, w, d)
                        }
                    };
                    let seg = tl.parked(c.end, until, Some(wake), park_info(self.tables, p), true);
                    if let Some(mut d) = data {
                        d.segment = seg;
                        tl.data_wakes.push(d);
                    }
                    tl.runnable(until, next_start);
                }
                None => tl.runnable(c.end, next_start),
            }
        }
        let name = start.and_then(|s| first_symbol(self.tables, s));
        let comm = match &name {
            Some(n) if is_go_wrapper(n) => {
                wrapped_function(self.tables, n, park_stack).unwrap_or_else(|| n.clone())
            }
            Some(n) => n.clone(),
            None => format!("goroutine {}", key.1),
        };
        // The linker escapes a dot in an import path's last element (`nats%2ego`).
        let comm = comm.replace("%2e", ".");
        let parent_tid = (parent != 0)
            .then(|| self.view_tid((key.0, parent)))
            .flatten();
        let thread = tl.into_thread(tid, key.0, comm, parent_tid);
        let info = GoroutineInfo {
            tid,
            tgid: key.0,
            goid: key.1,
            parent,
            start: name,
        };
        (thread, info)
    }

    /// The carried thread's segments within the carry, wakers translated.
    fn copy_carried(&self, tl: &mut Timeline, ti: u32, c: Carry) {
        let Some(t) = self.model.thread_by_index(ti) else {
            return;
        };
        let first = t.segments.partition_point(|s| s.end <= c.start);
        for (j, s) in t.segments.iter().enumerate().skip(first) {
            if s.start >= c.end {
                break;
            }
            let mut seg = *s;
            if seg.start < c.start {
                seg.start = c.start;
                seg.start_known = true;
            }
            if seg.end > c.end {
                seg.end = c.end;
                seg.end_known = true;
                // A wait cut short by the end of the carry did not end by its waker.
                if let SegmentState::Blocked { waker, .. } = &mut seg.state {
                    *waker = None;
                }
            }
            if let SegmentState::Blocked { waker: Some(w), .. } = &mut seg.state {
                w.waker = self.translate(w.waker, w.ts);
            }
            let at = tl.push(seg);
            if s.end <= c.end
                && let Some(d) = t.data_wake(j as u32)
                && let Some(d) = self.translate_data(d, at, s.end)
            {
                tl.data_wakes.push(d);
            }
        }
    }

    /// The waker of park `p` ended by `GoReady` `r`: the goroutine that readied it;
    /// else (the scheduler readied it) the send that carried the data it waited for,
    /// or the wake-up that brought the readying thread back.
    fn ready_waker(&self, key: Key, r: &GoEvent, p: &GoEvent) -> (WakeInfo, Option<DataWake>) {
        let Some((ti, _)) = self.tgid_of(r.tid, r.ts) else {
            let reason = park_info(self.tables, p).0;
            return (wake(r.ts, Cpu(0), fallback_waker(reason)), None);
        };
        let cpu = running_cpu(self.model, ti, r.ts);
        if let GoEventKind::Ready { by, .. } = r.kind
            && by != 0
            && let Some(g) = self.view_tid((key.0, by))
        {
            return (wake(r.ts, cpu, Waker::Thread { tid: g }), None);
        }
        self.unreadied_waker(ti, r.ts, p)
    }

    /// The waker of park `p` that the scheduler ended at `ts` on thread `ti` (with or
    /// without a `GoReady`).
    fn unreadied_waker(&self, ti: u32, ts: Timestamp, p: &GoEvent) -> (WakeInfo, Option<DataWake>) {
        if let GoEventKind::Park {
            net:
                Some(NetWait {
                    flow,
                    from: Some(f),
                    ..
                }),
            ..
        } = p.kind
        {
            let cpu = running_cpu(self.model, ti, ts);
            let recorded = Waker::Softirq {
                vec: SoftirqVec::NET_RX,
            };
            if let Waker::Thread { tid } = self.translate(Waker::Thread { tid: f.tid }, f.sent) {
                let data = DataWake {
                    segment: 0,
                    flow,
                    sender: tid,
                    sent: f.sent,
                    bytes: f.bytes,
                    host: Tid(0),
                    recorded_waker: recorded,
                };
                return (wake(ts, cpu, Waker::Thread { tid }), Some(data));
            }
        }
        self.inferred_waker(ti, ts, park_info(self.tables, p).0)
    }

    /// The waker of a goroutine the scheduler readied at `ts` on thread `ti`.
    fn inferred_waker(&self, ti: u32, ts: Timestamp, reason: &str) -> (WakeInfo, Option<DataWake>) {
        let cpu = running_cpu(self.model, ti, ts);
        match self.scheduler_cause(ti, ts) {
            Some((w, data)) => {
                let waker = self.translate(w.waker, w.ts);
                let data = data.and_then(|d| self.translate_data(&d, 0, w.ts));
                let info = WakeInfo {
                    ts,
                    cpu,
                    target_cpu: cpu,
                    waker,
                    waker_stack: w.waker_stack,
                    waker_stack_weight: w.waker_stack_weight,
                };
                (info, data)
            }
            None => (wake(ts, cpu, fallback_waker(reason)), None),
        }
    }
}

/// What a park event says: its reason's name and stack.
fn park_info<'t>(tables: &'t Tables, e: &GoEvent) -> (&'t str, Option<StackRef>) {
    match e.kind {
        GoEventKind::Park { reason, stack, .. } => (tables.string(reason), stack),
        _ => ("", None),
    }
}

/// The waker of a park nobody is seen to end, by its reason: a sleep or a timer ends
/// by the timer, network I/O by the network device.
fn fallback_waker(reason: &str) -> Waker {
    let r = reason.to_ascii_lowercase();
    if r.contains("sleep") || r.contains("timer") {
        Waker::Softirq {
            vec: SoftirqVec::TIMER,
        }
    } else if r.contains("io wait") {
        Waker::Softirq {
            vec: SoftirqVec::NET_RX,
        }
    } else {
        Waker::Unknown
    }
}

fn wake(ts: Timestamp, cpu: Cpu, waker: Waker) -> WakeInfo {
    WakeInfo {
        ts,
        cpu,
        target_cpu: cpu,
        waker,
        waker_stack: None,
        waker_stack_weight: 1,
    }
}

/// The CPU thread `ti` ran on at `ts` (0 if not running then).
fn running_cpu(m: &Model, ti: u32, ts: Timestamp) -> Cpu {
    m.thread_by_index(ti)
        .and_then(|t| t.segment_at(ts))
        .and_then(|s| match s.state {
            SegmentState::Running { cpu } => Some(cpu),
            _ => None,
        })
        .unwrap_or(Cpu(0))
}

/// A goroutine's timeline as it is assembled, in time order.
#[derive(Default)]
struct Timeline {
    segments: Vec<Segment>,
    data_wakes: Vec<DataWake>,
}

impl Timeline {
    /// Append a segment (clipped to start where the last one ends); its index.
    fn push(&mut self, mut s: Segment) -> u32 {
        if let Some(last) = self.segments.last() {
            if s.end <= last.end {
                return self.segments.len().saturating_sub(1) as u32;
            }
            if s.start < last.end {
                s.start = last.end;
            }
        }
        self.segments.push(s);
        (self.segments.len() - 1) as u32
    }

    fn runnable(&mut self, start: Timestamp, end: Timestamp) {
        if end > start {
            self.push(Segment {
                start,
                end,
                start_known: true,
                end_known: true,
                state: SegmentState::Runnable {
                    cpu: None,
                    preempted: false,
                },
            });
        }
    }

    fn parked(
        &mut self,
        start: Timestamp,
        end: Timestamp,
        waker: Option<WakeInfo>,
        park: (&str, Option<StackRef>),
        end_known: bool,
    ) -> u32 {
        self.push(Segment {
            start,
            end,
            start_known: true,
            end_known,
            state: SegmentState::Blocked {
                state: Some(TaskState::INTERRUPTIBLE),
                waker,
                switch_out_stack: park.1,
                syscall: None,
            },
        })
    }

    fn into_thread(self, tid: Tid, tgid: Tgid, comm: String, parent_tid: Option<Tid>) -> Thread {
        let mut totals = ThreadTotals::default();
        for s in &self.segments {
            totals.add_segment(s);
            if matches!(s.state, SegmentState::Blocked { waker: Some(_), .. }) {
                totals.wakeups += 1;
            }
        }
        let since = self.segments.first().map_or(Timestamp(0), |s| s.start);
        totals.first_seen = since;
        totals.last_seen = self.segments.last().map_or(since, |s| s.end);
        Thread {
            tid,
            tgid: Some(tgid),
            comm: comm.clone(),
            identity: vec![ThreadIdentity {
                since,
                tgid: Some(tgid),
                comm,
            }],
            created: None,
            parent_tid,
            exited: None,
            segments: self.segments,
            annotations: Vec::new(),
            totals,
            data_wakes: self.data_wakes,
        }
    }
}
