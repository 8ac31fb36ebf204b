//! A recording never overwrites an earlier trace silently: a regular file at the output
//! path is kept as `PATH.old` when the new trace replaces it (perf's habit), and said on
//! stderr; a recording that fails before it starts leaves the file alone, and devices
//! and FIFOs are written to as they are. Needs root; skipped without it unless
//! `CAUSEWAY_REQUIRE_ROOT=1`.

mod common;

use common::{can_record, causeway, record, workload};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `PATH.old`.
fn old(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".old");
    PathBuf::from(s)
}

/// The line the recorder prints when it keeps a previous file as `old`.
fn kept_line(old: &Path) -> String {
    format!("causeway: kept the previous trace as {}", old.display())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `causeway info PATH` reads the trace.
fn assert_valid_trace(path: &Path) {
    let o = causeway().arg("info").arg(path).output().unwrap();
    assert!(
        o.status.success(),
        "causeway info {}: {}",
        path.display(),
        stderr(&o)
    );
}

#[test]
fn a_second_recording_keeps_the_first_as_old() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("trace.cwt");
    let bin = workload("blocking-write");
    let args = ["--", bin.to_str().unwrap(), "--seconds", "0.3"];

    let first = record(&out, &args);
    assert!(
        !stderr(&first).contains("kept the previous"),
        "{}",
        stderr(&first)
    );
    assert!(!old(&out).exists(), "nothing to keep on the first run");
    let first_bytes = std::fs::read(&out).unwrap();

    let second = record(&out, &args);
    assert!(
        stderr(&second).contains(&kept_line(&old(&out))),
        "{}",
        stderr(&second)
    );
    assert_eq!(
        std::fs::read(old(&out)).unwrap(),
        first_bytes,
        "the .old file is the first trace, unchanged"
    );
    assert_valid_trace(&out);
    assert_valid_trace(&old(&out));
    assert_ne!(std::fs::read(&out).unwrap(), first_bytes, "a new trace");

    // A third run replaces the older .old with the second trace.
    let second_bytes = std::fs::read(&out).unwrap();
    record(&out, &args);
    assert_eq!(std::fs::read(old(&out)).unwrap(), second_bytes);
}

#[test]
fn a_recording_that_does_not_start_leaves_the_file_alone() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("keep.cwt");
    let content = b"CAUSEWAY an earlier trace".to_vec();
    std::fs::write(&out, &content).unwrap();
    for args in [
        // No such process: found before anything is created.
        vec!["-p", "999999999"],
        // A usage error.
        vec!["-a", "-p", "1"],
        // A command that does not exist.
        vec!["--", "no-such-command-xyz"],
    ] {
        let o = causeway()
            .args(["record", "-o"])
            .arg(&out)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("kept the previous"), "{args:?}");
        assert_eq!(std::fs::read(&out).unwrap(), content, "{args:?}");
        assert!(
            !old(&out).exists(),
            "{args:?} created {}",
            old(&out).display()
        );
    }
}

#[test]
fn a_fifo_is_written_to_not_renamed() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.cwt");
    let st = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(st.success());
    let mut reader = Command::new("cat")
        .arg(&fifo)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let o = causeway()
        .args(["record", "-o"])
        .arg(&fifo)
        .args(["--", "true"])
        .output()
        .unwrap();
    if !o.status.success() {
        // The FIFO may never have been opened: do not wait for the reader.
        reader.kill().unwrap();
        reader.wait().unwrap();
        panic!("causeway record -o FIFO: {}", stderr(&o));
    }
    let read = reader.wait_with_output().unwrap();
    assert!(!read.stdout.is_empty(), "the trace went through the FIFO");
    assert!(!stderr(&o).contains("kept the previous"), "{}", stderr(&o));
    assert!(!old(&fifo).exists());
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

/// Flight dumps are numbered from 1 in every run: a new run keeps the last run's dump.
#[test]
fn a_flight_dump_keeps_the_previous_runs_dump() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("flight.cwt");
    let dump = dir.path().join("flight.1.cwt");
    let bin = workload("circular-timeout");
    // The client waits 20 ms in every poll: the condition holds at once.
    let args = [
        "--flight",
        "1M",
        "--trigger",
        "blocked>15ms comm=ct-client",
        "--",
        bin.to_str().unwrap(),
        "--seconds",
        "0.5",
    ];
    record(&base, &args);
    let first_bytes = std::fs::read(&dump).expect("a first dump");
    assert!(!old(&dump).exists());
    let second = record(&base, &args);
    assert!(
        stderr(&second).contains(&kept_line(&old(&dump))),
        "{}",
        stderr(&second)
    );
    assert_eq!(std::fs::read(old(&dump)).unwrap(), first_bytes);
    assert_valid_trace(&dump);
}

/// `causeway bottleneck -- CMD` records through the same path into
/// `OUT_DIR/bottleneck.cwt`.
#[test]
fn bottleneck_keeps_its_previous_recording() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("bottleneck.cwt");
    let bin = workload("blocking-write");
    let run = || {
        let o = causeway()
            .args(["bottleneck", "--out-dir"])
            .arg(dir.path())
            .args(["--", bin.to_str().unwrap(), "--seconds", "0.3"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    run();
    let first_bytes = std::fs::read(&trace).unwrap();
    let second = run();
    assert!(
        stderr(&second).contains(&kept_line(&old(&trace))),
        "{}",
        stderr(&second)
    );
    assert_eq!(std::fs::read(old(&trace)).unwrap(), first_bytes);
}
