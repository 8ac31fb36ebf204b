//! Cascaded re-distribution (wPerf Figure 3 and 4).

use super::{no_merge, run, v, w};
use causeway_format::{Tables, TaskState};
use causeway_testkit::synth::Synth;

/// wPerf Figure 3: C wakes B at t1, B wakes A at t2, both waiting since t0. The naive
/// weights would be A→B = t2−t0 and B→C = t1−t0; cascading keeps A→B and adds B's
/// nested wait once more to B→C, because shortening it helps both B and A.
#[test]
fn figure3_nested_waits_get_the_papers_weights() {
    let (t0, t1, t2) = (1_000u64, 4_000u64, 10_000u64);
    let (a, b, c) = (1, 2, 3);
    let mut s = Synth::new();
    s.switch(0, 2, 0, TaskState::RUNNABLE, c); // C runs all along on CPU 2
    s.switch(t0, 0, a, TaskState::INTERRUPTIBLE, 0)
        .switch(t0, 1, b, TaskState::INTERRUPTIBLE, 0)
        .wake_by(t1, 2, c, b)
        .switch(t1 + 1, 1, 0, TaskState::RUNNABLE, b)
        .wake_by(t2, 1, b, a)
        .switch(t2 + 1, 0, 0, TaskState::RUNNABLE, a)
        .switch(12_000, 2, c, TaskState::RUNNABLE, 0);
    let r = run(&s, &Tables::default(), 3, &no_merge());
    let (va, vb, vc) = (v(&r, a), v(&r, b), v(&r, c));
    assert_eq!(w(&r, va, vb), t2 - t0);
    assert_eq!(w(&r, vb, vc), 2 * (t1 - t0));
    assert_eq!(r.edges.len(), 2, "no A→C edge: {:?}", r.edges);
    // The direct (uncascaded) time is what a plain wait ranking would see.
    let bc = r.edges.iter().find(|e| e.from == vb).unwrap();
    assert_eq!(bc.direct.0, t1 - t0);
    assert_eq!(bc.direct_waits, 1);
}

/// Deeper nesting cascades recursively and clips to the outer wait: D's wait on E
/// overlaps C's wait only partly.
#[test]
fn cascade_is_recursive_and_clipped() {
    let mut s = Synth::new();
    s.switch(0, 3, 0, TaskState::RUNNABLE, 5); // E runs all along
    // A(1) waits 100..1000 on B(2); B waits 100..800 on C(3); C waits 300..600 on D(4);
    // D waits 50..500 on E(5).
    s.switch(50, 2, 4, TaskState::INTERRUPTIBLE, 0);
    s.switch(100, 0, 1, TaskState::INTERRUPTIBLE, 0);
    s.switch(100, 1, 2, TaskState::INTERRUPTIBLE, 0);
    s.switch(300, 4, 3, TaskState::INTERRUPTIBLE, 0);
    s.wake_by(500, 3, 5, 4)
        .switch(501, 2, 0, TaskState::RUNNABLE, 4);
    s.wake_by(600, 2, 4, 3)
        .switch(601, 4, 0, TaskState::RUNNABLE, 3);
    s.wake_by(800, 4, 3, 2)
        .switch(801, 1, 0, TaskState::RUNNABLE, 2);
    s.wake_by(1000, 1, 2, 1)
        .switch(1001, 0, 0, TaskState::RUNNABLE, 1);
    s.switch(1100, 3, 5, TaskState::RUNNABLE, 0);
    let r = run(&s, &Tables::default(), 5, &no_merge());
    let id = |t| v(&r, t);
    assert_eq!(w(&r, id(1), id(2)), 900);
    // B's own 700, plus 700 cascaded from A.
    assert_eq!(w(&r, id(2), id(3)), 1400);
    // C's own 300, plus 300 via B, plus 300 via A→B.
    assert_eq!(w(&r, id(3), id(4)), 900);
    // D's own 450; via C, clipped to 300..500 = 200, three times (C, B, A).
    assert_eq!(w(&r, id(4), id(5)), 450 + 3 * 200);
}

/// Two threads whose waits overlap and who wake each other must not cascade forever.
#[test]
fn mutual_overlapping_waits_terminate() {
    let mut s = Synth::new();
    // 1 waits 0..100 woken by 2 at 100; 2 waits 50..150 woken by 1 at 150.
    s.switch(0, 0, 1, TaskState::INTERRUPTIBLE, 0);
    s.switch(50, 1, 2, TaskState::INTERRUPTIBLE, 0);
    // A wake-up by a thread the model believes blocked is still recorded as its waker.
    s.wake_by(100, 2, 2, 1)
        .switch(101, 0, 0, TaskState::RUNNABLE, 1);
    s.wake_by(150, 0, 1, 2)
        .switch(151, 1, 0, TaskState::RUNNABLE, 2);
    s.switch(200, 0, 1, TaskState::RUNNABLE, 0);
    let r = run(&s, &Tables::default(), 3, &no_merge());
    assert!(r.quality.cascade_cycles_cut > 0);
    assert!(w(&r, v(&r, 1), v(&r, 2)) >= 100);
}

/// `block` keeps scenarios short; check it models one wait.
#[test]
fn block_helper_makes_one_wait() {
    let mut s = Synth::new();
    s.switch(0, 1, 0, TaskState::RUNNABLE, 2);
    s.wait_for((1, 0), 10, (2, 1), 50);
    s.switch(100, 1, 2, TaskState::RUNNABLE, 0);
    let r = run(&s, &Tables::default(), 2, &no_merge());
    assert_eq!(w(&r, v(&r, 1), v(&r, 2)), 40);
}
