//! What a new user sees first: a default `causeway record` prints only causeway's own
//! lines on stderr (no libbpf or verifier log without `-v`), and every command that
//! runs a program and prints JSON keeps stdout for the JSON (the program's own output
//! goes to stderr). Needs root; skipped without it unless `CAUSEWAY_REQUIRE_ROOT=1`.

mod common;

use common::{can_record, causeway, workload};
use std::process::Output;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The workload the JSON tests run: it prints `throughput: …` on its stdout.
fn noisy_workload() -> Vec<String> {
    let bin = workload("blocking-write");
    vec![bin.display().to_string(), "--seconds".into(), "0.3".into()]
}

fn assert_json_only(what: &str, o: &Output) {
    assert!(o.status.success(), "{what}: {}", text(&o.stderr));
    let out = text(&o.stdout);
    if let Err(e) = serde_json::from_str::<serde_json::Value>(&out) {
        panic!("{what}: stdout is not JSON ({e}):\n{out}");
    }
    assert!(
        text(&o.stderr).contains("throughput"),
        "{what}: the program's own output should be on stderr:\n{}",
        text(&o.stderr)
    );
}

/// `causeway record ARGS -o DIR/t.cwt -- sleep 0.2`: its stderr, after checking that it
/// succeeded and wrote a trace.
fn record_sleep(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.cwt");
    let o = causeway()
        .arg("record")
        .args(args)
        .arg("-o")
        .arg(&out)
        .args(["--", "sleep", "0.2"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    assert!(out.is_file(), "{args:?}: no trace");
    text(&o.stderr)
}

/// Lines of stderr that are not causeway's own.
fn foreign(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| !l.starts_with("causeway:") && !l.starts_with("  "))
        .collect()
}

#[test]
fn a_default_recording_prints_only_causeways_lines() {
    if !can_record() {
        return;
    }
    let err = record_sleep(&[]);
    assert!(
        foreign(&err).is_empty(),
        "lines on stderr that are not causeway's: {:?}\n{err}",
        foreign(&err)
    );
    assert!(err.lines().count() <= 12, "{err}");
}

/// A program the verifier refuses falls back alone to its raw tracepoint: one warning
/// line names it, and libbpf's log (the verifier's) shows only with `-v`.
#[test]
fn a_refused_program_is_one_warning_and_its_log_needs_v() {
    if !can_record() {
        return;
    }
    let refuse = ["--test-refuse-btf", "hrtimer_expire_entry"];
    let err = record_sleep(&refuse);
    assert!(foreign(&err).is_empty(), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].contains("hrtimer_expire_entry"), "{err}");
    assert!(warnings[0].contains("raw tracepoint"), "{err}");
    let verbose = record_sleep(&["-v", refuse[0], refuse[1]]);
    assert!(
        verbose.lines().any(|l| l.starts_with("libbpf:")),
        "-v shows no libbpf lines:\n{verbose}"
    );
}

#[test]
fn record_json_with_a_command_keeps_stdout_for_the_json() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = causeway()
        .arg("record")
        .arg("-o")
        .arg(dir.path().join("t.cwt"))
        .arg("--json")
        .arg("--")
        .args(noisy_workload())
        .output()
        .unwrap();
    assert_json_only("record --json -- CMD", &o);
}

#[test]
fn bottleneck_json_with_a_command_keeps_stdout_for_the_json() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = causeway()
        .args(["bottleneck", "--json", "--out-dir"])
        .arg(dir.path())
        .arg("--")
        .args(noisy_workload())
        .output()
        .unwrap();
    assert_json_only("bottleneck --json -- CMD", &o);
}

/// Two hard links of one executable (the same inode), run side by side: each process's
/// frames are named by the path it was started from, not by the other name.
#[test]
fn hard_linked_programs_keep_their_own_names() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = workload("blocking-write");
    let (a, z) = (dir.path().join("aaa-tool"), dir.path().join("zzz-server"));
    std::fs::hard_link(&bin, &a).unwrap();
    std::fs::hard_link(&bin, &z).unwrap();
    let trace = dir.path().join("t.cwt");
    let script = format!(
        "{} --seconds 0.3 & {} --seconds 0.3; wait",
        z.display(),
        a.display()
    );
    let o = causeway()
        .arg("record")
        .arg("-o")
        .arg(&trace)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let dump = |args: &[&str]| {
        let o = causeway()
            .arg("dump")
            .args(args)
            .arg(&trace)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let all = dump(&[]);
    for (me, other) in [(&a, &z), (&z, &a)] {
        let comm = me.file_name().unwrap().to_str().unwrap();
        // The process's id from a line naming `COMM/PID` (comm is cut to 15 bytes).
        let short = &comm[..comm.len().min(15)];
        let pid = all
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{short}/")))
            .unwrap_or_else(|| panic!("{comm} not in the trace"));
        let frames = dump(&["--stacks", "--pid", pid]);
        let mine = frames.matches(me.to_str().unwrap()).count();
        let others = frames.matches(other.to_str().unwrap()).count();
        assert!(mine > 0, "{comm} ({pid}): no frame named by its path");
        assert_eq!(
            others, 0,
            "{comm} ({pid}): {others} frames named by the other link"
        );
    }
}
