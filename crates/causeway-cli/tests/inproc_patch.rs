//! Patched function entries end to end: a program built with
//! `-fpatchable-function-entry=5` (tests/progs/patched.c), linked with libcauseway
//! statically (the trampoline within reach of a direct call) and as a shared library
//! (far away: through a near stub). The program checks its own entry bytes (five
//! one-byte nops before the library starts, a call while tracing, one 5-byte nop after
//! `cw_stop`), that arguments and results of every kind cross the trampolines intact,
//! and survives a longjmp out of three patched frames; the test reads its dump with
//! `causeway calls` and checks the call trees: every call of both threads, the frames
//! the longjmp skipped closed where it happened, nothing traced while off. No root needed.

mod common;

use common::causeway;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds patched.c, linked `static` (libcauseway.a) or shared (libcauseway.so).
fn build(dir: &Path, static_link: bool) -> PathBuf {
    let lib = common::libcauseway()
        .parent()
        .expect("libcauseway.so has a directory")
        .to_path_buf();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = dir.join(if static_link {
        "patched-static"
    } else {
        "patched-shared"
    });
    let mut cc = Command::new("cc");
    cc.args([
        "-O2",
        "-g",
        "-fpatchable-function-entry=5",
        "-Wno-prio-ctor-dtor",
    ])
    .arg("-I")
    .arg(manifest.join("../causeway-inproc/c"))
    .arg("-o")
    .arg(&exe)
    .arg(manifest.join("tests/progs/patched.c"));
    if static_link {
        cc.arg(lib.join("libcauseway.a"))
            .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lgcc_s"]);
    } else {
        cc.arg("-L")
            .arg(&lib)
            .arg("-lcauseway")
            .arg(format!("-Wl,-rpath,{}", lib.display()));
    }
    let st = cc.status().expect("run cc");
    assert!(st.success(), "cc failed on patched.c");
    exe
}

fn calls_json(trace: &Path, args: &[&str]) -> Value {
    let o = causeway()
        .args(["calls", "--json"])
        .args(args)
        .arg(trace)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "causeway calls {args:?} {}: {} {}",
        trace.display(),
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Instances of a call-chain signature (`causeway calls` exits 1 when there are none).
fn instances(trace: &Path, sig: &str) -> usize {
    let o = causeway()
        .args(["calls", "--json", "--match", sig])
        .arg(trace)
        .output()
        .unwrap();
    let n = serde_json::from_slice::<Value>(&o.stdout)
        .map(|v| v["matches"]["instances"].as_array().map_or(0, |a| a.len()))
        .unwrap_or_else(|e| panic!("{sig}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!(o.status.code(), Some(if n > 0 { 0 } else { 1 }), "{sig}");
    n
}

fn case(static_link: bool) {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), static_link);
    let out = Command::new(&exe)
        .env("CAUSEWAY_OUTPUT", dir.path())
        .env("CAUSEWAY_TRIGGER", "signal=off,stall=off")
        .env_remove("CAUSEWAY_START")
        .env_remove("CAUSEWAY_PATCH")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("the program's report");
    // Entry bytes: the call while on, one 5-byte nop when off. A linked libcauseway.a
    // starts after the program's priority-100 constructor, which sees the compiler's
    // five one-byte nops; a shared one starts before any of the program's.
    if static_link {
        assert_eq!(r["before"], "9090909090", "{r}");
    } else {
        assert!(r["before"].as_str().unwrap().starts_with("e8"), "{r}");
    }
    assert!(r["on"].as_str().unwrap().starts_with("e8"), "{r}");
    assert_eq!(r["off"], "0f1f440000", "{r}");
    // Values through the trampolines.
    assert_eq!(r["s"], 60200, "{r}");
    assert_eq!(r["ws"], 3001000, "{r}");
    assert_eq!(r["d"], 6.0, "{r}");
    assert_eq!(r["va"], 15, "{r}");
    assert_eq!(r["vd"], 0.875, "{r}");
    assert_eq!(r["big"], serde_json::json!([40, 41, 42]), "{r}");
    assert_eq!(r["jumped"], 1);
    assert_eq!(r["quiet"], 46);
    assert_eq!(r["sites"], 10, "{r}");
    assert_eq!(r["skipped"], 0, "{r}");
    assert_eq!(r["dumped"], 0, "{r} {stderr}");
    let trace = PathBuf::from(r["trace"].as_str().unwrap());
    // 200 top_a calls on the main thread and 1000 on the worker, each with two leaves;
    // the call after cw_stop is not in the dump (it came after it anyway).
    assert_eq!(instances(&trace, "top_a>mid_b>leaf_c"), 2 * 1200);
    // The longjmp: the three skipped frames closed; the calls after it are main's.
    assert_eq!(instances(&trace, "jump_top>jump_mid>jump_deep"), 1);
    assert_eq!(instances(&trace, "jump_deep>top_a"), 0);
    assert_eq!(instances(&trace, "jump_top>top_a"), 0);
    let top = calls_json(&trace, &["--top", "100"]);
    let count = |name: &str| {
        top["top"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["function"] == name)
            .map(|f| f["calls"].as_u64().unwrap())
    };
    assert_eq!(count("top_a"), Some(1200), "{top:#}");
    assert_eq!(count("leaf_c"), Some(2400), "{top:#}");
    assert_eq!(count("scale"), Some(1));
    assert_eq!(count("sum_va"), Some(1));
    assert_eq!(count("sum_vd"), Some(1));
    assert_eq!(count("make_big"), Some(1));
    assert_eq!(count("jump_deep"), Some(1));
    assert_eq!(count("look_before"), None, "not patchable");
}

#[test]
fn patched_entries_trace_every_call_with_the_library_linked_statically() {
    case(true);
}

#[test]
fn patched_entries_trace_every_call_through_a_stub_to_a_shared_library() {
    case(false);
}
