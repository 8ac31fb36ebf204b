//! Trace builders shared by the integration tests: the golden trace and a bigger
//! multi-chunk trace, both deterministic.

#![allow(dead_code)]

use causeway_format::{
    BlockOp, BlockOpKind, CgroupRow, ClockSource, Cpu, CpuSample, DevId, Event, EventKind, Frame,
    FrameSpace, Header, HostInfo, InlinedFrame, Mapping, Marker, MemorySample, ProcessInfo,
    SoftirqVec, Stack, StackId, StackKind, StringId, Tables, TaskState, Tgid, Tid, Timestamp,
    TraceReader, TraceStats, TraceWriter, Waker, WriterOptions,
};

/// A built trace and what reading it must give.
pub struct Built {
    /// The file.
    pub bytes: Vec<u8>,
    /// Events in the order the merged reader yields them.
    pub events: Vec<Event>,
    /// The tables as written.
    pub tables: Tables,
    /// The statistics as written.
    pub stats: TraceStats,
}

/// Sort events as the merged reader yields them: by time, then CPU, then the order in
/// which they were pushed (a stable sort keeps it).
pub fn merged_order(mut events: Vec<Event>) -> Vec<Event> {
    events.sort_by_key(|e| (e.ts, e.cpu));
    events
}

/// Read all events of a trace, panicking on errors.
pub fn read_events(bytes: &[u8]) -> Vec<Event> {
    let mut rd = TraceReader::from_bytes(bytes).expect("trace opens");
    rd.events().collect::<Result<_, _>>().expect("events read")
}

/// The header of the golden trace: fixed values only (no crate version, no host).
pub fn golden_header() -> Header {
    Header {
        clock: ClockSource::Monotonic,
        clock_to_realtime_ns: 1_763_800_000_000_000_000,
        clock_to_monotonic_ns: 0,
        host: HostInfo {
            hostname: "golden".into(),
            kernel_release: "6.1.0-golden".into(),
            arch: "x86_64".into(),
            ..Default::default()
        },
        cpu_count: 2,
        command_line: vec!["causeway".into(), "record".into(), "--golden".into()],
        writer: "causeway-format golden v1.0".into(),
        scope: causeway_format::Scope::System,
        target_pids: Vec::new(),
        target_comm: None,
        file_id: 0x5eed_0000_c0de_0042,
        salvaged: None,
        waker_stack_sampling: Some(causeway_format::WakerStackSampling {
            min_wait_ns: 100_000,
            one_in: 16,
        }),
    }
}

/// The header of the golden traces of 1.2 to 1.5, before the waker-stack sampling.
pub fn golden_header_v1_5() -> Header {
    Header {
        waker_stack_sampling: None,
        ..golden_header()
    }
}

/// The header of the golden traces of 1.0 and 1.1, before files had an id.
pub fn golden_header_v1_1() -> Header {
    Header {
        file_id: 0,
        ..golden_header_v1_5()
    }
}

/// Writer options of the golden trace: tiny chunks so it has several per CPU.
pub fn golden_options() -> WriterOptions {
    WriterOptions {
        chunk_events: 8,
        max_buffered_events: 12,
        zstd_level: 3,
    }
}

/// The golden trace: every event kind, every waker, marker, stack kind, block op and
/// task state at least once, and rows in every table, on two CPUs over several chunks.
/// Finish `w` and describe what was written: the bytes, the events in merged order, the
/// tables as a reader sees them and the writer's statistics.
fn finish_built(w: TraceWriter<Vec<u8>>, events: Vec<Event>) -> Built {
    let stats = w.stats().clone();
    let bytes = w.finish().expect("finish");
    let tables = TraceReader::from_bytes(&bytes)
        .expect("written trace opens")
        .tables()
        .clone();
    Built {
        bytes,
        events: merged_order(events),
        tables,
        stats,
    }
}

pub fn build_golden() -> Built {
    let mut w =
        TraceWriter::with_options(Vec::new(), &golden_header(), golden_options()).expect("writer");
    let s = |w: &mut TraceWriter<Vec<u8>>, x: &str| w.intern(x);
    let bash = s(&mut w, "bash");
    let bash_path = s(&mut w, "/usr/bin/bash");
    let worker = s(&mut w, "worker");
    let eth0 = s(&mut w, "eth0");
    let irq_name = s(&mut w, "virtio0-requests");
    let method = s(&mut w, "Parser::parse");
    let span = s(&mut w, "request");
    let libc = s(&mut w, "/usr/lib/libc.so.6");
    let vmlinux = s(&mut w, "[kernel.kallsyms]");
    let read_sym = s(&mut w, "__libc_read");
    let sched_sym = s(&mut w, "schedule");
    let cmdline = s(&mut w, "bash -c ./worker");

    w.add_process(ProcessInfo {
        tgid: Tgid(100),
        parent: Some(Tgid(1)),
        since: Timestamp(0),
        exe: bash_path,
        cmdline,
    });
    w.add_process(ProcessInfo {
        tgid: Tgid(200),
        parent: None,
        since: Timestamp(1_000_500),
        exe: worker,
        cmdline: worker,
    });
    let flow_out = w.intern_flow(causeway_format::Flow {
        family: causeway_format::SockFamily::INET,
        proto: causeway_format::SockProto::TCP,
        local: causeway_format::Endpoint::v4([127, 0, 0, 1], 41230),
        remote: causeway_format::Endpoint::v4([127, 0, 0, 1], 5000),
    });
    let flow_in = w.intern_flow(causeway_format::Flow {
        family: causeway_format::SockFamily::UNIX,
        proto: causeway_format::SockProto(1),
        local: causeway_format::Endpoint::object(u64::MAX),
        remote: causeway_format::Endpoint::default(),
    });
    w.add_thread(ThreadInfoLite(100, 100, 0, bash).into());
    w.add_thread(ThreadInfoLite(101, 100, 0, worker).into());
    w.add_mapping(Mapping {
        tgid: Tgid(100),
        since: Timestamp(0),
        start: 0x7f00_0000_0000,
        end: 0x7f00_0020_0000,
        file_offset: 0x2_8000,
        path: libc,
        build_id: vec![0xde, 0xad, 0xbe, 0xef, 0x01, 0x02],
    });
    w.add_mapping(Mapping {
        tgid: Tgid(200),
        since: Timestamp(1_000_600),
        start: 0x5555_0000_0000,
        end: 0x5555_0001_0000,
        file_offset: 0,
        path: worker,
        build_id: Vec::new(),
    });
    // 1.7: a membership and two quota samples (an existing string stands for the path,
    // so the string table of older golden files stays the same).
    w.add_cgroup(CgroupRow::Member {
        tgid: Tgid(200),
        since: Timestamp(1_000_500),
        path: cmdline,
    });
    for (ts, periods, throttled) in [(1_000_700, 10, 9), (1_900_000, 20, 19)] {
        w.add_cgroup(CgroupRow::Cpu(CpuSample {
            ts: Timestamp(ts),
            path: cmdline,
            quota_us: Some(20_000),
            period_us: 100_000,
            periods,
            throttled,
            throttled_ns: throttled * 80_000_000,
        }));
    }
    w.add_cgroup(CgroupRow::MemoryMember {
        tgid: Tgid(200),
        since: Timestamp(0),
        path: bash_path,
    });
    w.add_cgroup(CgroupRow::Memory(MemorySample {
        ts: Timestamp(1_000_700),
        path: bash_path,
        limit: Some(64 << 20),
        usage: (64 << 20) - 4096,
        hits: 5_900,
        major_faults: 12,
        refaults: 4_100,
    }));
    // 1.8: an affinity (an existing string stands for the CPU list) and idle samples.
    w.add_cgroup(CgroupRow::Affinity {
        tgid: Tgid(200),
        since: Timestamp(0),
        cpus: cmdline,
    });
    for (ts, idle) in [(1_000_700, 5_000_000), (1_900_000, 95_000_000)] {
        w.add_cgroup(CgroupRow::Idle {
            ts: Timestamp(ts),
            cpu: 1,
            idle_ns: idle,
        });
    }
    // 1.9: a thread's page reclaim, and memory pressure (an existing string stands
    // for the path).
    w.add_cgroup(CgroupRow::Reclaim {
        ts: Timestamp(1_900_050),
        tid: Tid(201),
        tgid: Tgid(200),
        ns: 2_500_000,
        count: 7,
    });
    for (ts, some, full) in [(1_000_800, 1_000, 400), (1_900_100, 380_000, 200_000)] {
        w.add_cgroup(CgroupRow::Pressure(causeway_format::PressureSample {
            ts: Timestamp(ts),
            path: bash_path,
            resource: causeway_format::PressureResource::Memory,
            some_us: some,
            full_us: full,
        }));
    }
    let f_user = w.intern_frame(Frame::new(
        FrameSpace::User { tgid: Tgid(100) },
        0x7f00_0001_2345,
        libc,
        read_sym,
        0x15,
    ));
    let f_kernel = w.intern_frame(Frame::new(
        FrameSpace::Kernel,
        0xffff_ffff_8100_1234,
        vmlinux,
        sched_sym,
        0x44,
    ));
    let f_unknown = w.intern_frame(Frame::new(
        FrameSpace::User { tgid: Tgid(200) },
        0x5555_0000_0042,
        Default::default(),
        Default::default(),
        0,
    ));
    // A frame with source lines and two inlined calls (format 1.1).
    let mut inl = Frame::new(
        FrameSpace::User { tgid: Tgid(200) },
        0x5555_0000_0100,
        worker,
        s(&mut w, "worker_main"),
        0x30,
    );
    inl.file = s(&mut w, "worker.c");
    inl.line = 42;
    inl.inlined = vec![
        InlinedFrame {
            symbol: s(&mut w, "take_lock"),
            file: s(&mut w, "lock.h"),
            line: 7,
        },
        InlinedFrame {
            symbol: s(&mut w, "do_work"),
            file: s(&mut w, "worker.c"),
            line: 30,
        },
    ];
    let f_inline = w.intern_frame(inl);
    let st_user = w.intern_stack(Stack {
        frames: vec![f_user, f_unknown, f_inline],
        truncated: false,
    });
    let st_kernel = w.intern_stack(Stack {
        frames: vec![f_kernel],
        truncated: true,
    });

    let c0 = Cpu(0);
    let c1 = Cpu(1);
    let ev = |ts: u64, cpu: Cpu, kind: EventKind| Event {
        ts: Timestamp(ts),
        cpu,
        kind,
    };
    let rw = |kind, sync, fua, preflush, meta| BlockOp {
        kind,
        sync,
        fua,
        preflush,
        meta,
    };
    let mut events = vec![
        ev(
            1_000_000,
            c0,
            EventKind::SchedSwitch {
                prev_tid: Tid(0),
                prev_state: TaskState::RUNNABLE,
                next_tid: Tid(100),
            },
        ),
        ev(
            1_000_100,
            c0,
            EventKind::SyscallEnter {
                tid: Tid(100),
                nr: 56,
                args: [0x1200011, 0, 0],
            },
        ),
        ev(
            1_000_400,
            c0,
            EventKind::Fork {
                parent_tid: Tid(100),
                parent_tgid: Tgid(100),
                child_tid: Tid(200),
                child_tgid: Tgid(200),
            },
        ),
        ev(
            1_000_450,
            c0,
            EventKind::WakeupNew {
                wakee: Tid(200),
                target_cpu: c1,
                waker: Waker::Thread { tid: Tid(100) },
            },
        ),
        ev(
            1_000_460,
            c0,
            EventKind::SyscallExit {
                tid: Tid(100),
                nr: 56,
                ret: 200,
            },
        ),
        ev(
            1_000_500,
            c1,
            EventKind::SchedSwitch {
                prev_tid: Tid(0),
                prev_state: TaskState::IDLE,
                next_tid: Tid(200),
            },
        ),
        ev(
            1_000_550,
            c1,
            EventKind::Exec {
                tid: Tid(200),
                comm: worker,
                filename: worker,
            },
        ),
        ev(
            1_000_700,
            c0,
            EventKind::SyscallEnter {
                tid: Tid(100),
                nr: 0,
                args: [0; 3],
            },
        ),
        ev(
            1_000_800,
            c0,
            EventKind::SchedSwitch {
                prev_tid: Tid(100),
                prev_state: TaskState::INTERRUPTIBLE,
                next_tid: Tid(101),
            },
        ),
        // A stack belongs to the event just before it at the same time.
        ev(
            1_000_800,
            c0,
            EventKind::Stack {
                tid: Tid(100),
                kind: StackKind::SwitchOut,
                user: Some(st_user),
                kernel: Some(st_kernel),
            },
        ),
        ev(
            1_000_900,
            c1,
            EventKind::BlockIssue {
                tid: Tid(200),
                dev: DevId::from_parts(259, 0),
                sector: 123_456_789,
                bytes: 4096,
                op: rw(BlockOpKind::Write, true, true, true, false),
            },
        ),
        ev(
            1_000_950,
            c1,
            EventKind::SchedSwitch {
                prev_tid: Tid(200),
                prev_state: TaskState::UNINTERRUPTIBLE,
                next_tid: Tid(0),
            },
        ),
        ev(
            1_001_000,
            c1,
            EventKind::IrqEntry {
                irq: 24,
                name: irq_name,
            },
        ),
        ev(
            1_001_010,
            c1,
            EventKind::BlockComplete {
                dev: DevId::from_parts(259, 0),
                sector: 123_456_789,
                bytes: 4096,
                op: rw(BlockOpKind::Write, true, true, true, false),
                error: 0,
            },
        ),
        ev(
            1_001_020,
            c1,
            EventKind::Wakeup {
                wakee: Tid(200),
                target_cpu: c1,
                waker: Waker::Irq {
                    irq: 24,
                    name: irq_name,
                },
            },
        ),
        ev(
            1_001_030,
            c1,
            EventKind::IrqExit {
                irq: 24,
                handled: true,
            },
        ),
        ev(
            1_001_040,
            c1,
            EventKind::SoftirqEntry {
                vec: SoftirqVec::NET_RX,
            },
        ),
        ev(
            1_001_045,
            c1,
            EventKind::NetRecv {
                tid: Tid(0),
                dev: eth0,
                bytes: 1500,
            },
        ),
        ev(
            1_001_050,
            c1,
            EventKind::Wakeup {
                wakee: Tid(100),
                target_cpu: c0,
                waker: Waker::Softirq {
                    vec: SoftirqVec::NET_RX,
                },
            },
        ),
        ev(
            1_001_060,
            c1,
            EventKind::SoftirqExit {
                vec: SoftirqVec::NET_RX,
            },
        ),
        ev(
            1_001_070,
            c1,
            EventKind::SchedSwitch {
                prev_tid: Tid(0),
                prev_state: TaskState::RUNNABLE,
                next_tid: Tid(200),
            },
        ),
        ev(
            1_001_100,
            c0,
            EventKind::Wakeup {
                wakee: Tid(100),
                target_cpu: c0,
                waker: Waker::Unknown,
            },
        ),
        ev(
            1_001_110,
            c0,
            EventKind::Stack {
                tid: Tid(101),
                kind: StackKind::Waker,
                user: None,
                kernel: Some(st_kernel),
            },
        ),
        ev(
            1_001_150,
            c0,
            EventKind::Stack {
                tid: Tid(101),
                kind: StackKind::WakerSample,
                user: None,
                kernel: Some(st_kernel),
            },
        ),
        ev(
            1_001_200,
            c0,
            EventKind::SchedSwitch {
                prev_tid: Tid(101),
                prev_state: TaskState::PREEMPTED,
                next_tid: Tid(100),
            },
        ),
        ev(
            1_001_210,
            c0,
            EventKind::SyscallExit {
                tid: Tid(100),
                nr: 0,
                ret: -11,
            },
        ),
        ev(
            1_001_300,
            c0,
            EventKind::NetXmit {
                tid: Tid(100),
                dev: eth0,
                bytes: 66,
            },
        ),
        ev(
            1_001_310,
            c0,
            EventKind::Stack {
                tid: Tid(100),
                kind: StackKind::Syscall,
                user: Some(st_user),
                kernel: None,
            },
        ),
        ev(
            1_001_320,
            c0,
            EventKind::Stack {
                tid: Tid(100),
                kind: StackKind::Sample,
                user: None,
                kernel: None,
            },
        ),
        ev(
            1_001_330,
            c0,
            EventKind::Stack {
                tid: Tid(100),
                kind: StackKind::Other,
                user: Some(st_user),
                kernel: Some(st_kernel),
            },
        ),
        ev(
            1_001_400,
            c1,
            EventKind::BlockIssue {
                tid: Tid(200),
                dev: DevId::from_parts(8, 16),
                sector: 0,
                bytes: 512,
                op: rw(BlockOpKind::Read, false, false, false, true),
            },
        ),
        ev(
            1_001_410,
            c1,
            EventKind::BlockIssue {
                tid: Tid(200),
                dev: DevId::from_parts(8, 16),
                sector: 0,
                bytes: 0,
                op: rw(BlockOpKind::Flush, false, false, false, false),
            },
        ),
        ev(
            1_001_420,
            c1,
            EventKind::BlockComplete {
                dev: DevId::from_parts(8, 16),
                sector: 4096,
                bytes: 8192,
                op: rw(BlockOpKind::Discard, false, false, false, false),
                error: -5,
            },
        ),
        ev(
            1_001_430,
            c1,
            EventKind::BlockComplete {
                dev: DevId::from_parts(8, 16),
                sector: u64::MAX,
                bytes: u32::MAX,
                op: rw(BlockOpKind::Other, true, false, false, true),
                error: i32::MIN,
            },
        ),
    ];
    let markers = [
        Marker::SpinBegin { id: 7 },
        Marker::FlagRead {
            addr: 0x5555_0000_1000,
        },
        Marker::SpinEnd { id: 7 },
        Marker::FalseWakeup,
        Marker::FlagWrite {
            addr: 0x5555_0000_1000,
        },
        Marker::MethodEnter { method },
        Marker::SpanBegin { name: span, id: 1 },
        Marker::SpanEnd { name: span, id: 1 },
        Marker::MethodExit { method },
    ];
    for (i, marker) in markers.into_iter().enumerate() {
        events.push(ev(
            1_002_000 + 10 * i as u64,
            c1,
            EventKind::Marker {
                tid: Tid(200),
                marker,
            },
        ));
    }
    // Signal and timer kinds (format 1.3).
    events.extend([
        ev(
            1_002_500,
            c0,
            EventKind::SignalGenerate {
                sender: Tid(100),
                target: Tid(200),
                target_tgid: Tgid(200),
                sig: causeway_format::Signal::STOP,
                group: true,
                result: causeway_format::SignalResult::DELIVERED,
            },
        ),
        ev(
            1_002_510,
            c1,
            EventKind::SignalDeliver {
                tid: Tid(200),
                sig: causeway_format::Signal(14),
            },
        ),
        ev(
            1_002_520,
            c1,
            EventKind::TimerArm {
                tid: Tid(200),
                timer: 0xdead_beef_1234,
                expires: Some(Timestamp(1_002_900)),
            },
        ),
        ev(
            1_002_530,
            c0,
            EventKind::TimerArm {
                tid: Tid(100),
                timer: u64::MAX,
                expires: None,
            },
        ),
        ev(
            1_002_900,
            c1,
            EventKind::TimerExpire {
                timer: 0xdead_beef_1234,
            },
        ),
        // Format 1.4: a send on a loopback connection and the wake-up its data caused.
        ev(
            1_002_950,
            c0,
            EventKind::SockSend {
                tid: Tid(100),
                flow: flow_out,
                bytes: 64,
                seq: Some(u32::MAX),
            },
        ),
        ev(
            1_002_960,
            c1,
            EventKind::SockReady {
                wakee: Tid(200),
                host: Tid(0),
                flow: flow_in,
                seq: None,
            },
        ),
        // Format 1.5: a goroutine runs on thread 100 (its start function a one-frame
        // stack), parks on a channel, and is readied by another one and then by the
        // runtime's own poller.
        ev(
            1_002_970,
            c0,
            EventKind::GoRun {
                tid: Tid(100),
                goid: 18,
                parent: 1,
                start: Some(StackId(0)),
            },
        ),
        ev(
            1_002_975,
            c0,
            EventKind::GoPark {
                tid: Tid(100),
                goid: 18,
                reason: StringId(1),
            },
        ),
        ev(
            1_002_975,
            c0,
            EventKind::GoNetWait {
                tid: Tid(100),
                goid: 18,
                flow: flow_in,
                seq: Some(u32::MAX),
            },
        ),
        ev(
            1_002_980,
            c1,
            EventKind::GoReady {
                tid: Tid(200),
                goid: 18,
                by: u64::MAX,
            },
        ),
        ev(
            1_002_985,
            c1,
            EventKind::GoReady {
                tid: Tid(200),
                goid: 18,
                by: 0,
            },
        ),
        ev(
            1_002_990,
            c0,
            EventKind::GoRun {
                tid: Tid(100),
                goid: 18,
                parent: 0,
                start: None,
            },
        ),
    ]);
    let states = [
        TaskState::STOPPED,
        TaskState::TRACED,
        TaskState::PARKED,
        TaskState::ZOMBIE,
        TaskState::DEAD,
        TaskState(0x400),
    ];
    for (i, st) in states.into_iter().enumerate() {
        let (prev, next) = if i % 2 == 0 { (100, 101) } else { (101, 100) };
        events.push(ev(
            1_003_000 + 100 * i as u64,
            c0,
            EventKind::SchedSwitch {
                prev_tid: Tid(prev),
                prev_state: st,
                next_tid: Tid(next),
            },
        ));
    }
    events.extend([
        ev(1_004_000, c0, EventKind::Lost { count: 17 }),
        ev(1_004_000, c0, EventKind::Exit { tid: Tid(101) }),
        ev(
            1_004_100,
            c1,
            EventKind::Lost {
                count: u64::MAX / 4,
            },
        ),
        ev(1_004_200, c1, EventKind::Exit { tid: Tid(200) }),
        // Large values: varint edges.
        ev(
            u64::MAX / 2,
            c1,
            EventKind::SyscallEnter {
                tid: Tid(u32::MAX),
                nr: u32::MAX,
                args: [u64::MAX, 1 << 63, 127],
            },
        ),
        ev(
            u64::MAX / 2,
            c1,
            EventKind::SyscallExit {
                tid: Tid(u32::MAX),
                nr: u32::MAX,
                ret: i64::MIN,
            },
        ),
    ]);

    // Rows added mid-trace land in later table blocks.
    w.add_thread(ThreadInfoLite(200, 200, 1_000_550, worker).into());
    w.add_counter("dropped_stacks", 2);
    w.add_counter("failed_unwinds", 1);
    for e in &events {
        w.push(e).expect("push");
    }
    let late = w.intern("late string");
    w.add_thread(ThreadInfoLite(201, 200, 1_004_150, late).into());
    finish_built(w, events)
}

/// Thread row shorthand: tid, tgid, since, comm.
pub struct ThreadInfoLite(pub u32, pub u32, pub u64, pub causeway_format::StringId);

impl From<ThreadInfoLite> for causeway_format::ThreadInfo {
    fn from(t: ThreadInfoLite) -> Self {
        causeway_format::ThreadInfo {
            tid: Tid(t.0),
            tgid: Tgid(t.1),
            since: Timestamp(t.2),
            comm: t.3,
        }
    }
}

/// A bigger trace: `n` events of a sched-heavy mix on 4 CPUs, in chunks of
/// `chunk_events`, with stacks and string rows added along the way.
pub fn build_multi_chunk(n: usize, chunk_events: usize) -> Built {
    let opts = WriterOptions {
        chunk_events,
        max_buffered_events: chunk_events * 3,
        zstd_level: 1,
    };
    let mut w = TraceWriter::with_options(Vec::new(), &Header::synthetic(4), opts).expect("writer");
    let mut events = Vec::with_capacity(n);
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut ts = [1_000u64; 4];
    let mut cur = [0u32; 4];
    for i in 0..n {
        let r = rnd();
        let c = (r % 4) as usize;
        ts[c] += 1 + (r >> 8) % 4000;
        let kind = match (r >> 20) % 8 {
            0..=2 => {
                let next = 1000 + ((r >> 30) % 40) as u32;
                let k = EventKind::SchedSwitch {
                    prev_tid: Tid(cur[c]),
                    prev_state: TaskState::INTERRUPTIBLE,
                    next_tid: Tid(next),
                };
                cur[c] = next;
                k
            }
            3..=5 => EventKind::Wakeup {
                wakee: Tid(1000 + ((r >> 30) % 40) as u32),
                target_cpu: Cpu(((r >> 40) % 4) as u32),
                waker: Waker::Thread { tid: Tid(cur[c]) },
            },
            6 => {
                if i % 50 == 0 {
                    let name = w.intern(&format!("thread-{i}"));
                    w.add_thread(ThreadInfoLite(cur[c], 1000, ts[c], name).into());
                }
                EventKind::SyscallEnter {
                    tid: Tid(cur[c]),
                    nr: ((r >> 30) % 300) as u32,
                    args: [0; 3],
                }
            }
            _ => {
                let f = w.intern_frame(Frame::new(
                    FrameSpace::Kernel,
                    0xffff_0000 + (r >> 50),
                    Default::default(),
                    Default::default(),
                    0,
                ));
                let st = w.intern_stack(Stack {
                    frames: vec![f],
                    truncated: false,
                });
                EventKind::Stack {
                    tid: Tid(cur[c]),
                    kind: StackKind::Sample,
                    user: None,
                    kernel: Some(st),
                }
            }
        };
        let e = Event {
            ts: Timestamp(ts[c]),
            cpu: Cpu(c as u32),
            kind,
        };
        w.push(&e).expect("push");
        events.push(e);
    }
    finish_built(w, events)
}
