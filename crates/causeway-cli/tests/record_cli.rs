//! `causeway record` as a user meets it: the other ways to pick targets (`-p`, `--comm`),
//! the raw-tracepoint fallback, and clear errors (no privileges, unknown PID, bad
//! options). Needs root; skipped without it unless `CAUSEWAY_REQUIRE_ROOT=1`.

mod common;

use common::{can_record, causeway, model, workload};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn attaching_to_a_pid_records_it_and_stops_when_it_exits() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut target = Command::new(workload("lock-contention"))
        .args(["--seconds", "1.5"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let out = dir.path().join("pid.cwt");
    let pid = target.id().to_string();
    let o = causeway()
        .args(["record", "-o"])
        .arg(&out)
        .args(["-p", &pid])
        .output()
        .unwrap();
    target.wait().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (m, _, _) = model(&out);
    for w in ["worker-0", "worker-1", "worker-2", "worker-3"] {
        let t = m
            .threads()
            .find(|t| t.comm == w)
            .unwrap_or_else(|| panic!("{w} missing"));
        assert_eq!(t.tgid.map(|g| g.0.to_string()), Some(pid.clone()));
        assert!(
            t.segments.len() > 10,
            "{w}: only {} segments",
            t.segments.len()
        );
    }
}

#[test]
fn comm_targets_processes_started_later() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("comm.cwt");
    let rec = causeway()
        .args([
            "record",
            "--comm",
            "load-imbalance",
            "--duration",
            "2",
            "-o",
        ])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let st = Command::new(workload("load-imbalance"))
        .args(["--seconds", "0.5"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    let o = rec.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (m, tables, _) = model(&out);
    let names: Vec<&str> = m.threads().map(|t| t.comm.as_str()).collect();
    assert!(
        names.contains(&"phase-0") && names.contains(&"phase-1"),
        "{names:?}"
    );
    // Only the named program was followed: no process of another name has a thread
    // with a recorded blocking stack (a stack is only walked for recorded processes).
    let li = tables
        .processes
        .iter()
        .find(|p| tables.string(p.exe).ends_with("load-imbalance"))
        .expect("process row");
    assert!(
        m.threads()
            .any(|t| t.tgid == Some(li.tgid) && t.comm == "phase-0")
    );
}

#[test]
fn raw_tracepoints_record_the_same_events() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("raw.cwt");
    let bin = workload("blocking-write");
    let o = causeway()
        .current_dir(dir.path())
        .args(["record", "--raw-tracepoints", "--json", "-o"])
        .arg(&out)
        .args(["--", bin.to_str().unwrap(), "--seconds", "0.5"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("\"tracepoints\": \"raw\""), "{text}");
    let (m, _, _) = model(&out);
    let consumer = m
        .threads()
        .find(|t| t.comm == "consumer")
        .expect("consumer");
    let woken = consumer
        .segments
        .iter()
        .filter(|s| {
            matches!(
                &s.state,
                causeway_model::SegmentState::Blocked {
                    waker: Some(_),
                    switch_out_stack: Some(_),
                    ..
                }
            )
        })
        .count();
    assert!(woken > 100, "only {woken} waits with waker and stack");
}

#[test]
fn errors_are_clear() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.cwt");
    // No such process.
    let o = causeway()
        .args(["record", "-o"])
        .arg(&out)
        .args(["-p", "999999999"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no process with PID 999999999"));
    // No target, two targets, a bad option value.
    for args in [
        vec!["record"],
        vec!["record", "-a", "-p", "1"],
        vec!["record", "--stack-mode", "deep", "-a"],
        vec!["record", "--events", "sched,disk", "-a"],
        vec!["record", "--syscalls", "nosuch", "-a"],
        // A mistyped option before `--` is an error, never the command to run.
        vec!["record", "--no-such-option", "--", "true"],
    ] {
        let o = causeway().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(!o.stderr.is_empty());
    }
    // A command that does not exist.
    let o = causeway()
        .args(["record", "-o"])
        .arg(&out)
        .args(["--", "no-such-command-xyz"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("command not found"));
    // Without privileges: say which capabilities are needed.
    let o = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(env!("CARGO_BIN_EXE_causeway"))
        .args(["record", "-a", "--duration", "1", "-o", "/dev/null"])
        .output()
        .expect("setpriv (util-linux)");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("CAP_BPF"));
}
