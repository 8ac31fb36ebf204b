//! `causeway compare` on a normal and a slowed-down run of the blocking-write workload
//! (issue 15): the slow variant (`--sync-index 1`) also `fdatasync()`s an index record
//! from `sync_index()`; the comparison must name that syscall and that call site as
//! appearing only in the slow run, and nothing as only in the normal run's blocking
//! calls from the program.
//!
//! Needs root and the built zoo; skipped without root unless `CAUSEWAY_REQUIRE_ROOT=1`
//! (then it fails, as in CI).

mod common;

use common::{can_record, causeway, record, workload};
use serde_json::Value;

#[test]
fn compare_names_the_syscall_and_call_site_only_in_the_slow_run() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = workload("blocking-write");
    let exe = exe.to_str().unwrap();
    let normal = dir.path().join("normal.cwt");
    let slow = dir.path().join("slow.cwt");
    record(&normal, &["--events", "all", "--", exe, "--seconds", "1"]);
    record(
        &slow,
        &[
            "--events",
            "all",
            "--",
            exe,
            "--seconds",
            "1",
            "--sync-index",
            "1",
        ],
    );
    let diff = dir.path().join("diff.svg");
    let o = causeway()
        .args(["compare", "--json", "--diff-svg"])
        .arg(&diff)
        .arg(&normal)
        .arg(&slow)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let only = v["only_in_slow"].as_array().unwrap();
    let first = &only[0];
    assert_eq!(first["syscall"], "fdatasync", "{only:?}");
    assert_eq!(first["call_site"], "sync_index");
    assert!(first["calls"].as_u64().unwrap() > 10);
    assert!(first["time_ns"].as_u64().unwrap() > 0);
    // The fsync from flush_log is in both runs, so in neither "only" list.
    let only_normal = v["only_in_normal"].as_array().unwrap();
    assert!(
        !only
            .iter()
            .chain(only_normal)
            .any(|s| s["call_site"] == "flush_log"),
        "{v}"
    );
    let fsync = v["syscalls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["syscall"] == "fsync")
        .expect("fsync in both runs");
    assert!(
        fsync["normal_calls"].as_u64().unwrap() > 0 && fsync["slow_calls"].as_u64().unwrap() > 0
    );
    assert!(v["wait_emd_buckets"].as_f64().unwrap() >= 0.0);
    assert!(
        v["normal"]["recorded_at"]
            .as_str()
            .unwrap()
            .ends_with("UTC")
    );
    assert!(v["slow"]["bottleneck"].as_str().is_some());
    let svg = std::fs::read_to_string(&diff).unwrap();
    assert!(
        svg.contains("sync_index"),
        "differential flame graph shows the new frame"
    );

    // The text form says the same.
    let o = causeway()
        .arg("compare")
        .arg(&normal)
        .arg(&slow)
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("fdatasync from sync_index"), "{text}");
}
