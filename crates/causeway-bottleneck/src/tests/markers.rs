//! False wake-up removal and busy-wait spans (wPerf §4.1).

use super::{no_merge, run, v, w};
use causeway_format::{Marker, Tables, TaskState};
use causeway_testkit::synth::Synth;

/// Thread 1 waits 10..20 (woken by 2), runs, waits 25..40 (woken by 3); with `marker`,
/// it declares the first wake-up false at 22.
fn scenario(marker: bool) -> Synth {
    let mut s = Synth::new();
    s.switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .switch(0, 2, 0, TaskState::RUNNABLE, 3)
        .switch(0, 0, 0, TaskState::RUNNABLE, 1);
    s.switch(10, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .wake_by(20, 1, 2, 1)
        .switch(21, 0, 0, TaskState::RUNNABLE, 1);
    if marker {
        s.marker(22, 0, 1, Marker::FalseWakeup);
    }
    s.switch(25, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .wake_by(40, 2, 3, 1)
        .switch(41, 0, 0, TaskState::RUNNABLE, 1)
        .switch(50, 0, 1, TaskState::RUNNABLE, 0)
        .switch(50, 1, 2, TaskState::RUNNABLE, 0)
        .switch(50, 2, 3, TaskState::RUNNABLE, 0);
    s
}

#[test]
fn without_marker_both_wakers_get_edges() {
    let r = run(&scenario(false), &Tables::default(), 3, &no_merge());
    assert_eq!(w(&r, v(&r, 1), v(&r, 2)), 10);
    assert_eq!(w(&r, v(&r, 1), v(&r, 3)), 15);
    assert_eq!(r.quality.false_wakeups_removed, 0);
}

/// The false wake-up and the wait after it are removed: thread 1 waited from 10 to 40
/// for thread 3, and thread 2 gets no edge.
#[test]
fn false_wakeup_is_removed() {
    let r = run(&scenario(true), &Tables::default(), 3, &no_merge());
    assert_eq!(w(&r, v(&r, 1), v(&r, 2)), 0);
    assert_eq!(w(&r, v(&r, 1), v(&r, 3)), 30);
    assert_eq!(r.quality.false_wakeups_removed, 1);
    assert_eq!(r.quality.false_wakeups_unmatched, 0);
}

/// A busy-wait span counts as waiting for the thread that wrote the flag during it,
/// although the kernel saw the spinner running.
#[test]
fn spin_counts_as_wait_on_the_releasing_thread() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .marker(10, 0, 1, Marker::SpinBegin { id: 0xfeed })
        .marker(48, 1, 2, Marker::FlagWrite { addr: 0xfeed })
        .marker(50, 0, 1, Marker::SpinEnd { id: 0xfeed })
        .switch(60, 0, 1, TaskState::RUNNABLE, 0)
        .switch(60, 1, 2, TaskState::RUNNABLE, 0);
    let r = run(&s, &Tables::default(), 2, &no_merge());
    assert_eq!(w(&r, v(&r, 1), v(&r, 2)), 40);
    assert_eq!(r.quality.spins, 1);
    assert_eq!(r.quality.spins_unreleased, 0);
    // The spinner's time is waiting now, not only running.
    let v1 = &r.vertices[v(&r, 1)];
    assert!(v1.waiting.0 == 40);
}

/// A span with no flag write by another thread stays running time and is counted.
#[test]
fn unreleased_spin_is_counted_not_guessed() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .marker(10, 0, 1, Marker::SpinBegin { id: 1 })
        .marker(50, 0, 1, Marker::SpinEnd { id: 1 })
        .switch(60, 0, 1, TaskState::RUNNABLE, 0);
    let trace = causeway_model::Trace::from_events(
        Tables::default(),
        causeway_format::Header::synthetic(1),
        &s.events(),
    );
    let r = crate::analyze(&trace, &no_merge()).unwrap();
    assert!(r.edges.is_empty());
    assert_eq!(r.quality.spins_unreleased, 1);
}
