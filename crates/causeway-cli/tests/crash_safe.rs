//! Crash-safe recording and honest salvage (issue 12), with real recordings: a
//! SIGKILLed recorder keeps all but its last checkpoint interval in its temporary file
//! and the trace that was at the output path before; `check` salvages it and says what
//! it covers, and `info --json` marks the salvaged trace; a text file is never
//! replaced; two recordings to one path never both succeed; `check` on a full disk
//! leaves no partial salvage behind. Needs root; skipped without it unless
//! `CAUSEWAY_REQUIRE_ROOT=1`.

mod common;

use common::{can_record, causeway, record, start_recording, workload};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn sigkill_keeps_all_but_the_last_interval_and_the_previous_trace() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.cwt");
    let bin = workload("blocking-net");
    // A trace already at the path.
    record(&out, &["--", bin.to_str().unwrap(), "--seconds", "0.3"]);
    let before = std::fs::read(&out).unwrap();

    let rec = start_recording(&out, &["--", bin.to_str().unwrap(), "--seconds", "5"]);
    let (mut child, started) = (rec.child, rec.at);
    let temp = rec
        .temp
        .expect("record names its temporary file before it starts");
    std::thread::sleep(Duration::from_millis(3_500));
    let recorded = started.elapsed().as_secs_f64();
    // SAFETY: kill on the pid of a child this test started and has not waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();

    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "the trace that was at the path survives a killed recording"
    );
    assert!(temp.exists(), "{} is left for salvage", temp.display());

    // check on the output path points at the interrupted recording.
    let o = causeway().arg("check").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&temp.display().to_string()), "{text}");

    // check salvages the temporary file: all but the last second (the checkpoint
    // interval), with half a second of slack for starting up.
    let salvaged = dir.path().join("k.salvaged.cwt");
    let o = causeway()
        .args(["check", "--json", "-o"])
        .arg(&salvaged)
        .arg(&temp)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["clean"], false);
    assert_eq!(v["has_footer"], false);
    let s = &v["salvaged"][0];
    let covered = s["covered_ns"].as_u64().unwrap() as f64 / 1e9;
    assert!(
        covered >= recorded - 1.0 - 0.5,
        "salvage covers {covered:.2} s of a recording killed after {recorded:.2} s: {v}"
    );
    assert_eq!(s["stats_lost"], true);
    assert!(
        s["original_ns"].is_null(),
        "an interrupted recording's length is unknown"
    );

    // The salvaged trace reads, and info marks it, in text and JSON.
    let o = causeway()
        .args(["info", "--json"])
        .arg(&salvaged)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["salvaged"]["stats_lost"], true, "{}", v["salvaged"]);
    assert!(v["salvaged"]["covered_ns"].as_u64().unwrap() > 0);
    assert!(
        v["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("salvaged: covers"),
        "{}",
        v["notes"]
    );
    let o = causeway().arg("info").arg(&salvaged).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("NOTE:       salvaged: covers"), "{text}");
    // And the bottleneck report says so at its top.
    let o = causeway()
        .arg("bottleneck")
        .arg(&salvaged)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("warning: salvaged: covers"),
        "{text}{}",
        stderr(&o)
    );
    let o = causeway()
        .args(["bottleneck", "--json"])
        .arg(&salvaged)
        .output()
        .unwrap();
    assert_eq!(json(&o)["caveats"]["salvaged"]["stats_lost"], true);
}

#[test]
fn a_text_file_at_the_output_path_is_not_replaced() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f.txt");
    std::fs::write(&out, "my notes\n").unwrap();
    let o = causeway()
        .args(["record", "-o"])
        .arg(&out)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not a causeway trace"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "my notes\n");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "nothing else created"
    );
}

#[test]
fn two_recordings_to_one_path_do_not_both_succeed() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("same.cwt");
    let bin = workload("blocking-write");
    let run = || {
        causeway()
            .args(["record", "-o"])
            .arg(&out)
            .args(["--", bin.to_str().unwrap(), "--seconds", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (run(), run());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let ok = [&a, &b].iter().filter(|o| o.status.success()).count();
    assert_eq!(ok, 1, "a: {}\nb: {}", stderr(&a), stderr(&b));
    let failed = if a.status.success() { &b } else { &a };
    let msg = stderr(failed);
    assert!(msg.contains("replaced while recording"), "{msg}");
    // The losing trace is not lost: it stays at its temporary path, complete.
    let kept = msg
        .split("this trace is kept as ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .map(|p| PathBuf::from(p.trim_end_matches([',', ':'])))
        .expect("the message names where the trace is");
    let o = causeway().arg("info").arg(&kept).output().unwrap();
    assert!(o.status.success(), "{}: {}", kept.display(), stderr(&o));
    let o = causeway().arg("info").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `check` on a disk that fills while it writes the salvage (a file size limit makes
/// the write fail the same way): an error, and no partial `.salvaged.cwt` left.
#[test]
fn check_on_a_full_disk_leaves_no_partial_salvage() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.cwt");
    let bin = workload("blocking-write");
    record(&out, &["--", bin.to_str().unwrap(), "--seconds", "0.5"]);
    let mut bytes = std::fs::read(&out).unwrap();
    bytes.truncate(bytes.len() * 2 / 3);
    let cut = dir.path().join("cut.cwt");
    std::fs::write(&cut, &bytes).unwrap();
    assert!(
        bytes.len() > 8192,
        "a trace big enough to overflow the limit"
    );
    let salvaged = dir.path().join("cut.cwt.salvaged.cwt");
    let mut cmd = causeway();
    cmd.arg("check").arg(&cut);
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec, only async-signal-safe calls (setrlimit, signal).
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 4096,
                rlim_max: 4096,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            // Writes past the limit then fail with EFBIG instead of killing the process.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("removed"), "{}", stderr(&o));
    assert!(!salvaged.exists(), "a partial salvage was left behind");
    // Without the limit, the same check salvages.
    let o = Command::new(env!("CARGO_BIN_EXE_causeway"))
        .arg("check")
        .arg(&cut)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(salvaged.exists());
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let path = task.unwrap().path().join("children");
        let text = std::fs::read_to_string(path).unwrap_or_default();
        out.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    out
}

/// Whether process `pid` still runs (a zombie has ended).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// A killed recorder's command gets the parent-death signal and ends; with `--no-kill`
/// it runs on.
#[test]
fn a_killed_recorders_command_ends_unless_kept() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = workload("blocking-write");
    for keep in [false, true] {
        let out = dir.path().join(format!("keep-{keep}.cwt"));
        let mut args = vec![];
        if keep {
            args.push("--no-kill");
        }
        let log_dir = dir.path().to_str().unwrap();
        args.extend([
            "--",
            bin.to_str().unwrap(),
            "--seconds",
            "8",
            "--dir",
            log_dir,
        ]);
        let rec = start_recording(&out, &args);
        let mut child = rec.child;
        let command = children_of(child.id());
        assert_eq!(command.len(), 1, "the recorder's command: {command:?}");
        let command = command[0];
        std::thread::sleep(Duration::from_millis(500));
        // SAFETY: kill on the pid of a child this test started and has not waited for.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        child.wait().unwrap();
        let gone_by = std::time::Instant::now() + Duration::from_secs(2);
        while alive(command) && std::time::Instant::now() < gone_by {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            alive(command),
            keep,
            "the command of a killed recorder {} (--no-kill: {keep})",
            if keep { "runs on" } else { "ends" }
        );
        // SAFETY: ending the kept command, which this test started.
        unsafe { libc::kill(command as i32, libc::SIGKILL) };
    }
}
