//! The stall watchdog end to end: an event loop built with -finstrument-functions runs
//! under `causeway run --inproc` (libcauseway preloaded), stalls once for 300 ms in
//! `handle_request > load_settings > parse_config`, the watchdog (200 ms) dumps during
//! the stall, and `causeway calls --chains` names that chain first; and `causeway
//! trigger --inproc` makes a running traced program dump. No root needed, except for
//! the flight recorder whose condition makes the traced program dump.

mod common;

use common::{causeway, libcauseway, ok};
use serde_json::Value;
use std::path::PathBuf;

/// `causeway trigger --inproc` signals every libcauseway process on the machine, so the
/// tests of this file run one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The dumps libcauseway wrote into `dir` (`causeway-PID-N.cwt`), sorted.
fn inproc_dumps(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("causeway-") && n.ends_with(".cwt"))
        })
        .collect();
    v.sort();
    v
}

/// `causeway calls --json --match` of the stall-loop's stalled chain on a dump.
fn stalled_chain_matches(trace: &std::path::Path) -> Value {
    let m = causeway()
        .args([
            "calls",
            "--json",
            "--match",
            "handle_request>load_settings>parse_config",
        ])
        .arg(trace)
        .output()
        .unwrap();
    assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
    serde_json::from_slice(&m.stdout).unwrap()
}

#[test]
fn the_watchdog_dump_holds_the_stalled_chain_and_calls_chains_names_it_first() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lib = libcauseway();
    let dir = tempfile::tempdir().unwrap();
    let exe = common::build_instrumented(dir.path(), "stall-loop");
    let out = causeway()
        .args([
            "run",
            "--inproc",
            "--trigger",
            "stall=200ms,signal=off",
            "--out-dir",
        ])
        .arg(dir.path())
        .arg("--lib")
        .arg(&lib)
        .arg("--")
        .arg(&exe)
        .output()
        .expect("run causeway run");
    assert!(
        out.status.success(),
        "causeway run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let traces = inproc_dumps(dir.path());
    assert_eq!(traces.len(), 1, "exactly one stall, one dump: {traces:?}");
    let o = ok(causeway()
        .args(["calls", "--json", "--chains", "3"])
        .arg(&traces[0])
        .output());
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["trigger"]["kind"], "stall");
    let first = &v["chains"][0];
    let names: Vec<&str> = first["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["function"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "main",
            "event_loop",
            "handle_request",
            "load_settings",
            "parse_config"
        ],
        "{first:#}"
    );
    let last = first["calls"].as_array().unwrap().last().unwrap();
    assert_eq!(last["open"], true, "the stall was still going at the dump");
    let ms = first["self_in_window_ns"].as_f64().unwrap() / 1e6;
    assert!(
        (190.0..320.0).contains(&ms),
        "stalled {ms} ms before the dump"
    );
    // The text form names the same chain first.
    let t = causeway()
        .args(["calls", "--chains", "1"])
        .arg(&traces[0])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&t.stdout);
    assert!(
        text.contains("main > event_loop > handle_request > load_settings > parse_config"),
        "{text}"
    );
    // The signature finds the stalled instance first, with its duration.
    let v = stalled_chain_matches(&traces[0]);
    let inst = &v["matches"]["instances"][0]["calls"];
    assert!(
        inst[2]["duration_ns"].as_f64().unwrap() / 1e6 > 190.0,
        "{inst:#}"
    );
    // The export shows the calls as nested slices on the thread (Chrome JSON form).
    let json = dir.path().join("calls.json");
    let e = causeway()
        .args(["export", "--chrome-json"])
        .arg(&json)
        .arg(&traces[0])
        .output()
        .unwrap();
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let begins = |name: &str| {
        events
            .iter()
            .filter(|e| e["cat"] == "call" && e["ph"] == "b" && e["name"] == name)
            .count()
    };
    assert!(begins("parse_config") >= 1 && begins("event_loop") >= 1);
    // A bad signature is a usage error that says what to write.
    let bad = causeway()
        .args(["calls", "--match", "a>>b"])
        .arg(&traces[0])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("signature"));
}

#[test]
fn causeway_trigger_inproc_makes_a_running_program_dump() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lib = libcauseway();
    let dir = tempfile::tempdir().unwrap();
    let exe = common::build_instrumented(dir.path(), "stall-loop");
    // 600 turns of 2 ms, no stall: about 1.5 s of event loop.
    let child = causeway()
        .args([
            "run",
            "--inproc",
            "--trigger",
            "signal=USR2,stall=off",
            "--out-dir",
        ])
        .arg(dir.path())
        .arg("--lib")
        .arg(&lib)
        .arg("--")
        .arg(&exe)
        .args(["600", "-1"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let t = causeway().args(["trigger", "--inproc"]).output().unwrap();
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let traces = inproc_dumps(dir.path());
    assert_eq!(traces.len(), 1, "{traces:?}");
    let o = causeway()
        .args(["calls", "--json", "--top", "5"])
        .arg(&traces[0])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["trigger"]["kind"], "signal");
    let names: Vec<&str> = v["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"wait_for_event"), "{names:?}");
}

/// A flight recorder's own condition reaches libcauseway: the stall-loop, traced in
/// process with its watchdog off, stalls 300 ms in `parse_config`; the kernel flight
/// recorder's `blocked>200ms comm=stall-loop` fires during the stall and sends the
/// program its dump signal, so both windows are written for the same moment. The
/// program also has `kernel` in its triggers: its signal-asked dump must not ask the
/// flight recorder back (one flight dump, not two).
#[test]
fn a_flight_recorder_condition_makes_the_traced_program_dump_too() {
    if !common::can_record() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lib = libcauseway();
    let dir = tempfile::tempdir().unwrap();
    let exe = common::build_instrumented(dir.path(), "stall-loop");
    let flight = dir.path().join("flight.cwt");
    // The summary goes to a file: the program writes to stdout too.
    let json = dir.path().join("summary.json");
    let out = causeway()
        .args([
            "record",
            "--flight",
            "8M",
            "--trigger",
            "blocked>200ms comm=stall-loop",
        ])
        .arg(format!("--json={}", json.display()))
        .arg("-o")
        .arg(&flight)
        .args(["--", env!("CARGO_BIN_EXE_causeway")])
        .args([
            "run",
            "--inproc",
            "--trigger",
            "signal=USR2,stall=off,kernel",
            "--out-dir",
        ])
        .arg(dir.path())
        .arg("--lib")
        .arg(&lib)
        .arg("--")
        .arg(&exe)
        .output()
        .expect("run causeway record");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let summary: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let dumps = summary["dumps"].as_array().unwrap();
    assert_eq!(dumps.len(), 1, "one stall, one flight dump: {summary:#}");
    let asked = dumps[0]["inproc_asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "the traced program was asked: {summary:#}");
    // The in-process dump, asked by signal, holds the stalled chain.
    let traces = inproc_dumps(dir.path());
    assert_eq!(traces.len(), 1, "{traces:?} {stderr}");
    let v = stalled_chain_matches(&traces[0]);
    assert_eq!(v["trigger"]["kind"], "signal");
    let inst = &v["matches"]["instances"][0]["calls"];
    let ms = inst[2]["duration_ns"].as_f64().unwrap() / 1e6;
    assert!(ms > 190.0, "the stall in the in-process dump: {inst:#}");
    // Both windows hold the stall: the flight dump has the program's long wait.
    let dump = PathBuf::from(dumps[0]["path"].as_str().unwrap());
    let r = causeway_format::TraceReader::open(&dump).unwrap();
    let mark = r.stats().trigger.expect("a trigger mark");
    assert_eq!(mark.reason, causeway_format::TriggerReason::Blocked);
}
