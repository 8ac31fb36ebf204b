//! `causeway compare` on a normal and a slowed-down run of the blocking-write workload
//! (issue 15): the slow variant (`--sync-index 1`) also `fdatasync()`s an index record
//! from `sync_index()`; the comparison must name that syscall and that call site as
//! appearing only in the slow run, and nothing as only in the normal run's blocking
//! calls from the program.
//!
//! Needs root and the built zoo; skipped without root unless `CAUSEWAY_REQUIRE_ROOT=1`
//! (then it fails, as in CI).

mod common;

use common::causeway;
use common::zoo::{Zoo, analyse_json};

#[test]
fn compare_names_the_syscall_and_call_site_only_in_the_slow_run() {
    let Some(zoo) = Zoo::start() else { return };
    let normal = zoo
        .record("blocking-write")
        .out("normal.cwt")
        .flags(["--events", "all"])
        .seconds("1")
        .run();
    let slow = zoo
        .record("blocking-write")
        .out("slow.cwt")
        .flags(["--events", "all"])
        .seconds("1")
        .args(["--sync-index", "1"])
        .run();
    let diff = zoo.dir().join("diff.svg");
    let v = analyse_json(
        &slow,
        &[
            "compare",
            "--json",
            "--diff-svg",
            diff.to_str().unwrap(),
            normal.as_str(),
        ],
    );
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
