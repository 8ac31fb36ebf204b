//! Scenario tests: small synthetic traces with exactly known timelines.
//!
//! Integration tests, not unit tests in `src/`: they use only the public API, and the
//! testkit's builders (a dev-dependency that depends on this crate) return this
//! crate's types, which only an integration test shares with it.

use causeway_format::{
    Cpu, DurationNs, Marker, ProcessInfo, SoftirqVec, StackId, StackKind, StringId, Tables,
    TaskState, Tgid, ThreadInfo, Tid, Timestamp, TraceReader, Waker,
};
use causeway_model::{
    InterruptSource, Model, Segment, SegmentId, SegmentState, StackRef, ThreadTotals, UnknownCause,
    WakeInfo,
};
use causeway_testkit::synth::Synth;

const R: TaskState = TaskState::RUNNABLE;
const S: TaskState = TaskState::INTERRUPTIBLE;
const D: TaskState = TaskState::UNINTERRUPTIBLE;

fn seg(start: u64, end: u64, sk: bool, ek: bool, state: SegmentState) -> Segment {
    Segment {
        start: Timestamp(start),
        end: Timestamp(end),
        start_known: sk,
        end_known: ek,
        state,
    }
}

fn running(cpu: u32) -> SegmentState {
    SegmentState::Running { cpu: Cpu(cpu) }
}

fn runnable(cpu: u32, preempted: bool) -> SegmentState {
    SegmentState::Runnable {
        cpu: Some(Cpu(cpu)),
        preempted,
    }
}

fn blocked(state: Option<TaskState>, waker: Option<WakeInfo>) -> SegmentState {
    SegmentState::Blocked {
        state,
        waker,
        switch_out_stack: None,
        syscall: None,
    }
}

fn unknown(cause: UnknownCause) -> SegmentState {
    SegmentState::Unknown { cause }
}

fn thread_waker(tid: u32) -> Waker {
    Waker::Thread { tid: Tid(tid) }
}

fn segs(m: &Model, tid: u32) -> Vec<Segment> {
    m.thread(Tid(tid))
        .map(|t| t.segments.clone())
        .unwrap_or_default()
}

fn stack(user: Option<u32>, kernel: Option<u32>) -> StackRef {
    StackRef {
        user: user.map(StackId),
        kernel: kernel.map(StackId),
    }
}

/// Segments are contiguous and their durations add up to the span and the totals.
fn assert_conserved(m: &Model) {
    for t in m.threads() {
        for w in t.segments.windows(2) {
            assert_eq!(w[0].end, w[1].start, "tid {} not contiguous", t.tid);
        }
        let sum: u64 = t.segments.iter().map(|s| s.duration().0).sum();
        let span = t.span().map_or(0, |s| s.duration().0);
        assert_eq!(sum, span, "tid {}", t.tid);
        assert_eq!(t.totals.accounted().0, span, "tid {}", t.tid);
    }
}

#[test]
fn block_wake_run_cycle_gives_exact_segments_and_totals() {
    let mut s = Synth::new();
    s.switch(0, 1, 0, R, 30)
        .switch(1000, 0, 0, R, 10)
        .switch(2000, 0, 10, S, 0)
        .stack(2000, 0, 10, StackKind::SwitchOut, Some(1), Some(2))
        .wake_by(5000, 1, 30, 10)
        .stack(5000, 1, 30, StackKind::Waker, Some(3), None)
        .switch(5500, 0, 0, R, 10)
        .switch(8000, 0, 10, D, 0)
        .switch(10_000, 1, 30, R, 0);
    let m = s.model(2);
    let wake = WakeInfo {
        ts: Timestamp(5000),
        cpu: Cpu(1),
        target_cpu: Cpu(1),
        waker: thread_waker(30),
        waker_stack: Some(stack(Some(3), None)),
        waker_stack_weight: 1,
    };
    assert_eq!(
        segs(&m, 10),
        vec![
            seg(0, 1000, false, true, runnable(0, false)),
            seg(1000, 2000, true, true, running(0)),
            seg(
                2000,
                5000,
                true,
                true,
                SegmentState::Blocked {
                    state: Some(S),
                    waker: Some(wake),
                    switch_out_stack: Some(stack(Some(1), Some(2))),
                    syscall: None,
                }
            ),
            seg(5000, 5500, true, true, runnable(1, false)),
            seg(5500, 8000, true, true, running(0)),
            seg(8000, 10_000, true, false, blocked(Some(D), None)),
        ]
    );
    let t = m.thread(Tid(10)).unwrap();
    assert_eq!(
        t.totals,
        ThreadTotals {
            running: DurationNs(3500),
            runnable: DurationNs(1500),
            runnable_preempted: DurationNs(0),
            blocked_interruptible: DurationNs(3000),
            blocked_uninterruptible: DurationNs(2000),
            blocked_other: DurationNs(0),
            unknown: DurationNs(0),
            wakeups: 1,
            wakeups_not_blocked: 0,
            preemptions: 0,
            first_seen: Timestamp(1000),
            last_seen: Timestamp(8000),
        }
    );
    // Thread 30 ran from the trace start and was preempted at the end.
    assert_eq!(
        segs(&m, 30),
        vec![
            seg(0, 10_000, true, true, running(1)),
            seg(10_000, 10_000, true, false, runnable(1, true)),
        ]
    );
    let cpu0 = m.cpu(Cpu(0)).unwrap();
    assert_eq!((cpu0.busy.0, cpu0.idle.0, cpu0.unknown.0), (3500, 6500, 0));
    assert_eq!(cpu0.switches, 4);
    let cpu1 = m.cpu(Cpu(1)).unwrap();
    assert_eq!((cpu1.busy.0, cpu1.idle.0, cpu1.unknown.0), (10_000, 0, 0));
    assert!(m.thread(Tid(0)).is_none(), "idle task is not a thread");
    assert_eq!(m.stats().anomalies(), 0);
    assert_eq!(m.span().unwrap().duration().0, 10_000);
    assert_conserved(&m);
}

#[test]
fn thread_blocked_before_trace_start_gets_partial_blocked_segment() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 5)
        .wakeup(1000, 0, 10, 1, thread_waker(5))
        .switch(1500, 1, 0, R, 10)
        .switch(3000, 0, 5, R, 0);
    let m = s.model(2);
    let wake = WakeInfo {
        ts: Timestamp(1000),
        cpu: Cpu(0),
        target_cpu: Cpu(1),
        waker: thread_waker(5),
        waker_stack: None,
        waker_stack_weight: 1,
    };
    assert_eq!(
        segs(&m, 10),
        vec![
            seg(0, 1000, false, true, blocked(None, Some(wake))),
            seg(1000, 1500, true, true, runnable(1, false)),
            seg(1500, 3000, true, false, running(1)),
        ]
    );
    let t = m.thread(Tid(10)).unwrap();
    assert_eq!(t.totals.blocked_other.0, 1000);
    assert_eq!(t.totals.wakeups, 1);
    assert_conserved(&m);
}

#[test]
fn thread_first_seen_switching_out_was_running() {
    let mut s = Synth::new();
    s.switch(0, 1, 0, R, 7)
        .switch(2000, 0, 10, S, 0)
        .switch(3000, 1, 7, R, 0);
    let m = s.model(2);
    assert_eq!(
        segs(&m, 10),
        vec![
            seg(0, 2000, false, true, running(0)),
            seg(2000, 3000, true, false, blocked(Some(S), None)),
        ]
    );
    // CPU 0 ran thread 10 from the trace start.
    let cpu0 = m.cpu(Cpu(0)).unwrap();
    assert_eq!((cpu0.busy.0, cpu0.idle.0), (2000, 1000));
    assert_eq!(m.stats().anomalies(), 0);
    assert_conserved(&m);
}

#[test]
fn first_switch_out_on_cpu_owned_by_another_thread_is_unknown_not_guessed() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 5)
        .switch(2000, 0, 10, S, 0)
        .switch(3000, 1, 0, R, 0);
    let m = s.model(2);
    assert_eq!(
        segs(&m, 10),
        vec![
            seg(
                0,
                2000,
                false,
                true,
                unknown(UnknownCause::BeforeFirstEvent)
            ),
            seg(2000, 3000, true, false, blocked(Some(S), None)),
        ]
    );
    // Thread 5 stopped running on CPU 0 at some unknown time before 2000.
    assert_eq!(
        segs(&m, 5),
        vec![
            seg(0, 2000, true, false, running(0)),
            seg(
                2000,
                3000,
                false,
                false,
                unknown(UnknownCause::Inconsistent)
            ),
        ]
    );
    assert_eq!(m.stats().cpu_current_mismatch, 1);
    assert_conserved(&m);
}

#[test]
fn thread_first_seen_switching_in_was_runnable() {
    let mut s = Synth::new();
    s.switch(0, 1, 0, R, 7)
        .switch(400, 0, 0, R, 10)
        .switch(900, 0, 10, R, 0);
    let m = s.model(2);
    assert_eq!(
        segs(&m, 10),
        vec![
            seg(0, 400, false, true, runnable(0, false)),
            seg(400, 900, true, true, running(0)),
            seg(900, 900, true, false, runnable(0, true)),
        ]
    );
    assert_eq!(m.thread(Tid(10)).unwrap().totals.preemptions, 1);
}

#[test]
fn lost_events_produce_unknown_segments_not_guesses() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 10)
        .switch(0, 1, 0, R, 20)
        .wakeup(200, 1, 30, 0, thread_waker(20))
        .syscall_enter(500, 0, 10, 1)
        .switch(1000, 1, 20, S, 0)
        .lost(3000, 0, 5)
        .switch(3500, 1, 0, R, 20)
        .switch(4000, 0, 10, S, 30)
        .switch(6000, 1, 20, S, 0);
    let m = s.model(2);
    // The running thread: certain until the last event before the loss.
    assert_eq!(
        segs(&m, 10),
        vec![
            seg(0, 500, true, false, running(0)),
            seg(500, 4000, false, true, unknown(UnknownCause::LostEvents)),
            seg(4000, 6000, true, false, blocked(Some(S), None)),
        ]
    );
    // Queued on the CPU that lost events: runnable until the loss, then unknown.
    assert_eq!(
        segs(&m, 30),
        vec![
            seg(
                0,
                200,
                false,
                true,
                blocked(
                    None,
                    Some(WakeInfo {
                        ts: Timestamp(200),
                        cpu: Cpu(1),
                        target_cpu: Cpu(0),
                        waker: thread_waker(20),
                        waker_stack: None,
                        waker_stack_weight: 1,
                    })
                )
            ),
            seg(200, 500, true, false, runnable(0, false)),
            seg(500, 4000, false, true, unknown(UnknownCause::LostEvents)),
            seg(4000, 6000, true, false, running(0)),
        ]
    );
    // Blocked elsewhere, then switched in with no wake-up seen: the wake-up may have
    // been lost, so the wait ends (unknown) where the loss window starts.
    assert_eq!(
        segs(&m, 20),
        vec![
            seg(0, 1000, true, true, running(1)),
            seg(1000, 1000, true, false, blocked(Some(S), None)),
            seg(1000, 3500, false, true, unknown(UnknownCause::LostEvents)),
            seg(3500, 6000, true, true, running(1)),
            seg(6000, 6000, true, false, blocked(Some(S), None)),
        ]
    );
    assert_eq!(m.stats().anomalies(), 0, "{:?}", m.stats());
    assert_eq!(m.stats().lost_events, 5);
    assert_eq!(m.losses().len(), 1);
    assert_eq!(m.losses()[0].from, Timestamp(500));
    let cpu0 = m.cpu(Cpu(0)).unwrap();
    assert_eq!(
        (cpu0.busy.0, cpu0.idle.0, cpu0.unknown.0),
        (500 + 2000, 0, 3500)
    );
    assert_eq!(m.thread(Tid(10)).unwrap().totals.unknown.0, 3500);
    assert_conserved(&m);
}

#[test]
fn thread_first_seen_after_a_loss_is_unknown_before_it() {
    let mut s = Synth::new();
    s.switch(0, 1, 0, R, 7)
        .lost(1000, 1, 3)
        .wake_by(2000, 1, 7, 10)
        .switch(2500, 1, 7, R, 10);
    let m = s.model(2);
    let s10 = segs(&m, 10);
    assert_eq!(
        s10[0],
        seg(0, 1000, false, false, unknown(UnknownCause::LostEvents))
    );
    assert_eq!(s10[1].start, Timestamp(1000));
    assert!(s10[1].state.is_blocked());
    assert!(!s10[1].start_known);
    assert_conserved(&m);
}

#[test]
fn wakeups_by_irq_and_softirq_are_recorded_with_stacks() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 10)
        .syscall_enter(50, 0, 10, 17)
        .switch(100, 0, 10, D, 0)
        .stack(100, 0, 10, StackKind::SwitchOut, Some(1), Some(2))
        .irq_entry(500, 1, 33, 1)
        .wakeup(
            510,
            1,
            10,
            0,
            Waker::Irq {
                irq: 33,
                name: StringId(1),
            },
        )
        .stack(510, 1, 0, StackKind::Waker, None, Some(7))
        .irq_exit(520, 1, 33)
        .switch(600, 0, 0, R, 10)
        .syscall_exit(650, 0, 10, 17)
        .switch(700, 0, 10, S, 0)
        .softirq_entry(800, 1, SoftirqVec::TIMER)
        .wakeup(
            810,
            1,
            10,
            0,
            Waker::Softirq {
                vec: SoftirqVec::TIMER,
            },
        )
        .softirq_exit(830, 1, SoftirqVec::TIMER)
        .switch(900, 0, 0, R, 10);
    let m = s.model(2);
    let t = m.thread(Tid(10)).unwrap();
    let blocked: Vec<&Segment> = t.segments.iter().filter(|s| s.state.is_blocked()).collect();
    assert_eq!(blocked.len(), 2);
    assert_eq!(
        blocked[0].state,
        SegmentState::Blocked {
            state: Some(D),
            waker: Some(WakeInfo {
                ts: Timestamp(510),
                cpu: Cpu(1),
                target_cpu: Cpu(0),
                waker: Waker::Irq {
                    irq: 33,
                    name: StringId(1)
                },
                waker_stack: Some(stack(None, Some(7))),
                waker_stack_weight: 1,
            }),
            switch_out_stack: Some(stack(Some(1), Some(2))),
            syscall: Some(17),
        }
    );
    assert_eq!(
        blocked[1].wake().map(|w| w.waker),
        Some(Waker::Softirq {
            vec: SoftirqVec::TIMER
        })
    );
    assert!(matches!(
        blocked[1].state,
        SegmentState::Blocked {
            syscall: None,
            switch_out_stack: None,
            ..
        }
    ));
    let ints = m.interrupts();
    assert_eq!(ints.len(), 2);
    assert_eq!(
        ints[0].source,
        InterruptSource::Irq {
            irq: 33,
            name: StringId(1)
        }
    );
    assert_eq!((ints[0].duration().0, ints[0].end_known), (20, true));
    assert_eq!(ints[1].duration().0, 30);
    let cpu1 = m.cpu(Cpu(1)).unwrap();
    assert_eq!((cpu1.irq.0, cpu1.softirq.0), (20, 30));
    assert_eq!(m.stats().anomalies(), 0, "{:?}", m.stats());
}

fn fork_tables() -> Tables {
    Tables {
        strings: [
            "",
            "bash",
            "/bin/bash",
            "worker",
            "/usr/bin/worker",
            "bash -c x",
        ]
        .map(String::from)
        .to_vec(),
        threads: vec![ThreadInfo {
            tid: Tid(100),
            tgid: Tgid(100),
            since: Timestamp(0),
            comm: StringId(1),
        }],
        processes: vec![ProcessInfo {
            tgid: Tgid(100),
            parent: Some(Tgid(1)),
            since: Timestamp(0),
            exe: StringId(2),
            cmdline: StringId(5),
        }],
        ..Tables::default()
    }
}

#[test]
fn short_lived_process_is_present_with_its_fork_parent() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 100)
        .fork(1000, 0, (100, 100), (200, 200))
        .wakeup_new(1100, 0, 100, 200)
        .switch(2000, 0, 100, S, 200)
        .exec(2500, 0, 200, 3, 4)
        .exit(8000, 0, 200)
        .wake_by(8500, 0, 200, 100)
        .switch(9000, 0, 200, TaskState::ZOMBIE, 100)
        .switch(20_000, 0, 100, S, 0);
    let m = s.model_with(&fork_tables(), 1);
    let child = m.thread(Tid(200)).expect("short-lived thread is present");
    assert_eq!(child.created, Some(Timestamp(1000)));
    assert_eq!(child.parent_tid, Some(Tid(100)));
    assert_eq!(child.exited, Some(Timestamp(8000)));
    assert_eq!(child.tgid, Some(Tgid(200)));
    assert_eq!(child.comm, "worker");
    assert_eq!(child.identity.len(), 2);
    assert_eq!(child.identity[0].comm, "bash");
    assert_eq!(
        child.identity_at(Timestamp(3000)).map(|i| i.comm.as_str()),
        Some("worker")
    );
    assert_eq!(
        child.segments,
        vec![
            seg(1100, 2000, true, true, runnable(0, false)),
            seg(2000, 9000, true, true, running(0)),
        ]
    );
    let parent = m.thread(Tid(100)).unwrap();
    assert_eq!(parent.comm, "bash");
    assert_eq!(parent.tgid, Some(Tgid(100)));

    let p200 = m.process(Tgid(200)).unwrap();
    assert_eq!(p200.parent, Some(Tgid(100)));
    assert_eq!(p200.started, Some(Timestamp(1000)));
    assert_eq!(p200.exited, Some(Timestamp(8000)));
    assert_eq!(p200.threads, vec![Tid(200)]);
    assert_eq!(p200.exe(), "/usr/bin/worker");
    assert_eq!(p200.comm, "worker");
    let p100 = m.process(Tgid(100)).unwrap();
    assert_eq!(p100.children, vec![Tgid(200)]);
    assert_eq!(p100.parent, Some(Tgid(1)));
    assert_eq!(p100.exe(), "/bin/bash");
    assert_eq!(p100.images[0].cmdline, "bash -c x");
    assert_eq!(p100.exited, None);
    assert_eq!(m.stats().anomalies(), 0, "{:?}", m.stats());
    assert_conserved(&m);
}

#[test]
fn new_thread_of_same_process_joins_its_thread_list() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 100)
        .fork(10, 0, (100, 100), (101, 100))
        .wakeup_new(11, 1, 100, 101)
        .switch(12, 1, 0, R, 101);
    let m = s.model_with(&fork_tables(), 2);
    let p = m.process(Tgid(100)).unwrap();
    assert_eq!(p.threads, vec![Tid(100), Tid(101)]);
    assert!(p.children.is_empty());
    assert_eq!(m.thread(Tid(101)).unwrap().comm, "bash");
}

#[test]
fn reused_tid_gives_two_threads() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 100)
        .fork(10, 0, (100, 100), (200, 200))
        .wakeup_new(11, 0, 100, 200)
        .switch(20, 0, 100, S, 200)
        .switch(30, 0, 200, TaskState::DEAD, 0)
        .fork(40, 1, (50, 50), (200, 200))
        .wakeup_new(41, 1, 50, 200)
        .switch(42, 1, 50, S, 200);
    let m = s.model(2);
    let both = m.threads_with_tid(Tid(200));
    assert_eq!(both.len(), 2);
    assert_eq!(both[0].span().unwrap().end, Timestamp(30));
    assert_eq!(both[1].created, Some(Timestamp(40)));
    assert_eq!(both[1].parent_tid, Some(Tid(50)));
    assert_eq!(m.stats().anomalies(), 0, "{:?}", m.stats());
}

#[test]
fn switch_in_without_wakeup_is_counted_and_end_marked_unknown() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 10)
        .switch(100, 0, 10, S, 0)
        .switch(300, 0, 0, R, 10);
    let m = s.model(1);
    assert_eq!(
        segs(&m, 10)[1],
        seg(100, 300, true, false, blocked(Some(S), None))
    );
    assert_eq!(m.stats().switch_in_without_wakeup, 1);
    assert_conserved(&m);
}

#[test]
fn wakeup_of_running_thread_does_not_change_state() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 10)
        .wake_by(50, 1, 20, 10)
        .switch(100, 0, 10, S, 0);
    let m = s.model(2);
    assert_eq!(segs(&m, 10)[0], seg(0, 100, true, true, running(0)));
    assert_eq!(m.thread(Tid(10)).unwrap().totals.wakeups_not_blocked, 1);
    assert_eq!(m.stats().wakeups_not_blocked, 1);
    assert_eq!(m.stats().anomalies(), 0);
}

#[test]
fn block_requests_match_issue_to_completion() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 10)
        .block_issue(100, 0, 10, (8, 4096), 512)
        .block_issue(150, 0, 10, (8, 8192), 512)
        .block_complete(1100, 1, (8, 4096))
        .block_complete(1200, 1, (9, 1))
        // An empty preflush write completed by the flush machinery: never issued.
        .push(
            1300,
            1,
            causeway_format::EventKind::BlockComplete {
                dev: causeway_format::DevId(9),
                sector: 0,
                bytes: 0,
                op: causeway_format::BlockOp::from_bits(1 | 1 << 5),
                error: 0,
            },
        );
    let m = s.model(2);
    assert_eq!(m.stats().dataless_flush_completions, 1);
    assert_eq!(m.block_requests().len(), 1);
    let r = m.block_requests()[0];
    assert_eq!((r.latency().0, r.issue_tid, r.bytes), (1000, Tid(10), 512));
    assert_eq!(m.stats().unmatched_block_completions, 1);
    assert_eq!(m.stats().block_in_flight_at_end, 1);
}

#[test]
fn busy_wait_annotations_are_kept() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 10)
        .marker(10, 0, 10, Marker::SpinBegin { id: 1 })
        .marker(
            20,
            0,
            10,
            Marker::MethodEnter {
                method: StringId(0),
            },
        )
        .marker(90, 0, 10, Marker::SpinEnd { id: 1 });
    let m = s.model(1);
    let t = m.thread(Tid(10)).unwrap();
    assert_eq!(t.annotations.len(), 2);
    assert_eq!(m.stats().anomalies(), 0);
}

#[test]
fn out_of_order_events_are_counted_and_clamped() {
    let mut s = Synth::new();
    s.switch(1000, 0, 0, R, 10)
        .switch(500, 0, 10, S, 0)
        .wake_by(900, 1, 3, 10);
    let m = Model::from_events(
        &Tables::default(),
        &causeway_format::Header::synthetic(2),
        s.events_unsorted(),
    );
    assert_eq!(m.stats().out_of_order_events, 2);
    assert_conserved(&m);
}

#[test]
fn from_reader_matches_from_events() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 10)
        .switch(100, 0, 10, S, 0)
        .stack(100, 0, 10, StackKind::SwitchOut, Some(1), None)
        .wake_by(300, 1, 3, 10)
        .switch(350, 0, 0, R, 10);
    let bytes = s.to_trace_bytes(2).unwrap();
    let mut rd = TraceReader::from_bytes(&bytes).unwrap();
    let from_reader = Model::from_reader(&mut rd).unwrap();
    assert_eq!(from_reader, s.model(2));
}

#[test]
fn empty_stream_gives_empty_model() {
    let m = Synth::new().model(4);
    assert!(m.span().is_none());
    assert_eq!(m.threads().count(), 0);
    assert_eq!(m.cpus().len(), 4);
}

#[test]
fn wakeup_racing_with_switch_out_makes_thread_runnable_not_blocked() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 10)
        .wake_by(100, 1, 20, 10) // seen while 10 is still switching out
        .switch(101, 0, 10, S, 0)
        .switch(400, 0, 0, R, 10);
    let m = s.model(2);
    let wake = WakeInfo {
        ts: Timestamp(101),
        cpu: Cpu(1),
        target_cpu: Cpu(1),
        waker: thread_waker(20),
        waker_stack: None,
        waker_stack_weight: 1,
    };
    assert_eq!(
        segs(&m, 10),
        vec![
            seg(0, 101, true, true, running(0)),
            seg(101, 101, true, true, blocked(Some(S), Some(wake))),
            seg(101, 400, true, true, runnable(1, false)),
            seg(400, 400, true, false, running(0)),
        ]
    );
    assert_eq!(m.stats().wakeups_before_switch_out, 1);
    assert_eq!(m.stats().anomalies(), 0);
}

#[test]
fn expected_stacks_without_a_segment_are_not_anomalies() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 100)
        .fork(10, 0, (100, 100), (101, 100))
        .wakeup_new(11, 0, 100, 101)
        .stack(11, 0, 100, StackKind::Waker, Some(1), None)
        .wake_by(20, 0, 100, 100)
        .stack(20, 0, 100, StackKind::Waker, Some(1), None)
        .switch(30, 0, 100, R, 0)
        .stack(30, 0, 100, StackKind::SwitchOut, Some(1), None)
        .switch(40, 0, 0, R, 101)
        .stack(40, 0, 0, StackKind::SwitchOut, None, Some(2))
        .stack(50, 0, 101, StackKind::Waker, Some(1), None);
    let m = s.model(1);
    // Only the last stack follows no event it could belong to.
    assert_eq!(m.stats().unattached_stacks, 1, "{:?}", m.stats());
}

/// In a per-process trace, a CPU's next recorded switch naming a thread other than the
/// one switched in last is expected (other processes ran unrecorded): it is counted as
/// outside the scope, not as an anomaly, and the timelines are the same.
#[test]
fn per_process_traces_count_unrecorded_switches_apart() {
    let mut s = Synth::new();
    s.switch(1000, 0, 0, R, 5).switch(2000, 0, 10, S, 0);
    let tables = Tables::default();
    let mut header = causeway_format::Header::synthetic(2);
    header.scope = causeway_format::Scope::Processes;
    let mut b = causeway_model::ModelBuilder::new(&tables, &header);
    for ev in &s.events() {
        b.push(ev);
    }
    let partial = b.finish();
    let full = s.model(2);
    assert_eq!(full.stats().cpu_current_mismatch, 1);
    assert_eq!(full.stats().anomalies(), 1);
    assert_eq!(partial.stats().cpu_current_mismatch, 0);
    assert_eq!(partial.stats().outside_scope, 1);
    assert_eq!(partial.stats().anomalies(), 0);
    assert_eq!(segs(&partial, 10), segs(&full, 10));
    assert_eq!(segs(&partial, 5), segs(&full, 5));
}

#[test]
fn wakeups_link_the_wakers_running_segment() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 10) // 10 runs on CPU 0
        .switch(0, 1, 0, R, 20) // 20 runs on CPU 1
        .switch(100, 0, 10, S, 0) // 10 blocks
        .switch(200, 1, 20, S, 30) // 20 blocks, 30 runs on CPU 1
        .wake_by(300, 1, 30, 10) // 30 wakes 10
        .switch(350, 0, 0, R, 10)
        .switch(400, 1, 30, S, 20); // 30 blocks and 20 runs (no wake-up seen)
    let m = s.model(2);
    let th = |tid| {
        m.threads()
            .position(|t| t.tid == Tid(tid))
            .and_then(|i| u32::try_from(i).ok())
            .unwrap()
    };
    let waked = m.thread(Tid(10)).unwrap();
    let (index, seg) = waked
        .segments
        .iter()
        .enumerate()
        .find(|(_, s)| s.wake().is_some())
        .unwrap();
    let w = seg.wake().unwrap();
    let wakee = SegmentId {
        thread: th(10),
        index: u32::try_from(index).unwrap(),
    };
    let id = m.waker_segment(wakee).expect("a thread waker is linked");
    assert_eq!(id.thread, th(30));
    let seg = m.segment(id).unwrap();
    assert!(seg.state.is_running());
    assert!(seg.start <= w.ts && w.ts < seg.end);
    assert_eq!(m.thread_index_at(Tid(30), w.ts), Some(th(30)));
    assert_eq!(m.thread_by_index(id.thread).map(|t| t.tid), Some(Tid(30)));
}

/// A flight dump whose trigger fired on a stall still going on ends at the trigger, not
/// at its last event: the stall is as long in the model as when it fired.
#[test]
fn a_trigger_mark_after_the_last_event_closes_the_timelines_there() {
    use causeway_format::{Header, TraceWriter, TriggerMark, TriggerReason};
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 10).switch(1000, 0, 10, S, 0);
    let header = Header::synthetic(1);
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    for ev in s.events() {
        w.push(&ev).unwrap();
    }
    w.set_trigger(TriggerMark {
        reason: TriggerReason::Blocked,
        ts_ns: 50_000,
        tid: Some(10),
        stall_start_ns: Some(1000),
    });
    let bytes = w.finish().unwrap();
    let mut rd = TraceReader::from_bytes(&bytes).unwrap();
    let m = Model::from_reader(&mut rd).unwrap();
    let last = *segs(&m, 10).last().unwrap();
    assert_eq!(last, seg(1000, 50_000, true, false, blocked(Some(S), None)));
    assert_eq!(m.span().unwrap().end, Timestamp(50_000));
    // Without the mark the same events end at the last one.
    assert_eq!(segs(&s.model(1), 10).last().unwrap().end, Timestamp(1000));
}

/// A datagram's wake-up that arrives while its receiver is still switching out (the
/// two CPUs' records out of step) still ties the wait to the thread that sent it: the
/// socket's mark is held until the switch-out makes the wait it ends.
#[test]
fn a_data_wakeup_racing_the_switch_out_names_the_sender() {
    use causeway_format::{EventKind, Flow, FlowId, SockFamily, SockProto};
    let a = causeway_format::Endpoint::v4([127, 0, 0, 1], 4000);
    let b = causeway_format::Endpoint::v4([127, 0, 0, 1], 5000);
    let sent = Flow {
        family: SockFamily::INET,
        proto: SockProto::UDP,
        local: a,
        remote: b,
    };
    let tables = Tables {
        flows: vec![sent, sent.reversed()],
        ..Tables::default()
    };
    let mut s = Synth::new();
    s.switch(0, 0, 0, R, 10)
        .switch(0, 1, 0, R, 20)
        // 20's data reaches 10 (a softirq on CPU 1) before 10's switch-out is seen.
        .wakeup(
            100,
            1,
            10,
            0,
            Waker::Softirq {
                vec: SoftirqVec::NET_RX,
            },
        )
        .push(
            100,
            1,
            EventKind::SockReady {
                wakee: Tid(10),
                host: Tid(20),
                flow: FlowId(1),
                seq: None,
            },
        )
        .push(
            102,
            1,
            EventKind::SockSend {
                tid: Tid(20),
                flow: FlowId(0),
                bytes: 32,
                seq: None,
            },
        )
        .switch(101, 0, 10, S, 0)
        .switch(400, 0, 0, R, 10);
    let m = s.model_with(&tables, 2);
    let th = m.thread(Tid(10)).unwrap();
    let (i, w) = th
        .segments
        .iter()
        .enumerate()
        .find_map(|(i, s)| s.wake().map(|w| (i, w)))
        .expect("the raced wait");
    assert_eq!(w.waker, thread_waker(20));
    let d = th.data_wake(i as u32).expect("its data wake-up");
    assert_eq!(d.sender, Tid(20));
    assert_eq!(m.stats().data_marks_unattached, 0);
    assert_eq!(m.stats().wakeups_before_switch_out, 1);
}
