//! End-to-end tests of the `causeway` binary on synthetic traces.

use causeway_format::{
    Cpu, Event, EventKind, Header, SoftirqVec, TaskState, Tgid, ThreadInfo, Tid, Timestamp,
    TraceWriter, Waker,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

fn causeway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_causeway"))
        .args(args)
        .output()
        .expect("run causeway")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Deterministic pseudo-random numbers (xorshift), so the trace is the same every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Write a trace of `n` events over 2 CPUs in which 8 threads block, get woken and run,
/// with interrupts and syscalls mixed in. Returns the expected count per kind name.
fn synth_trace(path: &Path, n: u64) -> BTreeMap<String, u64> {
    let f = std::fs::File::create(path).unwrap();
    let mut w = TraceWriter::new(f, &Header::synthetic(2)).unwrap();
    for t in 1..=8u32 {
        let comm = w.intern(&format!("worker-{t}"));
        w.add_thread(ThreadInfo {
            tid: Tid(100 + t),
            tgid: Tgid(100),
            since: Timestamp(0),
            comm,
        });
    }
    let irq_name = w.intern("virtio1-req.0");
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut current = [Tid(0), Tid(0)];
    let mut ts = 1_000_000u64;
    for _ in 0..n {
        ts += 1 + rng.next() % 3000;
        let cpu = (rng.next() % 2) as usize;
        let tid = Tid(101 + (rng.next() % 8) as u32);
        let kind = match rng.next() % 10 {
            0..=3 => {
                let prev = current[cpu];
                current[cpu] = tid;
                EventKind::SchedSwitch {
                    prev_tid: prev,
                    prev_state: if rng.next().is_multiple_of(3) {
                        TaskState::RUNNABLE
                    } else {
                        TaskState::INTERRUPTIBLE
                    },
                    next_tid: tid,
                }
            }
            4..=6 => EventKind::Wakeup {
                wakee: tid,
                target_cpu: Cpu(cpu as u32),
                waker: match rng.next() % 3 {
                    0 => Waker::Thread { tid: current[cpu] },
                    1 => Waker::Irq {
                        irq: 36,
                        name: irq_name,
                    },
                    _ => Waker::Softirq {
                        vec: SoftirqVec::BLOCK,
                    },
                },
            },
            7 => EventKind::IrqEntry {
                irq: 36,
                name: irq_name,
            },
            8 => EventKind::SyscallEnter {
                tid,
                nr: 74,
                args: [0; 3],
            },
            _ => EventKind::SyscallExit {
                tid,
                nr: 74,
                ret: 0,
            },
        };
        *counts.entry(kind.tag().name().to_string()).or_default() += 1;
        w.push(&Event {
            ts: Timestamp(ts),
            cpu: Cpu(cpu as u32),
            kind,
        })
        .unwrap();
    }
    w.finish().unwrap();
    counts
}

#[test]
fn info_counts_a_million_events() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("synth.cwt");
    let expected = synth_trace(&path, 1_000_000);
    let o = causeway(&["info", "--json", path.to_str().unwrap()]);
    assert!(
        o.status.success(),
        "info failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["events"], 1_000_000);
    let by_kind: BTreeMap<String, u64> =
        serde_json::from_value(v["events_by_kind"].clone()).unwrap();
    assert_eq!(by_kind, expected);
    assert_eq!(v["lost_events"], 0);
    assert_eq!(v["threads"], 8);
    // Text form prints the same totals.
    let o = causeway(&["info", path.to_str().unwrap()]);
    let text = stdout(&o);
    assert!(text.contains("events:     1000000"), "{text}");
    for (k, n) in &expected {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == [k.as_str(), &n.to_string()]),
            "missing `{k} {n}` in:\n{text}"
        );
    }
}

#[test]
fn exit_codes_follow_the_documented_contract() {
    let dir = tempfile::tempdir().unwrap();
    // Help is success.
    assert_eq!(causeway(&["--help"]).status.code(), Some(0));
    // A bad flag is a user error.
    assert_eq!(
        causeway(&["info", "--no-such-flag", "x"]).status.code(),
        Some(1)
    );
    // A missing file is a user error.
    let missing = dir.path().join("missing.cwt");
    let o = causeway(&["info", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.cwt"));
    // A file that is not a trace is bad input, with a clear message and no panic.
    let junk = dir.path().join("junk.cwt");
    std::fs::write(&junk, b"definitely not a trace").unwrap();
    let o = causeway(&["info", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a causeway trace"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn check_salvages_intact_chunks_of_a_truncated_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.cwt");
    synth_trace(&path, 200_000);
    let data = std::fs::read(&path).unwrap();
    // Clean trace: exit 0, nothing written.
    let o = causeway(&["check", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("trace is intact"));
    // Cut the file at two thirds: the reader refuses, check salvages earlier chunks.
    let cut = dir.path().join("cut.cwt");
    std::fs::write(&cut, &data[..data.len() * 2 / 3]).unwrap();
    let o = causeway(&["info", cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("byte"));
    let out = dir.path().join("saved.cwt");
    let o = causeway(&[
        "check",
        "--json",
        cut.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let saved = v["salvaged_events"].as_u64().unwrap();
    assert!(saved > 50_000 && saved < 200_000, "salvaged {saved}");
    // The salvaged copy is a valid trace with exactly those events.
    let o = causeway(&["info", "--json", out.to_str().unwrap()]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["events"].as_u64().unwrap(), saved);
}

#[test]
fn dump_filters_by_kind_tid_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.cwt");
    synth_trace(&path, 20_000);
    let p = path.to_str().unwrap();
    let o = causeway(&["dump", "--json", "--kind", "wakeup", "--tid", "103", p]);
    assert!(o.status.success());
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!lines.is_empty());
    for l in &lines {
        assert_eq!(l["event"], "wakeup");
        let wakee = l["wakee"].as_u64().unwrap();
        let waker = l["waker"]["tid"].as_u64();
        assert!(wakee == 103 || waker == Some(103), "{l}");
    }
    // A time window relative to the first event.
    let all = causeway(&["dump", "--json", p]);
    let first: serde_json::Value =
        serde_json::from_str(stdout(&all).lines().next().unwrap()).unwrap();
    let t0 = first["ts_ns"].as_u64().unwrap();
    let o = causeway(&["dump", "--json", "--from", "1ms", "--to", "2ms", p]);
    for l in stdout(&o).lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let ts = v["ts_ns"].as_u64().unwrap();
        assert!(ts >= t0 + 1_000_000 && ts <= t0 + 2_000_000);
    }
    // Unknown kinds are a user error naming the known ones.
    let o = causeway(&["dump", "--kind", "bogus", p]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sched_switch"));
}

#[test]
fn reports_say_first_that_events_were_lost_and_how_much_time_that_covers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lossy.cwt");
    // wPerf's blocking write, 2,000 rounds of 1 µs, and one CPU that lost 500 events
    // in the middle.
    let mut s = causeway_testkit::synth::blocking_write(0, 2000);
    s.lost(1_000_000, 1, 500);
    std::fs::write(&path, s.to_trace_bytes(2).unwrap()).unwrap();
    let p = path.to_str().unwrap();
    for args in [vec!["bottleneck", p], vec!["latency", p]] {
        let o = causeway(&args);
        let text = stdout(&o);
        let first = text.lines().next().unwrap_or("");
        assert!(
            first.starts_with("warning: 500 events were lost while recording (1 CPU)"),
            "{args:?}: {text}"
        );
        assert!(first.contains("of the 2.0 ms analysed"), "{first}");
    }
    let o = causeway(&["bottleneck", "--json", p]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["caveats"]["lost"]["events"], 500, "{}", j["caveats"]);
    assert!(j["caveats"]["lost"]["covered_ns"].as_u64().unwrap() > 0);
    // A complete trace has no caveat.
    let path2 = dir.path().join("whole.cwt");
    let s = causeway_testkit::synth::blocking_write(0, 2000);
    std::fs::write(&path2, s.to_trace_bytes(2).unwrap()).unwrap();
    let o = causeway(&["bottleneck", path2.to_str().unwrap()]);
    assert!(!stdout(&o).contains("warning:"), "{}", stdout(&o));
    let o = causeway(&["bottleneck", "--json", path2.to_str().unwrap()]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(j.get("caveats").is_none());
}
