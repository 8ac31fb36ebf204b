//! Idle polls: readiness waits ended by their own timeout, after which the thread woke
//! nobody, are left out of the edges; a loop that acts on its timeout keeps its edge.

use super::{no_merge, run, string, tables, v, w};
use crate::findings::VertexKind;
use causeway_format::{
    Frame, FrameId, FrameSpace, SoftirqVec, Stack, StackKind, StringId, TaskState, Tgid, Waker,
};
use causeway_testkit::synth::Synth;

const MS: u64 = 1_000_000;

/// The hrtimer softirq: a wait's own timer.
const TIMER: Waker = Waker::Softirq {
    vec: SoftirqVec::HRTIMER,
};

/// Stack 0 of the tables: one user frame in process 1 named `symbol`.
fn one_frame_stack(t: &mut causeway_format::Tables, symbol: &str) {
    let sym = string(t, symbol);
    let module = string(t, "/usr/lib/libc.so.6");
    t.frames.push(Frame::new(
        FrameSpace::User { tgid: Tgid(1) },
        0x1000,
        StringId(module),
        StringId(sym),
        0x10,
    ));
    t.stacks.push(Stack {
        frames: vec![FrameId(0)],
        truncated: false,
    });
}

/// Poller 1 and ticker 2 each wait in `epoll_wait` three times for 10 ms, ended by the
/// hrtimer softirq; after each timeout the ticker wakes worker 3, the poller nobody.
#[test]
fn an_idle_poll_is_not_an_edge_to_the_timer_but_a_tick_that_wakes_work_is() {
    let mut t = tables(&[(1, 1, "poller"), (2, 1, "ticker"), (3, 1, "worker")]);
    one_frame_stack(&mut t, "epoll_wait");
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .switch(1, 1, 2, TaskState::RUNNABLE, 3)
        .switch(2, 1, 3, TaskState::INTERRUPTIBLE, 2);
    for k in 0..3u64 {
        let at = k * 11 * MS + 10;
        s.switch(at, 0, 1, TaskState::INTERRUPTIBLE, 0)
            .stack(at, 0, 1, StackKind::SwitchOut, Some(0), None)
            .switch(at, 1, 2, TaskState::INTERRUPTIBLE, 0)
            .stack(at, 1, 2, StackKind::SwitchOut, Some(0), None)
            .wakeup(at + 10 * MS, 0, 1, 0, TIMER)
            .switch(at + 10 * MS, 0, 0, TaskState::RUNNABLE, 1)
            .wakeup(at + 10 * MS, 1, 2, 1, TIMER)
            .switch(at + 10 * MS, 1, 0, TaskState::RUNNABLE, 2)
            // The ticker hands work on; the worker runs it and waits for the next.
            .wake_by(at + 10 * MS + 100, 1, 2, 3)
            .switch(at + 10 * MS + 200, 1, 2, TaskState::RUNNABLE, 3)
            .switch(at + 10 * MS + 300, 1, 3, TaskState::INTERRUPTIBLE, 2);
    }
    s.switch(40 * MS, 0, 1, TaskState::RUNNABLE, 0)
        .switch(40 * MS, 1, 2, TaskState::RUNNABLE, 0);
    let r = run(&s, &t, 2, &no_merge());
    let timer_v = r
        .vertices
        .iter()
        .find(|x| x.kind == VertexKind::Timer)
        .expect("a timer vertex")
        .id;
    assert_eq!(
        w(&r, v(&r, 1), timer_v),
        0,
        "the idle poller has no timer edge"
    );
    assert!(
        w(&r, v(&r, 2), timer_v) > 0,
        "the ticker keeps its timer edge"
    );
    assert_eq!(r.quality.idle_polls, 3, "{:?}", r.quality);
    assert_eq!(r.quality.idle_poll.0, 30 * MS);
}

/// Worker 1 takes work from a queue: thread 3 hands it work five times, and once its
/// timed poll of the queue times out with nothing to do; sleeper 2 sleeps on a timer
/// six times and does nothing in between. The worker's timeout is idle; the sleeper's
/// sleeps stay edges to the timer (a sleep loop).
#[test]
fn a_workers_timed_out_queue_poll_is_idle_but_a_sleep_loop_is_not() {
    let mut t = tables(&[(1, 1, "worker"), (2, 1, "sleeper"), (3, 1, "feeder")]);
    one_frame_stack(&mut t, "take_from_queue");
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2);
    for k in 0..6u64 {
        let at = k * 10 * MS + 10;
        s.switch(at, 0, 1, TaskState::INTERRUPTIBLE, 0)
            .stack(at, 0, 1, StackKind::SwitchOut, Some(0), None)
            .switch(at, 1, 2, TaskState::INTERRUPTIBLE, 0)
            .stack(at, 1, 2, StackKind::SwitchOut, Some(0), None);
        if k == 3 {
            s.wakeup(at + 9 * MS, 0, 1, 0, TIMER);
        } else {
            // The feeder runs briefly on CPU 0 and hands the worker an item.
            s.switch(at + 8 * MS, 0, 0, TaskState::RUNNABLE, 3)
                .wake_by(at + 9 * MS - 100, 0, 3, 1)
                .switch(at + 9 * MS - 50, 0, 3, TaskState::INTERRUPTIBLE, 0);
        }
        s.switch(at + 9 * MS, 0, 0, TaskState::RUNNABLE, 1)
            .wakeup(at + 9 * MS, 1, 2, 1, TIMER)
            .switch(at + 9 * MS, 1, 0, TaskState::RUNNABLE, 2);
    }
    s.switch(70 * MS, 0, 1, TaskState::RUNNABLE, 0)
        .switch(70 * MS, 1, 2, TaskState::RUNNABLE, 0);
    let r = run(&s, &t, 2, &no_merge());
    let timer_v = r
        .vertices
        .iter()
        .find(|x| x.kind == VertexKind::Timer)
        .expect("a timer vertex")
        .id;
    assert_eq!(w(&r, v(&r, 1), timer_v), 0, "the worker's timeout is idle");
    assert!(
        w(&r, v(&r, 2), timer_v) > 0,
        "the sleep loop keeps its edge"
    );
    assert_eq!(r.quality.idle_polls, 1, "{:?}", r.quality);
}
