//! Algorithm 1 of Argus (§3.3): Diagnose and InteractiveSlice, over an
//! [`EventGraph`].
//!
//! Decisions the paper leaves open, made here:
//! - A slice follows the one strong incoming edge; with several strong edges it asks
//!   (weak ones are offered after them); with only weak edges it asks. The
//!   heuristic's suggestion is the most recent edge (Table 4).
//! - A slice ends at an edge from the thread's own timer: the work began when the
//!   thread armed it (a sleep or a timeout), which is as far back as the cause goes.
//! - A LongWait with no similar earlier wait whose wake-up arrived (every such wait
//!   timed out, as in a circular wait broken by a timeout) compares the threads it
//!   exchanged wake-ups with just before (its peers) instead of a normal path, and
//!   says so: that comparison is weak.
//! - Another thread is the culprit when its vertex at the time is itself a stall and
//!   covers at least `overlap_percent` of the wait.
//! - A culprit whose thread is already being diagnosed up the recursion closes a
//!   circular wait; the circle is reported with the wait that ended by a timer or an
//!   interrupt rather than by a member (what breaks it).

use crate::graph::{BlockType, EdgeKind, EventGraph, Strength, VertexId, VertexKind, WokenBy};
use crate::options::Options;
use crate::oracle::{Candidate, Choice, DecidedBy, Oracle, Question, QuestionKind};
use crate::result::{
    Case, CircularWait, Compared, Decision, Diagnosis, Finding, HopRule, Slice, SliceEnd, SliceStep,
};
use crate::signature::Signature;
use std::collections::BTreeSet;

/// Peer threads looked at, at most, for a wait with no similar normal wait.
const PEER_WINDOW: usize = 64;

/// A vertex of another thread shorter than this share (percent) of a wait is not
/// compared with it.
const MIN_PART_PERCENT: u32 = 10;

/// Algorithm 1's case of a vertex.
pub fn case_of(g: &EventGraph, v: VertexId, opts: &Options) -> Case {
    let Some(x) = g.vertex(v) else {
        return Case::Normal;
    };
    let long = x.duration() >= opts.long;
    match (x.block, long) {
        (BlockType::Yielding, _) => Case::RepeatedYield,
        (BlockType::Stopped, true) => Case::Stopped,
        (BlockType::Wait, true) => Case::LongWait,
        (BlockType::Running, true) => Case::LongRunning,
        (BlockType::Runnable, true) => Case::LongRunnable,
        _ => Case::Normal,
    }
}

/// Run Algorithm 1 from `problem`, asking `oracle` where the graph is ambiguous.
pub fn diagnose(
    g: &EventGraph,
    problem: VertexId,
    opts: &Options,
    oracle: &mut dyn Oracle,
) -> Diagnosis {
    let mut run = Run {
        g,
        opts,
        oracle,
        out: Diagnosis {
            problem,
            findings: Vec::new(),
            circles: Vec::new(),
            needs_data_flag: None,
            decisions: Vec::new(),
            counts: g.counts(),
            chain: Vec::new(),
        },
        path: Vec::new(),
        halted: false,
    };
    run.diagnose(problem, 0, None);
    let mut out = run.out;
    out.chain = crate::chain::culprit_chain(g, &out);
    out
}

/// State of one diagnosis.
struct Run<'a> {
    g: &'a EventGraph,
    opts: &'a Options,
    oracle: &'a mut dyn Oracle,
    out: Diagnosis,
    /// Vertices under diagnosis up the recursion (for circular waits).
    path: Vec<VertexId>,
    /// Algorithm 1 line 9: stop everything (a data flag must be traced first).
    halted: bool,
}

impl Run<'_> {
    fn ask(&mut self, q: Question) -> Choice {
        let (choice, by) = self.oracle.ask(&q);
        self.out.decisions.push(Decision {
            question: q,
            choice,
            by,
        });
        choice
    }

    /// Diagnose(vertex): record the finding, then go into culprits.
    fn diagnose(&mut self, v: VertexId, depth: u32, culprit_of: Option<VertexId>) {
        if self.halted {
            return;
        }
        let case = case_of(self.g, v, self.opts);
        let kind = self.g.vertex(v).map(|x| x.kind);
        let idx = self.out.findings.len();
        self.out.findings.push(Finding {
            vertex: v,
            case,
            depth,
            culprit_of,
            similar: None,
            slice: None,
            compared: Vec::new(),
            slept: false,
            flag_writer: None,
            stopped_by: None,
            rule: None,
        });
        let waitlike = match case {
            Case::LongRunning | Case::LongRunnable => false,
            Case::RepeatedYield => {
                let Some(writer) = flag_writer(self.g, v) else {
                    self.out.needs_data_flag = Some(v);
                    self.halted = true;
                    return;
                };
                if let Some(f) = self.out.findings.get_mut(idx) {
                    f.flag_writer = Some(writer);
                }
                true
            }
            // A stopped thread waits for whoever stopped it and continues it: slice back
            // along the stop signal from its sender when the trace recorded it, else
            // along the wake-up that continued it (the sender of SIGCONT).
            Case::Stopped => {
                let stop = stop_edge(self.g, v);
                let s = self.slice(v);
                if let Some(f) = self.out.findings.get_mut(idx) {
                    f.stopped_by = stop;
                    f.slice = Some(s);
                }
                self.path.push(v);
                self.stopped(v, stop, idx, depth);
                self.path.pop();
                return;
            }
            // A thread that chose to sleep is the end of the chain.
            Case::LongWait if self.g.vertex(v).is_some_and(is_sleep) => {
                if let Some(f) = self.out.findings.get_mut(idx) {
                    f.slept = true;
                }
                return;
            }
            Case::LongWait => true,
            // A vertex picked by time may be short: treat it by what it is.
            Case::Normal => kind == Some(VertexKind::Wait),
        };
        if !waitlike {
            let s = self.slice(v);
            if let Some(f) = self.out.findings.get_mut(idx) {
                f.slice = Some(s);
            }
            return;
        }
        self.path.push(v);
        self.long_wait(v, idx, depth);
        self.path.pop();
    }

    /// A stopped thread: the culprit is what its stop signal's sender did while it was
    /// stopped (a script's sleep between SIGSTOP and SIGCONT), else what the thread
    /// that continued it did.
    fn stopped(&mut self, v: VertexId, stop: Option<crate::graph::EdgeId>, idx: usize, depth: u32) {
        let g = self.g;
        let sender = stop
            .and_then(|e| g.edge(e))
            .and_then(|e| g.vertex(e.from))
            .map(|w| w.thread)
            .filter(|&t| g.vertex(v).is_some_and(|x| x.thread != t));
        let waker = actual_waker(g, v);
        let rules = [(sender, HopRule::StopSender), (waker, HopRule::Waker)];
        for (t, rule) in rules {
            let Some(t) = t else { continue };
            if self.follow(v, &[(t, true)], Some(t), rule, idx, depth) {
                return;
            }
        }
    }

    /// LongWait (lines 12-21), with the actual waker first: a wait that ended by a
    /// known thread's wake-up (or data it sent) was delayed by what that thread did
    /// during it (why it woke late). Argus's normal path (the
    /// similar earlier wait's wake-up path) is for waits whose waker is unknown or that
    /// never ended: following it for a wait whose waker is known names the threads
    /// that usually wake it, not the one that did (in a lock convoy, the next waiter
    /// in the queue instead of the holder that released them all).
    fn long_wait(&mut self, v: VertexId, idx: usize, depth: u32) {
        let g = self.g;
        let Some(x) = g.vertex(v) else { return };
        let writer = self
            .out
            .findings
            .get(idx)
            .and_then(|f| f.flag_writer)
            .and_then(|w| g.vertex(w));
        // A yield loop's cause is proved by the data flag: its writer's thread is
        // compared first, as on a normal path; the loop's other peers after it.
        if let Some(w) = writer {
            let mut threads = vec![(w.thread, true)];
            threads.extend(
                peers(g, v)
                    .into_iter()
                    .filter(|&t| t != w.thread)
                    .map(|t| (t, false)),
            );
            self.follow(v, &threads, None, HopRule::FlagWriter, idx, depth);
            return;
        }
        let waker = actual_waker(g, v);
        if let Some(w) = waker
            && self.follow(v, &[(w, true)], Some(w), HopRule::Waker, idx, depth)
        {
            return;
        }
        // A wait a device ended (its completion interrupt) waited on the device. The
        // similar-wait and peer rules would name threads that merely ran nearby, and
        // which of them a run picked changed from recording to recording; the chain
        // ends at the device instead (the verdict says so).
        if x.woken_by.is_some_and(WokenBy::is_device) {
            return;
        }
        if let Some(s) = find_similar(g, v, self.opts) {
            let slice = self.slice(s);
            let mut threads: Vec<(u32, bool)> = Vec::new();
            for st in &slice.steps {
                if let Some(t) = g.vertex(st.vertex).map(|y| y.thread)
                    && t != x.thread
                    && Some(t) != waker
                    && !threads.iter().any(|(u, _)| *u == t)
                {
                    threads.push((t, true));
                }
            }
            if let Some(f) = self.out.findings.get_mut(idx) {
                f.similar = Some(s);
                f.slice = Some(slice);
            }
            self.follow(v, &threads, None, HopRule::NormalPath, idx, depth);
            return;
        }
        let threads: Vec<(u32, bool)> = peers(g, v)
            .into_iter()
            .filter(|&t| Some(t) != waker)
            .map(|t| (t, false))
            .collect();
        self.follow(v, &threads, None, HopRule::Peers, idx, depth);
    }

    /// Compare `threads` with wait `v` and go into the culprits found; `proven`: the
    /// thread known to have ended (or caused) it, whose stalls are culprits without the
    /// overlap test (the wake-up proves it related), in time order. True if any
    /// culprit was found; the rule is recorded on the finding then.
    fn follow(
        &mut self,
        v: VertexId,
        threads: &[(u32, bool)],
        proven: Option<u32>,
        rule: HopRule,
        idx: usize,
        depth: u32,
    ) -> bool {
        let mut found = false;
        for &(t, normal) in threads {
            if self.halted {
                return found;
            }
            let culprits = self.compare(v, t, normal, proven == Some(t), idx);
            if culprits.is_empty() {
                continue;
            }
            if !found {
                if let Some(f) = self.out.findings.get_mut(idx) {
                    f.rule = Some(rule);
                }
                found = true;
            }
            for vt in culprits {
                self.culprit(v, vt, t, depth);
            }
        }
        found
    }

    /// Line 16-17 for one thread: its vertices during the wait. It is stalled too when
    /// its stalls (each covering at least a tenth of the wait) together cover
    /// `overlap_percent` of it; then each of those stalls is a culprit, in time order (a
    /// thread may first wait and then starve for a CPU, and both delayed the wait).
    /// `proven`: the thread is known to have ended the wait; its stalls need not cover
    /// `overlap_percent` together.
    fn compare(
        &mut self,
        v: VertexId,
        t: u32,
        normal: bool,
        proven: bool,
        idx: usize,
    ) -> Vec<VertexId> {
        let g = self.g;
        let Some(x) = g.vertex(v) else {
            return Vec::new();
        };
        let dur = x.duration().0.max(1);
        let pct = |o: u64| u32::try_from(o.saturating_mul(100) / dur).unwrap_or(u32::MAX);
        let mut stalls = Vec::new();
        let mut covered = 0u64;
        for (vt, overlap) in g.overlapping(t, x.span) {
            let case = case_of(g, vt, self.opts);
            let p = pct(overlap.0);
            if p < MIN_PART_PERCENT {
                continue;
            }
            if let Some(f) = self.out.findings.get_mut(idx) {
                f.compared.push(Compared {
                    thread: t,
                    vertex: vt,
                    case,
                    overlap_percent: p,
                    from_normal_path: normal,
                });
            }
            if case.is_stall() {
                stalls.push(vt);
                covered += overlap.0;
            }
        }
        if !proven && pct(covered) < self.opts.overlap_percent {
            return Vec::new();
        }
        stalls
    }

    /// A stalled thread found while comparing: a circle, or recurse into it.
    fn culprit(&mut self, v: VertexId, vt: VertexId, t: u32, depth: u32) {
        let g = self.g;
        if let Some(k) = self
            .path
            .iter()
            .position(|&p| g.vertex(p).is_some_and(|y| y.thread == t))
        {
            let mut members: Vec<VertexId> = self.path.get(k..).unwrap_or(&[]).to_vec();
            if !members.contains(&vt) {
                members.push(vt);
            }
            if closes_circle(g, &members) {
                self.add_circle(members);
            }
            return;
        }
        if self.out.findings.iter().any(|f| f.vertex == vt) {
            return;
        }
        if depth as usize + 1 > self.opts.max_depth {
            return;
        }
        let q = Question {
            kind: QuestionKind::Proceed,
            at: v,
            candidates: vec![Candidate {
                vertex: vt,
                edge: None,
            }],
            suggested: 0,
        };
        if let Choice::Take { .. } = self.ask(q) {
            self.diagnose(vt, depth + 1, Some(v));
        }
    }

    fn add_circle(&mut self, members: Vec<VertexId>) {
        let set: BTreeSet<VertexId> = members.iter().copied().collect();
        if self
            .out
            .circles
            .iter()
            .any(|c| c.vertices.iter().copied().collect::<BTreeSet<_>>() == set)
        {
            return;
        }
        let threads: BTreeSet<u32> = members
            .iter()
            .filter_map(|&m| self.g.vertex(m).map(|y| y.thread))
            .collect();
        let broken_by = members.iter().find_map(|&m| {
            let y = self.g.vertex(m)?;
            match y.woken_by? {
                WokenBy::Thread { .. } => {
                    let from_member = self.g.incoming(m).any(|(_, e)| {
                        e.kind == EdgeKind::Wakeup
                            && self
                                .g
                                .vertex(e.from)
                                .is_some_and(|w| threads.contains(&w.thread))
                    });
                    (!from_member).then_some((m, y.woken_by?))
                }
                other => Some((m, other)),
            }
        });
        self.out.circles.push(CircularWait {
            vertices: members,
            broken_by,
        });
    }

    /// InteractiveSlice (lines 25-39).
    fn slice(&mut self, start: VertexId) -> Slice {
        let g = self.g;
        let mut steps = vec![SliceStep {
            vertex: start,
            edge: None,
            kind: None,
            strength: None,
            decided: None,
        }];
        let mut seen: BTreeSet<VertexId> = BTreeSet::from([start]);
        let mut cur = start;
        while steps.len() < self.opts.max_slice {
            let mut strong = Vec::new();
            let mut weak = Vec::new();
            // A stop signal proves who stopped a stopped thread: follow it, not the
            // wake-up that continued it.
            let stop = stop_edge(g, cur);
            for (id, e) in g.incoming(cur) {
                if stop.is_some_and(|s| s != id) {
                    continue;
                }
                let c = Candidate {
                    vertex: e.from,
                    edge: Some(id),
                };
                match e.strength {
                    Strength::Strong => strong.push(c),
                    Strength::Weak => weak.push(c),
                }
            }
            let (pick, by) = if strong.len() == 1 {
                (strong.first().copied(), DecidedBy::Graph)
            } else if strong.is_empty() && weak.is_empty() {
                return Slice {
                    steps,
                    end: SliceEnd::NoIncoming,
                };
            } else {
                let kind = if strong.is_empty() {
                    QuestionKind::WeakEdge
                } else {
                    QuestionKind::MultipleIncoming
                };
                let mut candidates = strong;
                candidates.extend(weak);
                let suggested = most_recent(g, &candidates);
                let q = Question {
                    kind,
                    at: cur,
                    candidates: candidates.clone(),
                    suggested,
                };
                match self.ask(q) {
                    Choice::Stop => {
                        return Slice {
                            steps,
                            end: SliceEnd::Stopped,
                        };
                    }
                    Choice::Take { index } => {
                        let by = self
                            .out
                            .decisions
                            .last()
                            .map_or(DecidedBy::Heuristic, |d| d.by);
                        (candidates.get(index).copied(), by)
                    }
                }
            };
            let Some(c) = pick else {
                return Slice {
                    steps,
                    end: SliceEnd::Stopped,
                };
            };
            let e = c.edge.and_then(|id| g.edge(id));
            steps.push(SliceStep {
                vertex: c.vertex,
                edge: c.edge,
                kind: e.map(|e| e.kind),
                strength: e.map(|e| e.strength),
                decided: Some(by),
            });
            if !seen.insert(c.vertex) {
                return Slice {
                    steps,
                    end: SliceEnd::Cycle,
                };
            }
            if e.is_some_and(|e| e.kind == EdgeKind::Timer) {
                return Slice {
                    steps,
                    end: SliceEnd::Timer,
                };
            }
            cur = c.vertex;
        }
        Slice {
            steps,
            end: SliceEnd::Limit,
        }
    }
}

/// The writer of the data flag a yield loop saw last: the source of its latest
/// data-flag edge (the write that ended the loop).
fn flag_writer(g: &EventGraph, v: VertexId) -> Option<VertexId> {
    g.incoming(v)
        .filter(|(_, e)| e.kind == EdgeKind::DataFlag)
        .max_by_key(|(_, e)| e.ts)
        .map(|(_, e)| e.from)
}

/// The signal edge into a stopped vertex (its stop signal's sender), if recorded.
pub fn stop_edge(g: &EventGraph, v: VertexId) -> Option<crate::graph::EdgeId> {
    if g.vertex(v)?.block != BlockType::Stopped {
        return None;
    }
    g.incoming(v)
        .find(|(_, e)| e.kind == EdgeKind::Signal)
        .map(|(id, _)| id)
}

/// Index of the candidate whose edge happened last (the first of equals).
fn most_recent(g: &EventGraph, candidates: &[Candidate]) -> usize {
    let mut best = 0usize;
    let mut best_ts = None;
    for (i, c) in candidates.iter().enumerate() {
        let ts = c.edge.and_then(|e| g.edge(e)).map(|e| e.ts);
        if best_ts.is_none() || ts > best_ts {
            best = i;
            best_ts = ts;
        }
    }
    best
}

/// The thread that ended wait `v` this time, when the graph says so for certain: the
/// source of its latest strong wake-up or data edge (a receive is ended by the sender's
/// data). None for a wait that a timer, an interrupt or nothing recorded ended.
fn actual_waker(g: &EventGraph, v: VertexId) -> Option<u32> {
    let own = g.vertex(v)?.thread;
    g.incoming(v)
        .filter(|(_, e)| {
            e.strength == Strength::Strong && matches!(e.kind, EdgeKind::Wakeup | EdgeKind::Data)
        })
        .max_by_key(|(_, e)| e.ts)
        .and_then(|(_, e)| g.vertex(e.from))
        .map(|w| w.thread)
        .filter(|&t| t != own)
}

/// True if a strong data edge ends the wait `v`: a receive woken from an interrupt (a
/// TCP receive is woken from the network softirq) whose data a recorded thread wrote.
fn data_arrived(g: &EventGraph, v: VertexId) -> bool {
    g.incoming(v)
        .any(|(_, e)| e.kind == EdgeKind::Data && e.strength == Strength::Strong)
}

/// FindSimilarVertex: the most recent earlier vertex of the same thread with the same
/// signature whose wait ended by a thread's wake-up, or by the arrival of data a
/// thread wrote (a normal case), if any.
pub fn find_similar(g: &EventGraph, v: VertexId, opts: &Options) -> Option<VertexId> {
    let x = g.vertex(v)?;
    let sig = Signature::of(x);
    let list = g.thread_vertices(x.thread);
    let pos = list.partition_point(|&y| y < v);
    list.get(..pos)?.iter().rev().copied().find(|&y| {
        g.vertex(y).is_some_and(|c| {
            c.kind == x.kind
                && c.duration() < opts.long
                && match c.kind {
                    VertexKind::Wait => {
                        matches!(c.woken_by, Some(WokenBy::Thread { .. })) || data_arrived(g, y)
                    }
                    VertexKind::Exec => true,
                }
                && Signature::of(c) == sig
        })
    })
}

/// Threads `v`'s thread exchanged wake-ups (or data flags, or data through a pipe or
/// socket) with just before `v`:
/// first those that woke it, most recent first (those it waits for when it waits),
/// then those it only woke (a circle may go through them: a thread it woke may wait
/// for it in turn).
pub fn peers(g: &EventGraph, v: VertexId) -> Vec<u32> {
    let Some(x) = g.vertex(v) else {
        return Vec::new();
    };
    let list = g.thread_vertices(x.thread);
    let pos = list.partition_point(|&y| y <= v);
    let lo = pos.saturating_sub(PEER_WINDOW);
    let linked = |kind: EdgeKind| {
        kind == EdgeKind::Wakeup || kind == EdgeKind::DataFlag || kind == EdgeKind::Data
    };
    let mut woke_it: Vec<(u64, u32)> = Vec::new();
    let mut woken: Vec<(u64, u32)> = Vec::new();
    for &y in list.get(lo..pos).unwrap_or(&[]) {
        let ins = g
            .incoming(y)
            .filter(|(_, e)| linked(e.kind))
            .map(|(_, e)| (e.ts, e.from));
        let outs = g
            .outgoing(y)
            .filter(|(_, e)| linked(e.kind))
            .map(|(_, e)| (e.ts, e.to));
        for (list, links) in [
            (&mut woke_it, ins.collect::<Vec<_>>()),
            (&mut woken, outs.collect()),
        ] {
            for (ts, other) in links {
                let Some(t) = g.vertex(other).map(|o| o.thread) else {
                    continue;
                };
                if t == x.thread {
                    continue;
                }
                match list.iter_mut().find(|(_, u)| *u == t) {
                    Some(s) => s.0 = s.0.max(ts.0),
                    None => list.push((ts.0, t)),
                }
            }
        }
    }
    for l in [&mut woke_it, &mut woken] {
        l.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    }
    let mut out: Vec<u32> = woke_it.into_iter().map(|(_, t)| t).collect();
    for (_, t) in woken {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// x86-64 `nanosleep` and `clock_nanosleep`.
const SLEEPS: [u32; 2] = [35, 230];

/// True for a wait in a sleep call that its own timer ended (the call from the
/// recorded system calls, else from the frames where it blocked). A sleep whose end
/// the trace lacks (no wake-up recorded: the timer's expiry missing) counts too: only
/// its timer or a signal ends a sleep, and a signal's sender would be a recorded
/// wake-up.
fn is_sleep(v: &crate::graph::Vertex) -> bool {
    matches!(v.woken_by, Some(WokenBy::Timer | WokenBy::Unknown) | None)
        && (v.wait_call.is_some_and(|c| SLEEPS.contains(&c))
            || v.waits_on == Some(crate::WaitKind::Sleep))
}

/// True if the waits `members` form a circle: each ended by a wake-up from another
/// member's thread, or by a timer or interrupt (what breaks the circle), and at least
/// one by a member.
fn closes_circle(g: &EventGraph, members: &[VertexId]) -> bool {
    let threads: BTreeSet<u32> = members
        .iter()
        .filter_map(|&m| g.vertex(m).map(|y| y.thread))
        .collect();
    let mut linked = 0usize;
    for &m in members {
        let Some(y) = g.vertex(m) else { return false };
        if y.kind != VertexKind::Wait {
            return false;
        }
        match y.woken_by {
            Some(WokenBy::Thread { .. }) => {
                let by_member = g.incoming(m).any(|(_, e)| {
                    e.kind == EdgeKind::Wakeup
                        && g.vertex(e.from)
                            .is_some_and(|w| threads.contains(&w.thread))
                });
                if !by_member {
                    return false;
                }
                linked += 1;
            }
            Some(WokenBy::Timer | WokenBy::Interrupt { .. }) => {}
            _ => return false,
        }
    }
    linked > 0
}
