//! Golden tests: small `perf script` excerpts recorded on a Debian 12 VM (Linux 6.18,
//! perf 6.1, virtio-blk root disk with ext4) and trimmed, converted and checked event by
//! event.
//!
//! Each `tests/data/<case>.txt` has a rendering of every produced event in
//! `tests/data/results/<case>.txt`; set `CAUSEWAY_BLESS=1` to rewrite those after an
//! intended change. The tests also assert the facts each excerpt was chosen for.

use causeway_format::{
    BlockOpKind, DevId, Event, EventKind, Header, SoftirqVec, StackKind, Tables, TaskState, Tid,
    TraceReader, Waker,
};
use causeway_import::{ImportError, ImportOptions, ImportSummary, PerfHeader, import_perf_script};
use std::fmt::Write as _;
use std::path::PathBuf;

struct Imported {
    events: Vec<Event>,
    tables: Tables,
    header: Header,
    summary: ImportSummary,
}

fn data(case: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(case)
}

fn import_text(text: &[u8], opts: &ImportOptions) -> Result<Imported, ImportError> {
    let header = PerfHeader::default().to_header();
    let (bytes, summary) = import_perf_script(text, header, Vec::new(), opts)?;
    let mut rd = TraceReader::from_bytes(&bytes).expect("trace reads back");
    let events = rd
        .events()
        .collect::<Result<Vec<_>, _>>()
        .expect("events read back");
    Ok(Imported {
        events,
        tables: rd.tables().clone(),
        header: rd.header().clone(),
        summary,
    })
}

fn import_case(case: &str) -> Imported {
    let text = std::fs::read(data(&format!("{case}.txt"))).expect("test data");
    let imported = import_text(&text, &ImportOptions::default()).expect("import");
    check_golden(case, &render(&imported));
    imported
}

fn check_golden(case: &str, actual: &str) {
    let path = data(&format!("results/{case}.txt"));
    if std::env::var_os("CAUSEWAY_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "missing expected result {} ({e}); create it with CAUSEWAY_BLESS=1",
            path.display()
        )
    });
    if expected != actual {
        let (i, (e, a)) = expected
            .lines()
            .zip(actual.lines())
            .enumerate()
            .find(|(_, (e, a))| e != a)
            .unwrap_or((0, ("<length differs>", "<length differs>")));
        panic!(
            "{case}: output differs from {} at line {}:\n  expected: {e}\n  actual:   {a}\n(set CAUSEWAY_BLESS=1 to accept)",
            path.display(),
            i + 1
        );
    }
}

/// One line per event with strings resolved, then the tables and counters.
fn render(im: &Imported) -> String {
    let t = &im.tables;
    let mut s = String::new();
    let waker = |w: Waker| match w {
        Waker::Thread { tid } => format!("thread {tid}"),
        Waker::Irq { irq, name } => format!("irq {irq} {}", t.string(name)),
        Waker::Softirq { vec } => format!("softirq {}", vec.name()),
        Waker::Unknown => "unknown".to_string(),
    };
    let stack = |id: Option<causeway_format::StackId>| match id.and_then(|id| t.stack(id)) {
        None => "-".to_string(),
        Some(st) => {
            let frames: Vec<String> = st.frames.iter().map(|&f| t.frame_text(f)).collect();
            format!(
                "[{}{}]",
                frames.join(" <- "),
                if st.truncated { " <- ...truncated" } else { "" }
            )
        }
    };
    for e in &im.events {
        let body = match e.kind {
            EventKind::Wakeup {
                wakee,
                target_cpu,
                waker: w,
            } => format!(
                "wakeup wakee={wakee} target_cpu={target_cpu} waker={}",
                waker(w)
            ),
            EventKind::WakeupNew {
                wakee,
                target_cpu,
                waker: w,
            } => format!(
                "wakeup_new wakee={wakee} target_cpu={target_cpu} waker={}",
                waker(w)
            ),
            EventKind::SchedSwitch {
                prev_tid,
                prev_state,
                next_tid,
            } => format!("switch {prev_tid} {} -> {next_tid}", prev_state.letter()),
            EventKind::IrqEntry { irq, name } => format!("irq_entry {irq} {}", t.string(name)),
            EventKind::Exec {
                tid,
                comm,
                filename,
            } => format!("exec {tid} {} {}", t.string(comm), t.string(filename)),
            EventKind::NetXmit { tid, dev, bytes } => {
                format!("net_xmit {tid} {} {bytes}", t.string(dev))
            }
            EventKind::NetRecv { tid, dev, bytes } => {
                format!("net_recv {tid} {} {bytes}", t.string(dev))
            }
            EventKind::Stack {
                tid,
                kind,
                user,
                kernel,
            } => format!(
                "stack {tid} {kind:?} kernel={} user={}",
                stack(kernel),
                stack(user)
            ),
            other => format!("{other:?}"),
        };
        writeln!(s, "{} [{:03}] {body}", e.ts, e.cpu.0).unwrap();
    }
    for th in &t.threads {
        writeln!(
            s,
            "thread {} tgid={} since={} {}",
            th.tid,
            th.tgid,
            th.since,
            t.string(th.comm)
        )
        .unwrap();
    }
    for p in &t.processes {
        writeln!(
            s,
            "process {} parent={:?} since={} exe={}",
            p.tgid,
            p.parent.map(|p| p.0),
            p.since,
            t.string(p.exe)
        )
        .unwrap();
    }
    for m in &t.mappings {
        writeln!(
            s,
            "mapping {} since={} {:#x}-{:#x} @{:#x} {}",
            m.tgid,
            m.since,
            m.start,
            m.end,
            m.file_offset,
            t.string(m.path)
        )
        .unwrap();
    }
    writeln!(s, "summary {:?}", im.summary).unwrap();
    s
}

/// The event right after `i` (the stack of event `i`, if it has one).
fn stack_after(im: &Imported, i: usize) -> Option<(Tid, StackKind, Vec<String>, Vec<String>)> {
    let e = im.events.get(i + 1)?;
    let EventKind::Stack {
        tid,
        kind,
        user,
        kernel,
    } = e.kind
    else {
        return None;
    };
    let syms = |id: Option<causeway_format::StackId>| -> Vec<String> {
        id.and_then(|id| im.tables.stack(id))
            .map(|s| {
                s.frames
                    .iter()
                    .map(|&f| {
                        let fr = im.tables.frame(f).unwrap();
                        im.tables.string(fr.symbol).to_string()
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    Some((tid, kind, syms(kernel), syms(user)))
}

fn find(im: &Imported, pred: impl Fn(&EventKind) -> bool) -> Vec<usize> {
    im.events
        .iter()
        .enumerate()
        .filter(|(_, e)| pred(&e.kind))
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn fsync_wait_ends_in_block_softirq() {
    let im = import_case("fsync_block_softirq");

    // Preempted kworker: `R+` is runnable, and its stack is not a switch-out stack.
    let i = find(&im, |k| {
        matches!(
            k,
            EventKind::SchedSwitch {
                prev_tid: Tid(32),
                next_tid: Tid(5798),
                ..
            }
        )
    });
    assert_eq!(i.len(), 1);
    let EventKind::SchedSwitch { prev_state, .. } = im.events[i[0]].kind else {
        unreachable!()
    };
    assert_eq!(prev_state, TaskState::PREEMPTED);
    assert!(prev_state.is_runnable());
    let (tid, kind, kernel, _) = stack_after(&im, i[0]).expect("stack");
    assert_eq!((tid, kind), (Tid(32), StackKind::Other));
    assert_eq!(kernel.first().map(String::as_str), Some("__schedule"));

    // The write request: issued by the consumer inside fsync, completed in softirq.
    let i = find(&im, |k| matches!(k, EventKind::BlockIssue { .. }));
    assert_eq!(i.len(), 1);
    let EventKind::BlockIssue {
        tid,
        dev,
        sector,
        bytes,
        op,
    } = im.events[i[0]].kind
    else {
        unreachable!()
    };
    assert_eq!(
        (tid, dev, sector, bytes),
        (Tid(5798), DevId::from_parts(254, 0), 107741200, 4096)
    );
    assert_eq!(op.kind, BlockOpKind::Write);
    assert!(op.sync && op.meta);
    let (tid, kind, kernel, user) = stack_after(&im, i[0]).expect("stack");
    assert_eq!((tid, kind), (Tid(5798), StackKind::Other));
    assert!(kernel.iter().any(|s| s == "ext4_sync_file"), "{kernel:?}");
    assert_eq!(user, ["fsync", "consumer_main", "start_thread"]);
    let c = find(&im, |k| matches!(k, EventKind::BlockComplete { .. }));
    assert_eq!(c.len(), 1);
    assert!(matches!(
        im.events[c[0]].kind,
        EventKind::BlockComplete {
            sector: 107741200,
            bytes: 4096,
            error: 0,
            ..
        }
    ));

    // The consumer blocks in D inside fsync: a switch-out stack of the consumer.
    let i = find(&im, |k| {
        matches!(
            k,
            EventKind::SchedSwitch {
                prev_tid: Tid(5798),
                ..
            }
        )
    });
    assert_eq!(i.len(), 1);
    assert!(matches!(
        im.events[i[0]].kind,
        EventKind::SchedSwitch {
            prev_state: TaskState::UNINTERRUPTIBLE,
            ..
        }
    ));
    let (tid, kind, kernel, user) = stack_after(&im, i[0]).expect("stack");
    assert_eq!((tid, kind), (Tid(5798), StackKind::SwitchOut));
    assert!(
        kernel.iter().any(|s| s == "__sync_dirty_buffer"),
        "{kernel:?}"
    );
    assert!(kernel.iter().any(|s| s == "__x64_sys_fsync"), "{kernel:?}");
    assert_eq!(user.get(1).map(String::as_str), Some("consumer_main"));

    // The disk interrupt, then the BLOCK softirq that wakes the consumer.
    assert_eq!(
        find(&im, |k| matches!(k, EventKind::IrqEntry { irq: 36, .. })).len(),
        1
    );
    let irq = find(&im, |k| matches!(k, EventKind::IrqEntry { .. }))[0];
    let EventKind::IrqEntry { name, .. } = im.events[irq].kind else {
        unreachable!()
    };
    assert_eq!(im.tables.string(name), "virtio1-req.0");
    let w = find(&im, |k| {
        matches!(
            k,
            EventKind::Wakeup {
                wakee: Tid(5798),
                ..
            }
        )
    });
    assert_eq!(
        w.len(),
        1,
        "sched_wakeup after sched_waking is not counted twice"
    );
    assert!(matches!(
        im.events[w[0]].kind,
        EventKind::Wakeup {
            waker: Waker::Softirq {
                vec: SoftirqVec::BLOCK
            },
            target_cpu: causeway_format::Cpu(0),
            ..
        }
    ));
    let (tid, kind, kernel, _) = stack_after(&im, w[0]).expect("waker stack");
    assert_eq!((tid, kind), (Tid(5802), StackKind::Waker));
    assert!(kernel.iter().any(|s| s == "blk_done_softirq"));

    assert_eq!(im.summary.wakeups_deduplicated, 1);
    assert_eq!(im.summary.malformed_lines, 0);
    assert_eq!(im.summary.ignored_events.get("irq:softirq_raise"), Some(&1));
    assert_eq!(
        im.summary.counters.get("import.ignored.irq:softirq_raise"),
        Some(&1)
    );
    assert_eq!(
        find(&im, |k| matches!(k, EventKind::Exit { tid: Tid(5802) })).len(),
        1
    );
}

#[test]
fn waking_inside_irq_handler_names_the_irq() {
    let im = import_case("irq_handler_waking");
    let w = find(&im, |k| matches!(k, EventKind::Wakeup { .. }));
    assert_eq!(w.len(), 1);
    let EventKind::Wakeup { wakee, waker, .. } = im.events[w[0]].kind else {
        unreachable!()
    };
    assert_eq!(wakee, Tid(475));
    let Waker::Irq { irq, name } = waker else {
        panic!("waker {waker:?}")
    };
    assert_eq!((irq, im.tables.string(name)), (42, "virtio3-tx"));
    assert_eq!(im.summary.wakers_from_callchain, 0);
}

#[test]
fn waker_context_is_inferred_from_callchains_without_irq_events() {
    let im = import_case("no_irq_events");
    assert!(
        find(&im, |k| matches!(
            k,
            EventKind::IrqEntry { .. } | EventKind::SoftirqEntry { .. }
        ))
        .is_empty()
    );
    let wakers: Vec<(Tid, Waker)> = im
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Wakeup { wakee, waker, .. } => Some((wakee, waker)),
            _ => None,
        })
        .collect();
    assert_eq!(wakers.len(), 2);
    // blk_done_softirq in the stack: BLOCK softirq.
    assert_eq!(
        wakers[0],
        (
            Tid(5798),
            Waker::Softirq {
                vec: SoftirqVec::BLOCK
            }
        )
    );
    // vring_interrupt called by __handle_irq_event_percpu: IRQ, number unknown.
    let (wakee, Waker::Irq { irq, name }) = wakers[1] else {
        panic!("{:?}", wakers[1])
    };
    assert_eq!(
        (wakee, irq, im.tables.string(name)),
        (Tid(475), 0, "vring_interrupt")
    );
    assert_eq!(im.summary.wakers_from_callchain, 2);
}

#[test]
fn task_events_build_threads_processes_and_mappings() {
    let im = import_case("task_events");
    // The perf header at the top of the text fills the trace header.
    assert_eq!(im.header.host.hostname, "vm");
    assert_eq!(im.header.host.kernel_release, "6.18.44-fc-v445");
    assert_eq!(im.header.cpu_count, 2);
    assert_eq!(
        im.header.command_line.first().map(String::as_str),
        Some("/usr/bin/perf")
    );
    assert_eq!(im.header.clock, causeway_format::ClockSource::Perf);
    assert!(im.header.writer.starts_with("causeway-import "));

    // A process fork (side band says so) and a thread fork (resolved by the COMM record
    // that names the new thread `consumer` in process 5792).
    let forks: Vec<EventKind> = im
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Fork { .. }))
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        forks,
        vec![
            EventKind::Fork {
                parent_tid: Tid(1969),
                parent_tgid: causeway_format::Tgid(1969),
                child_tid: Tid(5797),
                child_tgid: causeway_format::Tgid(5797),
            },
            EventKind::Fork {
                parent_tid: Tid(5792),
                parent_tgid: causeway_format::Tgid(5792),
                child_tid: Tid(5798),
                child_tgid: causeway_format::Tgid(5792),
            },
        ]
    );
    // The thread fork's stack hit perf's depth limit.
    let f = find(&im, |k| {
        matches!(
            k,
            EventKind::Fork {
                child_tid: Tid(5798),
                ..
            }
        )
    })[0];
    let EventKind::Stack { user: Some(u), .. } = im.events[f + 1].kind else {
        panic!("no stack after fork")
    };
    assert!(im.tables.stack(u).unwrap().truncated);

    let t = &im.tables;
    let rows: Vec<(u32, u32, u64, &str)> = t
        .threads
        .iter()
        .filter(|r| r.tid == Tid(5798))
        .map(|r| (r.tid.0, r.tgid.0, r.since.0, t.string(r.comm)))
        .collect();
    assert_eq!(
        rows,
        vec![
            (5798, 5792, 520_735_521_414, "blocking-write"),
            (5798, 5792, 520_735_615_347, "consumer"),
        ]
    );
    let procs: Vec<(u32, Option<u32>, u64, &str)> = t
        .processes
        .iter()
        .filter(|p| p.tgid.0 == 5797 || p.tgid.0 == 1969)
        .map(|p| (p.tgid.0, p.parent.map(|p| p.0), p.since.0, t.string(p.exe)))
        .collect();
    assert_eq!(
        procs,
        vec![
            (1969, Some(1968), 0, ""),
            (5797, Some(1969), 520_734_305_605, ""),
            (5797, Some(1969), 520_734_787_366, "/usr/bin/mkdir"),
        ]
    );
    assert!(t.mappings.iter().any(|m| m.tgid.0 == 1969
        && t.string(m.path) == "/usr/bin/bash"
        && m.start == 0x562397737000
        && m.end == 0x562397737000 + 0xc1000
        && m.file_offset == 0x2f000));
    assert_eq!(
        find(&im, |k| matches!(
            k,
            EventKind::WakeupNew {
                wakee: Tid(5797),
                waker: Waker::Thread { tid: Tid(1969) },
                ..
            }
        ))
        .len(),
        1
    );
    assert_eq!(
        find(&im, |k| matches!(k, EventKind::Exec { tid: Tid(5797), .. })).len(),
        1
    );
    assert_eq!(
        find(&im, |k| matches!(k, EventKind::Exit { tid: Tid(5796) })).len(),
        1
    );

    // Lost, malformed and ignored lines are counted, not fatal.
    assert_eq!(
        find(&im, |k| matches!(k, EventKind::Lost { count: 17 })).len(),
        1
    );
    assert_eq!(im.summary.lost_events, 17);
    assert_eq!(im.summary.malformed_lines, 1);
    assert_eq!(
        im.summary.malformed_examples[0].text,
        "this line is not perf script output"
    );
    assert_eq!(im.summary.counters.get("import.malformed_lines"), Some(&1));
    assert_eq!(im.summary.ignored_events.get("irq:softirq_raise"), Some(&1));
}

#[test]
fn syscalls_without_callchains() {
    let im = import_case("syscalls_no_callchain");
    assert!(find(&im, |k| matches!(k, EventKind::Stack { .. })).is_empty());
    let sys: Vec<EventKind> = im
        .events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::SyscallEnter { .. } | EventKind::SyscallExit { .. }
            )
        })
        .map(|e| e.kind)
        .collect();
    assert_eq!(sys.len(), 9);
    assert_eq!(
        sys[0],
        EventKind::SyscallExit {
            tid: Tid(8430),
            nr: 59,
            ret: 0
        }
    );
    // Arguments stay zero unless asked for.
    assert_eq!(
        sys[1],
        EventKind::SyscallEnter {
            tid: Tid(8430),
            nr: 21,
            args: [0; 3]
        }
    );
    assert_eq!(
        sys[2],
        EventKind::SyscallExit {
            tid: Tid(8430),
            nr: 21,
            ret: -2
        }
    );
    assert_eq!(
        sys[7],
        EventKind::SyscallEnter {
            tid: Tid(8433),
            nr: 74,
            args: [0; 3]
        }
    );
    assert_eq!(
        sys[8],
        EventKind::SyscallExit {
            tid: Tid(8433),
            nr: 74,
            ret: 0
        }
    );
    assert_eq!(
        find(&im, |k| matches!(
            k,
            EventKind::SchedSwitch {
                prev_state: TaskState::PREEMPTED,
                ..
            }
        ))
        .len(),
        1
    );

    let text = std::fs::read(data("syscalls_no_callchain.txt")).unwrap();
    let opts = ImportOptions {
        keep_syscall_args: true,
        ..ImportOptions::default()
    };
    let im = import_text(&text, &opts).unwrap();
    assert!(im.events.iter().any(|e| e.kind
        == EventKind::SyscallEnter {
            tid: Tid(8433),
            nr: 74,
            args: [1, 0, 0]
        }));
}

#[test]
fn nothing_parseable_is_an_error() {
    let err = import_text(b"hello\nworld\n", &ImportOptions::default())
        .err()
        .expect("must fail");
    assert!(
        matches!(
            err,
            ImportError::NoEvents {
                lines: 2,
                malformed: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("perf script"), "{err}");
    assert!(matches!(
        import_text(b"", &ImportOptions::default()),
        Err(ImportError::NoEvents { lines: 0, .. })
    ));
}

#[test]
fn damaged_input_never_panics() {
    // Every prefix-cut of every line of every case, plus invalid UTF-8 and CRLF.
    let mut text = Vec::new();
    for case in [
        "fsync_block_softirq",
        "irq_handler_waking",
        "task_events",
        "syscalls_no_callchain",
    ] {
        let t = std::fs::read_to_string(data(&format!("{case}.txt"))).unwrap();
        for line in t.lines() {
            for cut in [1, 7, 20, 40, 60, 90] {
                let mut end = cut.min(line.len());
                while !line.is_char_boundary(end) {
                    end -= 1;
                }
                text.extend_from_slice(&line.as_bytes()[..end]);
                text.extend_from_slice(b"\r\n");
            }
            text.extend_from_slice(line.as_bytes());
            text.push(b'\n');
        }
    }
    text.extend_from_slice(b"x\xff\xfe 1/1 [000] 1.0: sched:sched_switch: \xff\n");
    let im = import_text(&text, &ImportOptions::default()).expect("import survives");
    assert!(im.summary.malformed_lines > 0);
    assert!(!im.events.is_empty());
}
