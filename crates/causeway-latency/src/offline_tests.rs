//! The offline descent on traces built in code.

use super::*;
use causeway_format::{Header, Marker, StringId, TaskState};
use causeway_testkit::synth::{Synth, named_tables};

/// Names: 1 op, 2 fast_path, 3 spin, 4 slow_path, 5 lock, 6 sleep, 7 unlock, 8 walk,
/// 9 read (after the thread names of `named_tables`).
const NAMES: [&str; 9] = [
    "op",
    "fast_path",
    "spin",
    "slow_path",
    "lock",
    "sleep",
    "unlock",
    "walk",
    "read",
];

fn tables() -> causeway_format::Tables {
    let mut t = named_tables(&[(7, 7, "worker"), (9, 9, "hog")]);
    let base = t.strings.len() as u32;
    assert_eq!(base, 3, "names below are numbered from 3");
    t.strings.extend(NAMES.iter().map(|s| s.to_string()));
    t
}

/// The id of `name` in [`tables`].
fn id(name: &str) -> StringId {
    StringId(3 + NAMES.iter().position(|n| *n == name).unwrap() as u32)
}

/// Records calls of one thread as nested (name, start, end) triples.
struct Calls<'s> {
    s: &'s mut Synth,
    tid: u32,
}

impl Calls<'_> {
    fn enter(&mut self, ts: u64, name: &str) -> &mut Self {
        let method = id(name);
        self.s
            .marker(ts, 0, self.tid, Marker::MethodEnter { method });
        self
    }
    fn exit(&mut self, ts: u64, name: &str) -> &mut Self {
        let method = id(name);
        self.s
            .marker(ts, 0, self.tid, Marker::MethodExit { method });
        self
    }
    fn call(&mut self, from: u64, to: u64, name: &str) -> &mut Self {
        self.enter(from, name).exit(to, name)
    }
}

fn opts(f0: &str, peak: PeakChoice) -> OfflineOptions {
    OfflineOptions {
        f0: f0.into(),
        peak,
        maxcount_pct: 0.9,
        max_depth: 8,
        threads: Vec::new(),
    }
}

/// Like the two-peaks workload: 150 fast calls of op (op > fast_path > spin, 2-3 us)
/// and 50 slow ones (op > slow_path > lock 400-600 us, sleep 50 us, unlock).
fn two_peaks() -> Trace {
    let mut s = Synth::new();
    let mut c = Calls { s: &mut s, tid: 7 };
    let mut t = 1_000;
    for i in 0..200u64 {
        if i % 4 == 3 {
            let wait = 400_000 + (i % 7) * 30_000;
            c.enter(t, "op").enter(t + 100, "slow_path");
            c.call(t + 200, t + 200 + wait, "lock");
            let u = t + 300 + wait;
            c.call(u, u + 50_000, "sleep")
                .call(u + 50_100, u + 50_300, "unlock");
            c.exit(u + 50_400, "slow_path").exit(u + 50_500, "op");
            t = u + 60_000;
        } else {
            let spin = 2_000 + (i % 5) * 200;
            c.enter(t, "op").enter(t + 50, "fast_path");
            c.call(t + 100, t + 100 + spin, "spin");
            c.exit(t + 150 + spin, "fast_path")
                .exit(t + 200 + spin, "op");
            t += 10_000;
        }
    }
    Trace::from_events(tables(), Header::synthetic(1), &s.events())
}

#[test]
fn the_slow_peak_reaches_the_lock_and_the_fast_peak_the_spin() {
    let tr = two_peaks();
    let slow = rootpath(&tr, &opts("op", PeakChoice::Last)).unwrap();
    assert_eq!(slow.peaks.len(), 2);
    assert_eq!(slow.peak.number, 2);
    assert_eq!(slow.path, ["op", "slow_path", "lock"]);
    assert_eq!(slow.stop, Stop::Leaf);
    // Every in-peak call counted, each the same way: exact, not sampled.
    assert_eq!(slow.levels[0].samples, 50);
    let l1 = &slow.levels[1];
    let lock = l1.callees.iter().find(|c| c.function == "lock").unwrap();
    assert_eq!((lock.maxcount, l1.own_maxcount), (50, 0));
    assert_eq!(l1.callees.len(), 3);

    let fast = rootpath(&tr, &opts("op", PeakChoice::Number(1))).unwrap();
    assert_eq!(fast.path, ["op", "fast_path", "spin"]);
    assert_eq!(fast.levels[0].samples, 150);
    assert_eq!(fast.stop, Stop::Leaf);
}

#[test]
fn max_depth_and_missing_functions_and_peaks() {
    let tr = two_peaks();
    let o = OfflineOptions {
        max_depth: 1,
        ..opts("op", PeakChoice::Last)
    };
    let r = rootpath(&tr, &o).unwrap();
    assert_eq!((r.path.len(), r.stop), (2, Stop::MaxDepth));
    assert_eq!(
        rootpath(&tr, &opts("nope", PeakChoice::Last)),
        Err(LatencyError::NoCalls("nope".into()))
    );
    assert!(matches!(
        rootpath(&tr, &opts("op", PeakChoice::Number(3))),
        Err(LatencyError::NoSuchPeak { peaks: 2, .. })
    ));
}

#[test]
fn recursion_is_folded_into_the_outermost_call() {
    // op > walk > walk > walk > read: the slow read sits under three walks; 40 calls
    // with a 1 ms read and 40 with a 1 us read.
    let mut s = Synth::new();
    let mut c = Calls { s: &mut s, tid: 7 };
    let mut t = 0;
    for i in 0..80u64 {
        let read = if i % 2 == 0 { 1_000_000 } else { 1_000 };
        c.enter(t, "op").enter(t + 10, "walk").enter(t + 20, "walk");
        c.enter(t + 30, "walk").call(t + 40, t + 40 + read, "read");
        let e = t + 50 + read;
        c.exit(e, "walk").exit(e + 10, "walk").exit(e + 20, "walk");
        c.exit(e + 30, "op");
        t = e + 10_000;
    }
    let tr = Trace::from_events(tables(), Header::synthetic(1), &s.events());
    let r = rootpath(&tr, &opts("op", PeakChoice::Last)).unwrap();
    assert_eq!(r.path, ["op", "walk", "read"]);
    // walk's callees are read only: its recursive calls are walk itself.
    assert_eq!(r.levels[1].callees.len(), 1);
    assert_eq!(r.levels[1].samples, 40);
}

#[test]
fn preemption_recorded_in_the_trace_ends_the_path() {
    // op is pure work; in half the calls the hog (tid 9) takes the CPU for 2 ms in the
    // middle of it.
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 7);
    let mut t = 1_000;
    for i in 0..60u64 {
        let method = id("op");
        s.marker(t, 0, 7, Marker::MethodEnter { method });
        if i % 2 == 0 {
            s.switch(t + 5_000, 0, 7, TaskState::RUNNABLE, 9);
            s.switch(t + 2_005_000, 0, 9, TaskState::RUNNABLE, 7);
            s.marker(t + 2_010_000, 0, 7, Marker::MethodExit { method });
            t += 2_100_000;
        } else {
            s.marker(t + 10_000, 0, 7, Marker::MethodExit { method });
            t += 100_000;
        }
    }
    let tr = Trace::from_events(tables(), Header::synthetic(1), &s.events());
    let r = rootpath(&tr, &opts("op", PeakChoice::Last)).unwrap();
    assert_eq!(r.stop, Stop::Preempted);
    let who = r.culprit.unwrap();
    assert_eq!((who.id, who.name.as_str()), (9, "hog"));
    assert_eq!(r.levels[0].samples, 30);
    assert_eq!(
        r.levels[0].preemption.as_ref().unwrap().total_ns,
        30 * 2_000_000
    );
    // The fast calls were never preempted: their op is its own leaf.
    let fast = rootpath(&tr, &opts("op", PeakChoice::Number(1))).unwrap();
    assert_eq!(fast.stop, Stop::Leaf);
}

#[test]
fn hard_interrupts_recorded_in_the_trace_end_the_path() {
    // Half of op's calls are hit by a 1 ms handler of IRQ 11 on their CPU.
    let mut t0 = tables();
    t0.strings.push("eth0".into());
    let eth0 = t0.strings.len() as u32 - 1;
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 7);
    let mut t = 1_000;
    for i in 0..60u64 {
        let method = id("op");
        s.marker(t, 0, 7, Marker::MethodEnter { method });
        let end = if i % 2 == 0 {
            s.irq_entry(t + 2_000, 0, 11, eth0)
                .irq_exit(t + 1_002_000, 0, 11);
            t + 1_010_000
        } else {
            t + 10_000
        };
        s.marker(end, 0, 7, Marker::MethodExit { method });
        t = end + 50_000;
    }
    let tr = Trace::from_events(t0, Header::synthetic(1), &s.events());
    let r = rootpath(&tr, &opts("op", PeakChoice::Last)).unwrap();
    assert_eq!(r.stop, Stop::Irq);
    let irq = r.culprit.unwrap();
    assert_eq!((irq.id, irq.name.as_str()), (11, "eth0"));
}
