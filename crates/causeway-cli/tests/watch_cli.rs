//! `causeway watch` and `record --watch` on the `spin-flag` workload with real
//! hardware watchpoints: attaching to a running process (`-p`), the errors a user
//! can make, and the functions offered for uprobes when breakpoints are unavailable
//! (found in the binary's code).
//!
//! The recording tests need root and the built zoo; skipped without root unless
//! `CAUSEWAY_REQUIRE_ROOT=1` (then they fail, as in CI).

mod common;

use causeway_format::{EventKind, Marker, TraceReader};
use common::{can_record, causeway, workload};
use serde_json::Value;
use std::process::{Command, Stdio};

#[test]
fn the_functions_that_touch_a_flag_are_found_in_the_code() {
    // What `watch` offers for uprobes when the kernel refuses breakpoints: every
    // function of spin-flag that reads or writes `done`, and no other.
    let data = std::fs::read(workload("spin-flag")).unwrap();
    let var = causeway_record::watch::find_symbol(&data, "done", None).unwrap();
    assert_eq!(var.len, 8);
    let f = causeway_record::watch::functions_referring(&data, var.vaddr, var.len);
    for name in ["spin_until_done", "sleep_until_done", "helper_main"] {
        assert!(f.iter().any(|x| x == name), "{name} not in {f:?}");
    }
    assert!(!f.iter().any(|x| x == "compute_part"), "{f:?}");
}

#[test]
fn watch_refuses_what_it_cannot_watch() {
    // Usage errors need no privileges.
    let o = causeway()
        .args(["watch", "--symbol", "done", "--len", "3", "-p", "1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no watchpoint length"));
    let o = causeway().args(["watch", "-p", "1"]).output().unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--symbol NAME or --addr ADDR"));
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.cwt");
    let exe = workload("spin-flag");
    let o = causeway()
        .args(["watch", "--symbol", "no_such_flag", "-o"])
        .arg(&out)
        .arg("--")
        .arg(&exe)
        .args(["--seconds", "0.2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no symbol `no_such_flag`"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // `--watch` with several processes: which one's variable?
    let o = causeway()
        .args(["record", "--watch", "done", "-a", "-d", "0.1", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs one process"));
}

#[test]
fn watch_attaches_to_a_running_process_and_records_its_flag() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut prog = Command::new(workload("spin-flag"))
        .args(["--seconds", "4"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Let it start its threads: they are watched from the first drain on anyway.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let out = dir.path().join("attached.cwt");
    let json = dir.path().join("summary.json");
    let o = causeway()
        .args(["watch", "--symbol", "done", "-d", "1s", "-p"])
        .arg(prog.id().to_string())
        .arg("-o")
        .arg(&out)
        .arg(format!("--json={}", json.display()))
        .output()
        .unwrap();
    let _ = prog.kill();
    let _ = prog.wait();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("watched 8 bytes at 0x"), "{err}");
    let s: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let addr = s["watched"]["addr"].as_u64().unwrap();
    assert!(
        s["counters"]["watch_threads"].as_u64().unwrap() >= 4,
        "{s:#}"
    );
    // The trace holds writes by the helpers and reads by the waiter, at the flag's
    // address, and never a read and a write for the same access.
    let mut r = TraceReader::open(&out).unwrap();
    let tables = r.tables().clone();
    let name = |tid: u32| {
        tables
            .threads
            .iter()
            .rev() // the latest name: threads name themselves after they start
            .find(|t| t.tid.0 == tid)
            .map(|t| tables.string(t.comm).to_string())
            .unwrap_or_default()
    };
    let (mut writers, mut readers) = (Vec::new(), Vec::new());
    for e in r.events() {
        let e = e.unwrap();
        if let EventKind::Marker {
            tid,
            marker: Marker::DataFlag {
                addr: a, access, ..
            },
        } = e.kind
        {
            assert_eq!(a, addr);
            let list = if access.is_write() {
                &mut writers
            } else {
                &mut readers
            };
            list.push(name(tid.0));
        }
    }
    assert!(!writers.is_empty() && !readers.is_empty());
    assert!(
        writers.iter().all(|w| w.starts_with("helper-")),
        "{writers:?}"
    );
    assert!(readers.iter().any(|r| r == "waiter"), "{readers:?}");
}
