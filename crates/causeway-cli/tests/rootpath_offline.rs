//! `causeway rootpath TRACE` on a real libcauseway trace: a program built with
//! -finstrument-functions (`tests/progs/two-peaks-calls.c`) runs under `causeway run
//! --inproc` and dumps at exit; the offline descent on its slow peak ends in `nap`
//! (the sleep), on its fast peak in `checksum` (the short loop). No root needed.

mod common;

use common::{causeway, libcauseway};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Run the program under libcauseway with a dump at exit; the trace's path.
fn trace(dir: &Path) -> PathBuf {
    let exe = common::build_instrumented(dir, "two-peaks-calls");
    let out = causeway()
        .args(["run", "--inproc", "--trigger", "exit,signal=off,stall=off"])
        .arg("--out-dir")
        .arg(dir)
        .arg("--lib")
        .arg(libcauseway())
        .arg("--")
        .arg(&exe)
        .arg("400")
        .output()
        .expect("run causeway run");
    assert!(
        out.status.success(),
        "causeway run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let traces: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwt"))
        .collect();
    assert_eq!(traces.len(), 1, "one dump, at exit: {traces:?}");
    traces[0].clone()
}

fn rootpath(trace: &Path, peak: &str) -> Value {
    let o = causeway()
        .arg("rootpath")
        .arg(trace)
        .args(["--json", "--func", "do_operation", "--peak", peak])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn path_of(v: &Value) -> Vec<&str> {
    v["path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect()
}

#[test]
fn the_slow_peak_ends_in_the_sleep_and_the_fast_one_in_the_loop() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path());
    let slow = rootpath(&t, "last");
    assert_eq!(
        path_of(&slow),
        ["do_operation", "slow_path", "nap"],
        "{slow:#}"
    );
    assert_eq!(slow["stop"], "leaf");
    assert_eq!(slow["from_trace"], true);
    // All 100 slow calls are in the peak and each reached nap: exact, not sampled.
    assert_eq!(slow["levels"][1]["samples"], 100, "{slow:#}");
    let nap = slow["levels"][1]["callees"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["function"] == "nap")
        .unwrap();
    assert_eq!(nap["maxcount"], 100);

    let fast = rootpath(&t, "1");
    assert_eq!(
        path_of(&fast),
        ["do_operation", "fast_path", "checksum"],
        "{fast:#}"
    );
    // At most a few of the 300 fast calls were slowed out of the fast peak.
    let n = fast["levels"][0]["samples"].as_u64().unwrap();
    assert!((280..=300).contains(&n), "{n} fast calls in peak 1");

    // A function the trace does not record is a clear error, not a panic.
    let bad = causeway()
        .arg("rootpath")
        .arg(&t)
        .args(["--func", "no_such_function", "--peak", "1"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no completed call of no_such_function"));
}
