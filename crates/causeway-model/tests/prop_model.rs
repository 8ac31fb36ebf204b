//! Property tests: for any event stream, valid-ish or garbage, the builder does not
//! panic and every timeline is contiguous and conserves time.

use causeway_format::{
    BlockOp, Cpu, DevId, Event, EventKind, Header, Marker, SoftirqVec, StackId, StackKind,
    StringId, Tables, TaskState, Tgid, Tid, Timestamp, Waker,
};
use causeway_model::{Model, SegmentId};
use proptest::prelude::*;

fn task_state() -> impl Strategy<Value = TaskState> {
    prop_oneof![
        3 => Just(TaskState::RUNNABLE),
        3 => Just(TaskState::INTERRUPTIBLE),
        2 => Just(TaskState::UNINTERRUPTIBLE),
        1 => Just(TaskState::PREEMPTED),
        1 => Just(TaskState::ZOMBIE),
        1 => Just(TaskState::DEAD),
        1 => any::<u16>().prop_map(TaskState),
    ]
}

fn waker(tid: impl Strategy<Value = u32> + Clone) -> impl Strategy<Value = Waker> {
    prop_oneof![
        3 => tid.prop_map(|t| Waker::Thread { tid: Tid(t) }),
        1 => (0u32..4).prop_map(|irq| Waker::Irq { irq, name: StringId(irq) }),
        1 => (0u8..10).prop_map(|v| Waker::Softirq { vec: SoftirqVec(v) }),
        1 => Just(Waker::Unknown),
    ]
}

fn stack_kind() -> impl Strategy<Value = StackKind> {
    prop_oneof![
        Just(StackKind::SwitchOut),
        Just(StackKind::Waker),
        Just(StackKind::Syscall),
        Just(StackKind::Other),
    ]
}

/// Event kinds over `ntid` threads and `ncpu` CPUs.
fn kind(ntid: u32, ncpu: u32) -> impl Strategy<Value = EventKind> {
    let tid = 0..ntid;
    let cpu = 0..ncpu;
    let op = BlockOp::from_bits(1);
    prop_oneof![
        8 => (tid.clone(), task_state(), tid.clone()).prop_map(|(p, s, n)| EventKind::SchedSwitch {
            prev_tid: Tid(p), prev_state: s, next_tid: Tid(n)
        }),
        5 => (tid.clone(), cpu.clone(), waker(tid.clone())).prop_map(|(w, c, k)| EventKind::Wakeup {
            wakee: Tid(w), target_cpu: Cpu(c), waker: k
        }),
        1 => (tid.clone(), cpu.clone(), waker(tid.clone())).prop_map(|(w, c, k)| EventKind::WakeupNew {
            wakee: Tid(w), target_cpu: Cpu(c), waker: k
        }),
        1 => (tid.clone(), tid.clone(), any::<bool>()).prop_map(|(p, c, same)| EventKind::Fork {
            parent_tid: Tid(p), parent_tgid: Tgid(p), child_tid: Tid(c),
            child_tgid: Tgid(if same { p } else { c }),
        }),
        1 => tid.clone().prop_map(|t| EventKind::Exit { tid: Tid(t) }),
        1 => tid.clone().prop_map(|t| EventKind::Exec { tid: Tid(t), comm: StringId(1), filename: StringId(99) }),
        1 => (1u64..100).prop_map(|count| EventKind::Lost { count }),
        2 => (tid.clone(), stack_kind(), any::<Option<u8>>()).prop_map(|(t, k, u)| EventKind::Stack {
            tid: Tid(t), kind: k, user: u.map(|u| StackId(u as u32)), kernel: None
        }),
        1 => (0u32..3).prop_map(|irq| EventKind::IrqEntry { irq, name: StringId(irq) }),
        1 => (0u32..3).prop_map(|irq| EventKind::IrqExit { irq, handled: true }),
        1 => (0u8..3).prop_map(|v| EventKind::SoftirqEntry { vec: SoftirqVec(v) }),
        1 => (0u8..3).prop_map(|v| EventKind::SoftirqExit { vec: SoftirqVec(v) }),
        1 => (tid.clone(), 0u32..4).prop_map(|(t, nr)| EventKind::SyscallEnter { tid: Tid(t), nr, args: [0; 3] }),
        1 => (tid.clone(), 0u32..4).prop_map(|(t, nr)| EventKind::SyscallExit { tid: Tid(t), nr, ret: 0 }),
        1 => (tid.clone(), 0u64..4).prop_map(move |(t, sector)| EventKind::BlockIssue {
            tid: Tid(t), dev: DevId(1), sector, bytes: 512, op
        }),
        1 => (0u64..4).prop_map(move |sector| EventKind::BlockComplete {
            dev: DevId(1), sector, bytes: 512, op, error: 0
        }),
        1 => tid.prop_map(|t| EventKind::Marker { tid: Tid(t), marker: Marker::FalseWakeup }),
    ]
}

/// Time-ordered streams over few threads and CPUs; a stack often follows its event.
fn ordered_stream() -> impl Strategy<Value = Vec<Event>> {
    prop::collection::vec(
        (
            0u64..50,
            0u32..3,
            kind(6, 3),
            prop::option::of(stack_kind()),
        ),
        0..300,
    )
    .prop_map(|items| {
        let mut ts = 1_000;
        let mut out = Vec::new();
        for (dt, cpu, kind, stack) in items {
            ts += dt;
            let (ts, cpu) = (Timestamp(ts), Cpu(cpu));
            out.push(Event { ts, cpu, kind });
            if let (Some(k), Some(tid)) = (stack, kind.tids().next()) {
                out.push(Event {
                    ts,
                    cpu,
                    kind: EventKind::Stack {
                        tid,
                        kind: k,
                        user: Some(StackId(1)),
                        kernel: None,
                    },
                });
            }
        }
        out
    })
}

/// Anything: timestamps in any order, any CPU number, reused ids.
fn garbage_stream() -> impl Strategy<Value = Vec<Event>> {
    prop::collection::vec(
        (
            prop_oneof![any::<u64>(), 0u64..100],
            prop_oneof![any::<u32>(), 0u32..4],
            kind(5, 8),
        ),
        0..200,
    )
    .prop_map(|v| {
        v.into_iter()
            .map(|(ts, cpu, kind)| Event {
                ts: Timestamp(ts),
                cpu: Cpu(cpu),
                kind,
            })
            .collect()
    })
}

fn check_invariants(m: &Model, ncpu: u32) {
    let span = m.span();
    let mut last_tid = None;
    for t in m.threads() {
        assert!(!t.tid.is_idle());
        assert!(last_tid <= Some(t.tid), "threads sorted by tid");
        last_tid = Some(t.tid);
        for s in &t.segments {
            assert!(s.start <= s.end, "tid {}: {s:?}", t.tid);
        }
        for w in t.segments.windows(2) {
            assert_eq!(
                w[0].end, w[1].start,
                "tid {} not contiguous: {:?}",
                t.tid, t.segments
            );
        }
        let Some(ts) = t.span() else { continue };
        let s = span.expect("a thread implies events");
        assert!(
            s.start <= ts.start && ts.end <= s.end,
            "tid {} outside the trace",
            t.tid
        );
        let sum: u64 = t.segments.iter().map(|s| s.duration().0).sum();
        assert_eq!(sum, ts.duration().0, "tid {}: time not conserved", t.tid);
        assert_eq!(t.totals.accounted(), ts.duration(), "tid {}", t.tid);
        assert!(t.totals.first_seen <= t.totals.last_seen);
    }
    if let Some(s) = span {
        for c in m.cpus() {
            assert_eq!(
                (c.busy + c.idle + c.unknown).0,
                s.duration().0,
                "cpu {} time not conserved",
                c.cpu
            );
        }
    }
    if ncpu <= 1 << 16 {
        assert!(m.cpus().len() >= ncpu as usize);
    }
    for i in m.interrupts() {
        assert!(i.start <= i.end);
    }
}

/// The waker segment of every wait, found the slow way, one wake-up at a time: the
/// waker thread alive at the wake-up, then a linear scan of its timeline.
fn check_wake_links(m: &Model) {
    let threads: Vec<_> = m.threads().collect();
    for (ti, t) in threads.iter().enumerate() {
        for (si, seg) in t.segments.iter().enumerate() {
            let wakee = SegmentId {
                thread: ti as u32,
                index: si as u32,
            };
            let expected = seg.wake().and_then(|w| {
                let Waker::Thread { tid } = w.waker else {
                    return None;
                };
                if tid.is_idle() {
                    return None;
                }
                let wt = m.thread_index_at(tid, w.ts)?;
                let segs = &threads[wt as usize].segments;
                // The last segment started by then; the running one just before it
                // if that ended exactly then and this one is not running.
                let i = segs.iter().rposition(|s| s.start <= w.ts)?;
                let index = if !segs[i].state.is_running()
                    && i > 0
                    && segs[i - 1].end == w.ts
                    && segs[i - 1].state.is_running()
                {
                    i - 1
                } else if w.ts < segs[i].end || segs[i].state.is_running() {
                    i
                } else {
                    return None;
                };
                Some(SegmentId {
                    thread: wt,
                    index: index as u32,
                })
            });
            assert_eq!(m.waker_segment(wakee), expected, "wait {wakee:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn wake_links_match_a_brute_force_search(events in ordered_stream()) {
        let m = Model::from_events(&Tables::default(), &Header::synthetic(3), &events);
        check_wake_links(&m);
    }

    #[test]
    fn ordered_streams_give_contiguous_conserving_timelines(events in ordered_stream()) {
        let m = Model::from_events(&Tables::default(), &Header::synthetic(3), &events);
        check_invariants(&m, 3);
        prop_assert_eq!(m.stats().out_of_order_events, 0);
        prop_assert_eq!(m.stats().events, events.len() as u64);
    }

    #[test]
    fn garbage_streams_never_panic_and_keep_invariants(
        events in garbage_stream(),
        ncpu in prop_oneof![Just(u32::MAX), 0u32..8],
    ) {
        let m = Model::from_events(&Tables::default(), &Header::synthetic(ncpu), &events);
        check_invariants(&m, ncpu);
    }
}
