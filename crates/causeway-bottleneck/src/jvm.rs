//! A JVM's own threads: part of the machine the program runs on, not of its answer.
//!
//! HotSpot runs threads of its own beside the program's: the VM Thread (it brings every
//! Java thread to a safepoint and runs the stop-the-world operation there), the
//! garbage collector's workers and concurrent threads, the JIT compilers, the periodic
//! task thread, monitor deflation, the service and signal threads, and the launcher's
//! first thread, which only waits for the Java main thread to end. Analysed as
//! threads, they are wrong answers twice over: their own sleeps between safepoints
//! become sinks ("VM Thread waits for timers while others wait for it"), and the
//! program's threads, which the VM Thread wakes at the end of every safepoint, get an
//! edge out of their knot to it, so the knot that limits the program is never found.
//!
//! Rule: a thread of a process that runs HotSpot (a frame in `libjvm.so`) is the
//! runtime's when its stacks run one of HotSpot's own thread loops right inside the
//! thread's start routine ([`RUNTIME_LOOPS`]: what the thread is, whatever it is
//! called), or is the launcher's first thread, or its name is one HotSpot and the JDK
//! give their own threads ([`RUNTIME_NAMES`]: a hint for the threads whose stacks do
//! not show their loop, the JDK's threads that run Java code, threads with no stack
//! recorded; a program names its own threads otherwise). Such threads are no
//! vertex of their own: the waits they end, in their own process, point to one
//! pseudo-vertex per process, the runtime's *pauses* (safepoints, collections,
//! compilations waited for), and their own waits are left out. The pause vertex is
//! treated like a brief stopper when its waits are short and a small share of its
//! waiters' waiting (see `pauses`): it is then never a knot-breaker nor the answer;
//! when the pauses are long or many, it is a sink like a busy device, and the answer
//! is the pauses, with their number, the longest and their total.
//!
//! Which waits are pauses: those of the program's threads that a runtime thread of the
//! same process ended (not by ending the process). A pause is a stretch of time in
//! which the runtime held at least one of them: overlapping waits (the threads one
//! safepoint stopped) and waits less than [`SAME_PAUSE`] apart are one pause.

use crate::findings::{Vertex, VertexKind};
use crate::waits::EXIT_GRACE_NS;
use causeway_format::{DurationNs, StackId, Tables, Tgid, Tid, Timestamp, Waker};
use causeway_model::{Model, SegmentState, StackRef, Thread};
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};

/// The file a HotSpot JVM's code is in.
const LIBJVM: &str = "libjvm.so";

/// Functions (demangled, by prefix) that only HotSpot's own threads run: their thread
/// loops and entry points, in JDK 8 to 21 (class names changed: `GangWorker` became
/// `WorkerThread`).
pub(crate) const RUNTIME_LOOPS: &[&str] = &[
    "VMThread::",
    "WatcherThread::",
    "GangWorker::",
    "WorkerThread::",
    "AbstractGangWorker::",
    "ConcurrentGCThread::",
    "G1ServiceThread::",
    "G1ConcurrentRefineThread",
    "G1PrimaryConcurrentRefineThread",
    "G1ConcurrentMarkThread::",
    "G1YoungRemSetSamplingThread::",
    "ConcurrentMarkSweepThread::",
    "CompileBroker::compiler_thread_loop",
    "MonitorDeflationThread::",
    "ServiceThread::",
    "NotificationThread::",
    "signal_thread_entry",
    "AsyncLogWriter::",
    "JfrThreadSampler",
    "ZDirector::",
    "ZDriver",
    "ZWorkers::",
    "ShenandoahControlThread::",
    "ShenandoahRegulatorThread::",
    "StringDedupThread::",
    "NMethodSweeper::sweeper_loop",
    "AttachListener::",
];

/// HotSpot's start routine of every thread it creates: the thread's own code is the
/// next few frames in.
const THREAD_START: &str = "Thread::call_run";

/// How many frames inside [`THREAD_START`] a thread loop is looked for (`JavaThread::run`
/// → `JavaThread::thread_main_inner` → `compiler_thread_entry` →
/// `CompileBroker::compiler_thread_loop` is the deepest).
const ENTRY_DEPTH: usize = 4;

/// The launcher's first thread (`java`'s `main`), which starts the Java main thread
/// and joins it: only that thread runs these.
const LAUNCHER: &[&str] = &["ContinueInNewThread", "CallJavaMainInNewThread"];

/// Names (the kernel's first 15 bytes) HotSpot and the JDK give their own threads:
/// a hint for threads whose stacks do not say what they run (the JDK's threads that
/// run Java code, whose frames are not unwound, or threads with no stack recorded).
/// A child process's reaper is not among them: a wait on it is a wait on the child.
pub(crate) const RUNTIME_NAMES: &[&str] = &[
    "VM Thread",
    "GC Thread#",
    "G1 ",
    "C1 CompilerThre",
    "C2 CompilerThre",
    "VM Periodic Tas",
    "Monitor Deflati",
    "Service Thread",
    "Notification Th",
    "Signal Dispatch",
    "Reference Handl",
    "Finalizer",
    "Common-Cleaner",
    "Attach Listener",
    "Sweeper thread",
    "ZDirector",
    "ZDriver",
    "ZStat",
    "Shenandoah",
    "JFR ",
];

/// Waits on the runtime less than this far apart belong to one pause: the VM Thread
/// stops and releases threads one after another, in well under a millisecond; two
/// safepoints are further apart than that.
pub(crate) const SAME_PAUSE: u64 = 1_000_000;

/// What a stack says about its thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct StackFacts {
    /// A frame in `libjvm.so`.
    hotspot: bool,
    /// A frame of one of HotSpot's own thread loops.
    runtime_loop: bool,
}

/// The JVMs of a recording and their own threads.
#[derive(Clone, Debug, Default)]
pub(crate) struct Runtimes {
    /// Per model thread: the JVM process it is a runtime thread of.
    pub(crate) runtime_of: Vec<Option<Tgid>>,
    /// Per JVM process with runtime threads: its pauses.
    pub(crate) pauses: BTreeMap<Tgid, PauseStats>,
}

/// A JVM's pauses, as its program's threads waited for them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PauseStats {
    /// How many pauses (waits released together count once).
    pub(crate) count: u64,
    /// The longest.
    pub(crate) longest: DurationNs,
    /// Their lengths summed.
    pub(crate) total: DurationNs,
}

/// Find the JVM processes of `model` and their runtime threads (module doc).
pub(crate) fn find(model: &Model, tables: &Tables) -> Runtimes {
    let threads = model.threads().as_slice();
    let mut memo: FxHashMap<StackId, StackFacts> = FxHashMap::default();
    let facts: Vec<StackFacts> = threads
        .iter()
        .map(|t| thread_facts(t, tables, &mut memo))
        .collect();
    let jvms: BTreeSet<Tgid> = threads
        .iter()
        .zip(&facts)
        .filter(|(_, f)| f.hotspot)
        .filter_map(|(t, _)| t.tgid)
        .collect();
    if jvms.is_empty() {
        return Runtimes {
            runtime_of: vec![None; threads.len()],
            pauses: BTreeMap::new(),
        };
    }
    let runtime_of: Vec<Option<Tgid>> = threads
        .iter()
        .zip(&facts)
        .map(|(t, f)| {
            let g = t.tgid.filter(|g| jvms.contains(g))?;
            let named = RUNTIME_NAMES.iter().any(|n| t.comm.starts_with(n));
            (f.runtime_loop || named).then_some(g)
        })
        .collect();
    let pauses = pause_stats(model, &runtime_of);
    Runtimes { runtime_of, pauses }
}

/// What the stacks of thread `t` (where it blocked, and where it was when it woke
/// others) say about it.
fn thread_facts(
    t: &Thread,
    tables: &Tables,
    memo: &mut FxHashMap<StackId, StackFacts>,
) -> StackFacts {
    let mut out = StackFacts {
        hotspot: false,
        runtime_loop: false,
    };
    for s in &t.segments {
        let SegmentState::Blocked {
            switch_out_stack, ..
        } = s.state
        else {
            continue;
        };
        let Some(id) = switch_out_stack.and_then(|r: StackRef| r.user) else {
            continue;
        };
        let f = *memo.entry(id).or_insert_with(|| stack_facts(tables, id));
        out.hotspot |= f.hotspot;
        out.runtime_loop |= f.runtime_loop;
        if out.runtime_loop {
            break;
        }
    }
    out
}

fn stack_facts(tables: &Tables, id: StackId) -> StackFacts {
    let mut f = StackFacts {
        hotspot: false,
        runtime_loop: false,
    };
    let Some(stack) = tables.stack(id) else {
        return f;
    };
    // Outermost first: what a thread runs is the few frames its start routine calls
    // (`Thread::call_run` in HotSpot); deeper down, a Java thread calls into the same
    // classes (`VMThread::execute` to ask for a collection).
    let mut since_start: Option<usize> = None;
    for fr in stack.frames.iter().rev().filter_map(|&x| tables.frame(x)) {
        f.hotspot |= tables.string(fr.module).ends_with(LIBJVM);
        let sym = tables.string(fr.symbol);
        if let Some(n) = since_start.as_mut() {
            *n += 1;
            f.runtime_loop |= *n <= ENTRY_DEPTH && RUNTIME_LOOPS.iter().any(|p| sym.starts_with(p));
        }
        if sym.starts_with(THREAD_START) {
            since_start = Some(0);
        }
        f.runtime_loop |= LAUNCHER.iter().any(|p| sym.starts_with(p));
    }
    f
}

/// The pauses of each JVM: the waits of its program's threads that its runtime
/// threads ended, grouped by release time (module doc).
fn pause_stats(model: &Model, runtime_of: &[Option<Tgid>]) -> BTreeMap<Tgid, PauseStats> {
    let threads = model.threads().as_slice();
    // The runtime of the thread that released a wait, unless it released it by ending
    // the process (`Resolver::runtime_exit`).
    let runtime_tid = |tid: Tid, ts: Timestamp| {
        let i = model.thread_index_at(tid, ts)? as usize;
        let exiting = threads[i]
            .exited
            .is_some_and(|x| x.0.saturating_sub(ts.0) <= EXIT_GRACE_NS);
        runtime_of.get(i).copied().flatten().filter(|_| !exiting)
    };
    // Per JVM: the waits (start, end).
    let mut released: BTreeMap<Tgid, Vec<(u64, u64)>> = BTreeMap::new();
    for (i, t) in threads.iter().enumerate() {
        let Some(g) = t.tgid else { continue };
        if runtime_of[i].is_some() {
            continue;
        }
        for s in &t.segments {
            let SegmentState::Blocked { waker: Some(w), .. } = s.state else {
                continue;
            };
            let Waker::Thread { tid } = w.waker else {
                continue;
            };
            if runtime_tid(tid, w.ts) == Some(g) {
                released.entry(g).or_default().push((s.start.0, s.end.0));
            }
        }
    }
    let mut out: BTreeMap<Tgid, PauseStats> = runtime_of
        .iter()
        .flatten()
        .map(|&g| (g, PauseStats::default()))
        .collect();
    for (g, mut waits) in released {
        waits.sort_unstable();
        out.insert(g, group(&waits));
    }
    out
}

/// Fill in each runtime pause vertex's figures.
pub(crate) fn describe(vertices: &mut [Vertex], runtimes: &Runtimes) {
    for v in vertices {
        if let VertexKind::RuntimePauses {
            tgid,
            pauses,
            longest,
            total,
            ..
        } = &mut v.kind
        {
            let st = runtimes.pauses.get(tgid).copied().unwrap_or_default();
            (*pauses, *longest, *total) = (st.count, st.longest, st.total);
        }
    }
}

/// Waits (start, end), sorted by start, merged into pauses: the stretches of time in
/// which the runtime held at least one of the program's threads.
fn group(waits: &[(u64, u64)]) -> PauseStats {
    let mut st = PauseStats::default();
    let close = |st: &mut PauseStats, (from, to): (u64, u64)| {
        st.count += 1;
        st.total.0 += to - from;
        st.longest.0 = st.longest.0.max(to - from);
    };
    let mut current: Option<(u64, u64)> = None;
    for &(start, end) in waits {
        current = match current {
            Some((from, to)) if start <= to.saturating_add(SAME_PAUSE) => Some((from, to.max(end))),
            Some(done) => {
                close(&mut st, done);
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    if let Some(done) = current {
        close(&mut st, done);
    }
    st
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_released_together_are_one_pause() {
        // Two safepoints: three threads stopped at 9.1-9.9 ms and released within
        // 0.2 ms of 10 ms, then one thread stopped 58-60 ms.
        let waits = [
            (9_100_000, 10_000_000),
            (9_500_000, 10_100_000),
            (9_900_000, 10_200_000),
            (58_000_000, 60_000_000),
        ];
        let st = group(&waits);
        assert_eq!(st.count, 2);
        assert_eq!(st.longest, DurationNs(2_000_000));
        assert_eq!(st.total, DurationNs(3_100_000));
    }

    #[test]
    fn no_waits_no_pauses() {
        assert_eq!(group(&[]), PauseStats::default());
    }
}
