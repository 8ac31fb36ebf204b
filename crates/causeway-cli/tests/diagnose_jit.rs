//! The program's own frame in a diagnosis of a program on a managed runtime (issue 45):
//! `workloads/node/sync-hash.js` (a Node.js HTTP server whose one route hashes with
//! `pbkdf2Sync` on its event loop, started with `--perf-basic-prof
//! --interpreted-frames-native-stack`) is recorded under its own HTTP load with real
//! eBPF, and `diagnose --auto --stall wait --thread sh-client` must name, beside the culprit thread
//! running, the JavaScript function that ran (`slowHandler`, from V8's perf map), not
//! only the OpenSSL loop linked into the node binary underneath it.
//!
//! Needs root and Node.js; skipped without root unless `CAUSEWAY_REQUIRE_ROOT=1`.

mod common;

use common::zoo::{Zoo, analyse_json, answer, json};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/node/sync-hash.js")
}

/// The perf map V8 wrote for process `pid`: it outlives the process.
fn remove_perf_map(pid: &Value) {
    if let Some(p) = pid.as_u64() {
        let _ = std::fs::remove_file(format!("/tmp/perf-{p}.map"));
    }
}

#[test]
fn the_verdict_names_the_javascript_handler_that_ran() {
    let Some(zoo) = Zoo::start() else { return };
    let trace = zoo
        .record_program("node")
        // Enough on-CPU samples to place a run of a few ms; more would take the CPUs
        // the server needs (each sample unwinds a deep JIT stack).
        .flags(["--sample", "199"])
        // Hashes long enough (5x the default, tens of ms) that the client's longest
        // wait is one behind a hash, not one behind V8 compiling the server's code
        // at its first requests (11-14 ms: the verdict then named V8's bytecode
        // generator, once in three runs).
        .args([
            script().to_str().unwrap(),
            "--seconds",
            "2",
            "--iterations",
            "100000",
        ])
        .run();
    let info = analyse_json(&trace, &["info", "--json"]);
    eprintln!("records lost: {}", info["lost_events"]);
    // The client's longest wait: on two CPUs shared with the server and the recorder,
    // its longest stall may be a wait for a CPU, which names no other thread.
    let flags = ["--auto", "--stall", "wait", "--thread", "sh-client"];
    let d = json(&answer(
        &trace,
        &[&["diagnose", "--json"][..], &flags].concat(),
    ));
    let chain = d["chain"].as_array().expect("a culprit chain");
    let last = &chain.last().unwrap()["vertex"];
    remove_perf_map(&last["pid"]);
    assert_eq!(last["thread"], "sh-server", "{:#}", d["chain"]);
    assert_eq!(last["block"], "running", "{:#}", d["chain"]);
    let site = &last["site"];
    assert_eq!(site["own"][0], "slowHandler", "{:#}", d["chain"]);
    assert_eq!(site["jit"], true, "{site:#}");
    // The hash underneath is the context, not the answer.
    assert!(
        site["entry"].is_string() && site["leaf"].is_string(),
        "{site:#}"
    );
    // The text's verdict says it in the culprit's line.
    let text = answer(&trace, &[&["diagnose"][..], &flags].concat()).stdout;
    let text = String::from_utf8(text).unwrap();
    let verdict: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert!(
        verdict.iter().any(|l| l.contains("sh-server")
            && l.contains("running")
            && l.contains("in slowHandler")),
        "{text}"
    );
}
