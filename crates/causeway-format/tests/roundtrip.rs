//! Writer → reader round trips of random event streams and tables, time-range reads,
//! and forward compatibility (unknown event kinds, marker types, appended fields,
//! block kinds and minor versions are skipped and counted, not fatal).

mod common;

use causeway_format::block::BlockKind;
use causeway_format::codec::{ChunkEncoder, push_raw_sized};
use causeway_format::writer::BlockSink;
use causeway_format::{
    BlockOp, BlockOpKind, Cpu, DataFlagAccess, DevId, Event, EventKind, FormatError, Frame,
    FrameId, FrameSpace, Header, InlinedFrame, Mapping, Marker, ProcessInfo, Signal, SignalResult,
    SoftirqVec, Stack, StackId, StackKind, StringId, Tables, TaskState, Tgid, ThreadInfo, Tid,
    TimeRange, Timestamp, TraceReader, TraceWriter, Waker, WriterOptions,
};
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};

fn tid() -> impl Strategy<Value = Tid> {
    prop_oneof![3 => 0u32..64, 1 => any::<u32>()].prop_map(Tid)
}

fn string_id() -> impl Strategy<Value = StringId> {
    prop_oneof![3 => 0u32..32, 1 => any::<u32>()].prop_map(StringId)
}

fn waker() -> impl Strategy<Value = Waker> {
    prop_oneof![
        tid().prop_map(|tid| Waker::Thread { tid }),
        (any::<u32>(), string_id()).prop_map(|(irq, name)| Waker::Irq { irq, name }),
        any::<u8>().prop_map(|v| Waker::Softirq { vec: SoftirqVec(v) }),
        Just(Waker::Unknown),
    ]
}

fn marker() -> impl Strategy<Value = Marker> {
    prop_oneof![
        any::<u64>().prop_map(|id| Marker::SpinBegin { id }),
        any::<u64>().prop_map(|id| Marker::SpinEnd { id }),
        Just(Marker::FalseWakeup),
        any::<u64>().prop_map(|addr| Marker::FlagRead { addr }),
        any::<u64>().prop_map(|addr| Marker::FlagWrite { addr }),
        (any::<u64>(), any::<bool>(), any::<u64>()).prop_map(|(addr, w, ip)| Marker::DataFlag {
            addr,
            access: if w {
                DataFlagAccess::Write
            } else {
                DataFlagAccess::Read
            },
            ip,
        }),
        string_id().prop_map(|method| Marker::MethodEnter { method }),
        string_id().prop_map(|method| Marker::MethodExit { method }),
        (string_id(), any::<u64>()).prop_map(|(name, id)| Marker::SpanBegin { name, id }),
        (string_id(), any::<u64>()).prop_map(|(name, id)| Marker::SpanEnd { name, id }),
    ]
}

fn block_op() -> impl Strategy<Value = BlockOp> {
    let kind = prop_oneof![
        Just(BlockOpKind::Read),
        Just(BlockOpKind::Write),
        Just(BlockOpKind::Flush),
        Just(BlockOpKind::Discard),
        Just(BlockOpKind::Other),
    ];
    (kind, any::<[bool; 4]>()).prop_map(|(kind, [sync, fua, preflush, meta])| BlockOp {
        kind,
        sync,
        fua,
        preflush,
        meta,
    })
}

fn stack_kind() -> impl Strategy<Value = StackKind> {
    prop_oneof![
        Just(StackKind::SwitchOut),
        Just(StackKind::Waker),
        Just(StackKind::WakerSample),
        Just(StackKind::Syscall),
        Just(StackKind::Sample),
        Just(StackKind::Other),
    ]
}

fn cpu() -> impl Strategy<Value = Cpu> {
    (0u32..8).prop_map(Cpu)
}

/// Every event kind with values over the whole range of each field.
fn event_kind() -> impl Strategy<Value = EventKind> {
    prop_oneof![
        4 => (tid(), any::<u16>(), tid()).prop_map(|(prev_tid, s, next_tid)| {
            EventKind::SchedSwitch { prev_tid, prev_state: TaskState(s), next_tid }
        }),
        3 => (tid(), cpu(), waker())
            .prop_map(|(wakee, target_cpu, waker)| EventKind::Wakeup { wakee, target_cpu, waker }),
        1 => (tid(), any::<u32>().prop_map(Cpu), waker()).prop_map(|(wakee, target_cpu, waker)| {
            EventKind::WakeupNew { wakee, target_cpu, waker }
        }),
        1 => (tid(), any::<u32>(), tid(), any::<u32>()).prop_map(|(pt, pg, ct, cg)| {
            EventKind::Fork {
                parent_tid: pt,
                parent_tgid: Tgid(pg),
                child_tid: ct,
                child_tgid: Tgid(cg),
            }
        }),
        1 => (tid(), string_id(), string_id())
            .prop_map(|(tid, comm, filename)| EventKind::Exec { tid, comm, filename }),
        1 => tid().prop_map(|tid| EventKind::Exit { tid }),
        1 => (any::<u32>(), string_id()).prop_map(|(irq, name)| EventKind::IrqEntry { irq, name }),
        1 => (any::<u32>(), any::<bool>())
            .prop_map(|(irq, handled)| EventKind::IrqExit { irq, handled }),
        1 => any::<u8>().prop_map(|v| EventKind::SoftirqEntry { vec: SoftirqVec(v) }),
        1 => any::<u8>().prop_map(|v| EventKind::SoftirqExit { vec: SoftirqVec(v) }),
        1 => (tid(), any::<u32>(), any::<u64>(), any::<u32>(), block_op()).prop_map(
            |(tid, dev, sector, bytes, op)| EventKind::BlockIssue {
                tid,
                dev: DevId(dev),
                sector,
                bytes,
                op,
            }
        ),
        1 => (any::<u32>(), any::<u64>(), any::<u32>(), block_op(), any::<i32>()).prop_map(
            |(dev, sector, bytes, op, error)| EventKind::BlockComplete {
                dev: DevId(dev),
                sector,
                bytes,
                op,
                error,
            }
        ),
        1 => (tid(), string_id(), any::<u32>())
            .prop_map(|(tid, dev, bytes)| EventKind::NetXmit { tid, dev, bytes }),
        1 => (tid(), string_id(), any::<u32>())
            .prop_map(|(tid, dev, bytes)| EventKind::NetRecv { tid, dev, bytes }),
        2 => (tid(), any::<u32>(), any::<[u64; 3]>())
            .prop_map(|(tid, nr, args)| EventKind::SyscallEnter { tid, nr, args }),
        2 => (tid(), any::<u32>(), any::<i64>())
            .prop_map(|(tid, nr, ret)| EventKind::SyscallExit { tid, nr, ret }),
        2 => (
            tid(),
            stack_kind(),
            proptest::option::of(any::<u32>().prop_map(StackId)),
            proptest::option::of(any::<u32>().prop_map(StackId)),
        )
            .prop_map(|(tid, kind, user, kernel)| EventKind::Stack { tid, kind, user, kernel }),
        1 => (tid(), tid(), any::<u32>(), any::<u8>(), any::<bool>(), any::<u8>()).prop_map(
            |(sender, target, g, sig, group, result)| EventKind::SignalGenerate {
                sender,
                target,
                target_tgid: Tgid(g),
                sig: Signal(sig),
                group,
                result: SignalResult(result),
            }
        ),
        1 => (tid(), any::<u8>())
            .prop_map(|(tid, sig)| EventKind::SignalDeliver { tid, sig: Signal(sig) }),
        1 => (tid(), any::<u64>(), proptest::option::of(0u64..u64::MAX)).prop_map(
            |(tid, timer, expires)| EventKind::TimerArm {
                tid,
                timer,
                expires: expires.map(Timestamp),
            }
        ),
        1 => any::<u64>().prop_map(|timer| EventKind::TimerExpire { timer }),
        1 => (tid(), any::<u32>(), any::<u32>(), proptest::option::of(any::<u32>())).prop_map(
            |(tid, flow, bytes, seq)| EventKind::SockSend {
                tid,
                flow: causeway_format::FlowId(flow),
                bytes,
                seq,
            }
        ),
        1 => (tid(), tid(), any::<u32>(), proptest::option::of(any::<u32>())).prop_map(
            |(wakee, host, flow, seq)| EventKind::SockReady {
                wakee,
                host,
                flow: causeway_format::FlowId(flow),
                seq,
            }
        ),
        1 => (tid(), any::<u64>(), any::<u64>(), proptest::option::of(0u32..u32::MAX)).prop_map(
            |(tid, goid, parent, start)| EventKind::GoRun {
                tid,
                goid,
                parent,
                start: start.map(causeway_format::StackId),
            }
        ),
        1 => (tid(), any::<u64>(), any::<u32>()).prop_map(|(tid, goid, reason)| {
            EventKind::GoPark {
                tid,
                goid,
                reason: causeway_format::StringId(reason),
            }
        }),
        1 => (tid(), any::<u64>(), any::<u64>())
            .prop_map(|(tid, goid, by)| EventKind::GoReady { tid, goid, by }),
        1 => (tid(), any::<u64>(), any::<u32>(), proptest::option::of(any::<u32>())).prop_map(
            |(tid, goid, flow, seq)| EventKind::GoNetWait {
                tid,
                goid,
                flow: causeway_format::FlowId(flow),
                seq,
            }
        ),
        2 => (tid(), marker()).prop_map(|(tid, marker)| EventKind::Marker { tid, marker }),
        1 => any::<u64>().prop_map(|count| EventKind::Lost { count }),
    ]
}

/// One step of building a trace: an event, or a table row added between events.
#[derive(Clone, Debug)]
enum Op {
    /// An event on `cpu`, `dt` after the previous event of that CPU (or at `dt` itself
    /// when timestamps are shuffled).
    Event(Cpu, u64, EventKind),
    Str(String),
    Thread(ThreadInfo),
    Process(ProcessInfo),
    Mapping(Mapping),
    Frame(Frame),
    Stack(Vec<u32>, bool),
    Counter(String, u64),
}

fn op() -> impl Strategy<Value = Op> {
    let dt = prop_oneof![3 => 0u64..5_000, 1 => Just(0u64), 1 => 0u64..(1 << 40)];
    prop_oneof![
        30 => (cpu(), dt, event_kind()).prop_map(|(c, dt, k)| Op::Event(c, dt, k)),
        1 => "[a-z/]{0,12}".prop_map(Op::Str),
        1 => (any::<u32>(), any::<u32>(), any::<u64>(), string_id()).prop_map(|(t, g, s, c)| {
            Op::Thread(ThreadInfo { tid: Tid(t), tgid: Tgid(g), since: Timestamp(s), comm: c })
        }),
        1 => (any::<u32>(), proptest::option::of(any::<u32>()), any::<u64>(), string_id(), string_id())
            .prop_map(|(g, p, s, exe, cmdline)| Op::Process(ProcessInfo {
                tgid: Tgid(g),
                parent: p.map(Tgid),
                since: Timestamp(s),
                exe,
                cmdline,
            })),
        1 => (any::<u32>(), any::<u64>(), any::<[u64; 3]>(), string_id(),
              proptest::collection::vec(any::<u8>(), 0..24))
            .prop_map(|(g, s, [start, end, off], path, build_id)| Op::Mapping(Mapping {
                tgid: Tgid(g),
                since: Timestamp(s),
                start,
                end,
                file_offset: off,
                path,
                build_id,
            })),
        1 => (
            (proptest::option::of(any::<u32>()), 0u64..8, string_id(), string_id(), any::<u64>()),
            (string_id(), 0u32..3, proptest::collection::vec((string_id(), string_id(), any::<u32>()), 0..3)),
        )
            .prop_map(|((space, addr, module, symbol, sym_offset), (file, line, inl))| {
                let mut f = Frame::new(
                    space.map_or(FrameSpace::Kernel, |t| FrameSpace::User { tgid: Tgid(t) }),
                    addr,
                    module,
                    symbol,
                    sym_offset,
                );
                // Source information (format 1.1) on some frames, none on others.
                f.file = file;
                f.line = line;
                f.inlined = inl
                    .into_iter()
                    .map(|(symbol, file, line)| InlinedFrame { symbol, file, line })
                    .collect();
                Op::Frame(f)
            }),
        1 => (proptest::collection::vec(0u32..6, 0..6), any::<bool>())
            .prop_map(|(f, t)| Op::Stack(f, t)),
        1 => ("[a-c]{1,2}", any::<u64>()).prop_map(|(n, v)| Op::Counter(n, v)),
    ]
}

fn options() -> impl Strategy<Value = WriterOptions> {
    (
        prop_oneof![1usize..6, 1usize..64, Just(16 * 1024)],
        prop_oneof![1usize..8, 1usize..200, Just(1 << 20)],
        prop_oneof![Just(1), Just(3), Just(-3), Just(9)],
    )
        .prop_map(
            |(chunk_events, max_buffered_events, zstd_level)| WriterOptions {
                chunk_events,
                max_buffered_events,
                zstd_level,
            },
        )
}

/// What a trace built from `ops` must read back as.
struct Expected {
    bytes: Vec<u8>,
    events: Vec<Event>,
    tables: Tables,
    lost: BTreeMap<u32, u64>,
    counters: BTreeMap<String, u64>,
}

fn build(ops: &[Op], shuffled: bool, opts: WriterOptions) -> Expected {
    let mut w = TraceWriter::with_options(Vec::new(), &Header::synthetic(8), opts).unwrap();
    let mut tables = Tables {
        strings: vec![String::new()],
        ..Tables::default()
    };
    let mut string_ids = HashMap::from([(String::new(), 0u32)]);
    let mut frame_ids: HashMap<Frame, u32> = HashMap::new();
    let mut stack_ids: HashMap<Stack, u32> = HashMap::new();
    let mut ts = [0u64; 8];
    let mut events = Vec::new();
    let mut lost = BTreeMap::new();
    let mut counters = BTreeMap::new();
    for op in ops {
        match op.clone() {
            Op::Event(cpu, dt, kind) => {
                let t = if shuffled {
                    dt
                } else {
                    ts[cpu.0 as usize] += dt;
                    ts[cpu.0 as usize]
                };
                let e = Event {
                    ts: Timestamp(t),
                    cpu,
                    kind,
                };
                if let EventKind::Lost { count } = kind {
                    let l: &mut u64 = lost.entry(cpu.0).or_default();
                    *l = l.saturating_add(count);
                }
                w.push(&e).unwrap();
                events.push(e);
            }
            Op::Str(s) => {
                let id = w.intern(&s);
                let want = *string_ids.entry(s.clone()).or_insert_with(|| {
                    tables.strings.push(s);
                    tables.strings.len() as u32 - 1
                });
                assert_eq!(id, StringId(want));
            }
            Op::Thread(t) => {
                w.add_thread(t.clone());
                tables.threads.push(t);
            }
            Op::Process(p) => {
                w.add_process(p.clone());
                tables.processes.push(p);
            }
            Op::Mapping(m) => {
                w.add_mapping(m.clone());
                tables.mappings.push(m);
            }
            Op::Frame(f) => {
                let id = w.intern_frame(f.clone());
                let want = *frame_ids.entry(f.clone()).or_insert_with(|| {
                    tables.frames.push(f);
                    tables.frames.len() as u32 - 1
                });
                assert_eq!(id, FrameId(want));
            }
            Op::Stack(frames, truncated) => {
                let s = Stack {
                    frames: frames.into_iter().map(FrameId).collect(),
                    truncated,
                };
                let id = w.intern_stack(s.clone());
                let want = *stack_ids.entry(s.clone()).or_insert_with(|| {
                    tables.stacks.push(s);
                    tables.stacks.len() as u32 - 1
                });
                assert_eq!(id, StackId(want));
            }
            Op::Counter(name, n) => {
                w.add_counter(&name, n);
                let c: &mut u64 = counters.entry(name).or_default();
                *c = c.saturating_add(n);
            }
        }
    }
    let bytes = w.finish().unwrap();
    Expected {
        bytes,
        events: common::merged_order(events),
        tables,
        lost,
        counters,
    }
}

fn check_round_trip(ops: &[Op], shuffled: bool, opts: WriterOptions) -> Result<(), TestCaseError> {
    let exp = build(ops, shuffled, opts);
    let mut rd = TraceReader::from_bytes(&exp.bytes).unwrap();
    prop_assert_eq!(rd.tables(), &exp.tables);
    let stats = rd.stats().clone();
    prop_assert_eq!(stats.events, exp.events.len() as u64);
    prop_assert_eq!(&stats.lost_per_cpu, &exp.lost);
    prop_assert_eq!(&stats.counters, &exp.counters);
    if !shuffled {
        prop_assert_eq!(stats.clock_inversions, 0);
    }
    prop_assert!(stats.clock_inversions <= stats.events);
    prop_assert_eq!(rd.event_count(), exp.events.len() as u64);
    let got: Vec<Event> = rd.events().collect::<Result<_, _>>().unwrap();
    prop_assert_eq!(&got, &exp.events);
    // A second pass over the same reader gives the same.
    let again: Vec<Event> = rd.events().collect::<Result<_, _>>().unwrap();
    prop_assert_eq!(&again, &exp.events);
    // Chunk by chunk, every event is there once.
    let mut all = Vec::new();
    for i in 0..rd.chunks().len() {
        rd.read_chunk_into(i, &mut all).unwrap();
    }
    prop_assert_eq!(all.len(), exp.events.len());
    prop_assert_eq!(rd.skipped_unknown_events(), 0);
    Ok(())
}

fn check_ranges(
    ops: &[Op],
    shuffled: bool,
    opts: WriterOptions,
    cuts: &[(usize, usize)],
) -> Result<(), TestCaseError> {
    let exp = build(ops, shuffled, opts);
    let mut rd = TraceReader::from_bytes(&exp.bytes).unwrap();
    let times: Vec<u64> = exp.events.iter().map(|e| e.ts.0).collect();
    let pick = |i: usize| times.get(i % times.len().max(1)).copied().unwrap_or(0);
    for &(a, b) in cuts {
        // Ranges at event times, between them, empty and reversed.
        for (start, end) in [
            (pick(a), pick(b)),
            (pick(a).saturating_add(1), pick(b).saturating_sub(1)),
            (pick(a), pick(a)),
            (0, pick(b)),
            (pick(a), u64::MAX),
        ] {
            let range = TimeRange {
                start: Timestamp(start),
                end: Timestamp(end),
            };
            let want: Vec<Event> = exp
                .events
                .iter()
                .filter(|e| range.contains(e.ts))
                .copied()
                .collect();
            let got: Vec<Event> = rd.events_in(range).collect::<Result<_, _>>().unwrap();
            prop_assert_eq!(got, want, "range {}..={}", start, end);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn round_trip_per_cpu_ordered(ops in proptest::collection::vec(op(), 0..400), opts in options()) {
        check_round_trip(&ops, false, opts)?;
    }

    #[test]
    fn round_trip_shuffled_times(ops in proptest::collection::vec(op(), 0..400), opts in options()) {
        check_round_trip(&ops, true, opts)?;
    }

    #[test]
    fn time_ranges_return_exactly_the_events_inside(
        ops in proptest::collection::vec(op(), 1..300),
        shuffled in any::<bool>(),
        opts in options(),
        cuts in proptest::collection::vec((any::<usize>(), any::<usize>()), 1..4),
    ) {
        check_ranges(&ops, shuffled, opts, &cuts)?;
    }
}

#[test]
fn many_tiny_chunks_merge_in_order() {
    let built = common::build_multi_chunk(5_000, 3);
    let rd = TraceReader::from_bytes(&built.bytes).unwrap();
    assert!(rd.chunks().len() > 1000);
    assert_eq!(common::read_events(&built.bytes), built.events);
}

#[test]
fn empty_trace_round_trips() {
    let bytes = causeway_format::write_to_vec(&Header::synthetic(1), &[], WriterOptions::default())
        .unwrap();
    let mut rd = TraceReader::from_bytes(&bytes).unwrap();
    assert_eq!(rd.events().count(), 0);
    assert_eq!(rd.time_range(), None);
    assert_eq!(rd.tables().strings, vec![String::new()]);
}

#[test]
fn lost_and_counter_totals_saturate_instead_of_overflowing() {
    let mut w = TraceWriter::new(Vec::new(), &Header::synthetic(1)).unwrap();
    for i in 0..3 {
        w.push(&Event {
            ts: Timestamp(i),
            cpu: Cpu(0),
            kind: EventKind::Lost { count: u64::MAX },
        })
        .unwrap();
        w.add_counter("c", u64::MAX);
    }
    let bytes = w.finish().unwrap();
    let rd = TraceReader::from_bytes(&bytes).unwrap();
    assert_eq!(rd.stats().lost_per_cpu[&0], u64::MAX);
    assert_eq!(rd.stats().counters["c"], u64::MAX);
}

// ---- Forward compatibility ----------------------------------------------------------

fn ev(ts: u64, kind: EventKind) -> Event {
    Event {
        ts: Timestamp(ts),
        cpu: Cpu(0),
        kind,
    }
}

/// A trace with one chunk built by `f` (which returns the chunk's last timestamp) and
/// optionally an extra block of a kind this version does not know.
fn trace_with_chunk(
    f: impl FnOnce(&mut ChunkEncoder) -> u64,
    unknown_block: Option<u8>,
) -> Vec<u8> {
    let mut sink = BlockSink::new(Vec::new(), &Header::synthetic(1)).unwrap();
    if let Some(code) = unknown_block {
        sink.write_block(
            BlockKind::Unknown(code),
            u32::MAX,
            1,
            (0, 0),
            b"a block from the future",
            Some(3),
        )
        .unwrap();
    }
    let mut enc = ChunkEncoder::new(Timestamp(100));
    let last = f(&mut enc);
    let count = enc.count;
    sink.write_block(
        BlockKind::Events,
        0,
        count,
        (100, last),
        enc.bytes(),
        Some(3),
    )
    .unwrap();
    sink.finish().unwrap()
}

#[test]
fn unknown_sized_event_kinds_are_skipped_and_counted() {
    let a = ev(
        100,
        EventKind::SchedSwitch {
            prev_tid: Tid(0),
            prev_state: TaskState::RUNNABLE,
            next_tid: Tid(7),
        },
    );
    let b = ev(130, EventKind::Exit { tid: Tid(7) });
    let c = ev(150, EventKind::Lost { count: 1 });
    let bytes = trace_with_chunk(
        |enc| {
            enc.push(&a);
            // A kind from a newer minor version, 10 ns later, with a payload.
            push_raw_sized(enc, 200, 10, &[1, 2, 3, 0xff, 0x80]);
            push_raw_sized(enc, 64 + 63, 0, &[]);
            enc.push(&b);
            push_raw_sized(enc, 255, 5, &[9; 300]);
            enc.push(&c);
            150
        },
        None,
    );
    let mut rd = TraceReader::from_bytes(&bytes).unwrap();
    let got: Vec<Event> = rd.events().collect::<Result<_, _>>().unwrap();
    assert_eq!(got, vec![a, b, c]);
    assert_eq!(rd.skipped_unknown_events(), 3);
    // Salvage agrees the chunk is intact.
    let rep = causeway_format::salvage::scan(&bytes);
    assert!(rep.is_clean(), "{:?}", rep.damage);
    assert_eq!(rep.intact_events(), 6);
}

#[test]
fn unknown_marker_types_and_appended_fields_are_tolerated() {
    let bytes = trace_with_chunk(
        |enc| {
            // Marker (71) of tid 5 with a marker type 200 from a newer version.
            push_raw_sized(enc, 71, 0, &[6, 200, 1, 2]);
            // Exit (66) of tid 42 with two fields a newer version appended.
            push_raw_sized(enc, 66, 20, &[43, 0x7f, 0x05]);
            // Fork (64) with an appended field.
            push_raw_sized(enc, 64, 1, &[2, 1, 3, 3, 99]);
            121
        },
        None,
    );
    let mut rd = TraceReader::from_bytes(&bytes).unwrap();
    let got: Vec<Event> = rd.events().collect::<Result<_, _>>().unwrap();
    assert_eq!(
        got,
        vec![
            ev(120, EventKind::Exit { tid: Tid(42) }),
            ev(
                121,
                EventKind::Fork {
                    parent_tid: Tid(1),
                    parent_tgid: Tgid(1),
                    child_tid: Tid(3),
                    child_tgid: Tgid(3),
                }
            ),
        ]
    );
    assert_eq!(rd.skipped_unknown_events(), 1);
}

#[test]
fn unknown_block_kinds_are_skipped_and_counted() {
    let a = ev(100, EventKind::Exit { tid: Tid(1) });
    let bytes = trace_with_chunk(
        |enc| {
            enc.push(&a);
            100
        },
        Some(200),
    );
    let mut rd = TraceReader::from_bytes(&bytes).unwrap();
    assert_eq!(rd.skipped_unknown_blocks(), 1);
    let got: Vec<Event> = rd.events().collect::<Result<_, _>>().unwrap();
    assert_eq!(got, vec![a]);
    // Salvage keeps the unknown block for a newer reader.
    let rep = causeway_format::salvage::scan(&bytes);
    assert!(rep.is_clean());
    let (out, _) = causeway_format::salvage::write_salvaged(&bytes, &rep, Vec::new()).unwrap();
    assert_eq!(
        TraceReader::from_bytes(&out)
            .unwrap()
            .skipped_unknown_blocks(),
        1
    );
}

#[test]
fn unknown_compact_event_code_is_corruption() {
    // Codes below 64 have no length, so an unknown one cannot be skipped.
    let bytes = trace_with_chunk(
        |enc| {
            push_raw_sized(enc, 12, 0, &[]);
            100
        },
        None,
    );
    let mut rd = TraceReader::from_bytes(&bytes).unwrap();
    let err = rd.events().find_map(Result::err).expect("an error");
    assert!(matches!(err, FormatError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("unknown event code 12"), "{err}");
}

#[test]
fn newer_minor_version_is_read_and_other_major_is_refused() {
    let bytes = causeway_format::write_to_vec(
        &Header::synthetic(1),
        &[ev(5, EventKind::Exit { tid: Tid(1) })],
        WriterOptions::default(),
    )
    .unwrap();
    let mut newer = bytes.clone();
    newer[10..12].copy_from_slice(&7u16.to_le_bytes());
    let mut rd = TraceReader::from_bytes(&newer).unwrap();
    assert_eq!(rd.minor_version(), 7);
    assert_eq!(rd.events().count(), 1);

    let mut major = bytes;
    major[8..10].copy_from_slice(&2u16.to_le_bytes());
    let err = TraceReader::from_bytes(&major).err().expect("refused");
    assert!(
        matches!(err, FormatError::UnsupportedVersion { major: 2, .. }),
        "{err}"
    );
}

#[test]
fn watchpoint_hits_round_trip_with_their_access_and_ip() {
    let hit = |ts, tid, access, ip| Event {
        ts: Timestamp(ts),
        cpu: Cpu(1),
        kind: EventKind::Marker {
            tid: Tid(tid),
            marker: Marker::DataFlag {
                addr: 0x5555_0000_4010,
                access,
                ip,
            },
        },
    };
    let events = vec![
        hit(10, 7, DataFlagAccess::Write, 0x5555_0000_12bf),
        hit(20, 8, DataFlagAccess::Read, 0x5555_0000_0e04),
    ];
    let bytes =
        causeway_format::write_to_vec(&Header::synthetic(2), &events, WriterOptions::default())
            .unwrap();
    let mut rd = TraceReader::from_bytes(&bytes).unwrap();
    let back: Vec<Event> = rd.events().map(|e| e.unwrap()).collect();
    assert_eq!(back, events);
}
