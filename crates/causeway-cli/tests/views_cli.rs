//! The view commands on the golden trace (no root needed): export decodes with the
//! published schema's types, folded output round-trips, compare of a trace with itself
//! finds nothing only in one run, the report is one self-contained page; plus the
//! generated completions and man pages and self-contained `dump --json` stack lines.

mod common;

use causeway_stacks::Folded;
use common::causeway;
use perfetto_protos::trace::Trace as PbTrace;
use protobuf::Message;
use std::path::{Path, PathBuf};

fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../causeway-format/tests/data/golden-v1.1.cwt")
}

fn run(args: &[&str]) -> std::process::Output {
    causeway().args(args).output().unwrap()
}

#[test]
fn export_of_the_golden_trace_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let pf = dir.path().join("g.pftrace");
    let g = golden();
    let o = run(&[
        "export",
        "--perfetto",
        pf.to_str().unwrap(),
        g.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t = PbTrace::parse_from_bytes(&std::fs::read(&pf).unwrap()).unwrap();
    let threads: Vec<String> = t
        .packet
        .iter()
        .filter(|p| p.has_track_descriptor() && p.track_descriptor().thread.is_some())
        .map(|p| p.track_descriptor().thread.thread_name().to_string())
        .collect();
    assert!(threads.iter().any(|n| n == "worker"), "{threads:?}");
    assert!(t.packet.iter().any(|p| p.has_track_event()));
}

#[test]
fn folded_output_of_the_golden_trace_round_trips() {
    let g = golden();
    let o = run(&["flamegraph", "--folded", g.to_str().unwrap()]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let f = Folded::parse(&text).unwrap();
    assert_eq!(f.to_text(), text);
    // The inlined frames of the golden stack come above the function they are in.
    assert!(text.contains("worker_main;do_work;take_lock;"), "{text}");
    let mut rd = causeway_format::TraceReader::open(&g).unwrap();
    let tr = causeway_model::Trace::read(&mut rd, |_| {}).unwrap();
    let blocked: u64 = tr
        .model()
        .threads()
        .flat_map(|t| &t.segments)
        .filter(|s| s.state.is_blocked())
        .map(|s| s.duration().0)
        .sum();
    assert_eq!(f.total(), blocked);
}

#[test]
fn compare_of_a_trace_with_itself_finds_nothing_only_in_one_run() {
    let g = golden();
    let o = run(&[
        "compare",
        "--json",
        g.to_str().unwrap(),
        g.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["only_in_slow"].as_array().unwrap().len(), 0);
    assert_eq!(v["wait_emd_buckets"].as_f64(), Some(0.0));
}

#[test]
fn report_is_one_self_contained_page() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let g = golden();
    let o = run(&["report", g.to_str().unwrap(), "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    for want in [
        "<svg id=\"overview\"",
        "id=\"graph",
        "perfetto-link",
        "Summary",
    ] {
        assert!(page.contains(want), "{want}");
    }
    assert!(!page.contains("<script src") && !page.contains("<link "));
}

#[test]
fn completions_and_man_pages_come_from_the_cli_definition() {
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completions", shell]);
        assert!(o.status.success());
        let s = String::from_utf8(o.stdout).unwrap();
        for cmd in ["export", "flamegraph", "compare", "report", "bottleneck"] {
            assert!(s.contains(cmd), "{shell} completion lacks {cmd}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["man", "--out-dir", dir.path().to_str().unwrap()]);
    assert!(o.status.success());
    for page in [
        "causeway.1",
        "causeway-export.1",
        "causeway-report.1",
        "causeway-record.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        assert!(text.contains(".TH"), "{page}");
    }
}

#[test]
fn dump_json_stack_lines_carry_their_frames() {
    let g = golden();
    let o = run(&["dump", "--json", "--kind", "stack", g.to_str().unwrap()]);
    assert!(o.status.success());
    let first: serde_json::Value =
        serde_json::from_str(String::from_utf8(o.stdout).unwrap().lines().next().unwrap()).unwrap();
    let user: Vec<&str> = first["user_frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(user.contains(&"worker_main+0x30 worker.c:42"), "{user:?}");
    assert_eq!(first["kernel_frames"][0], "schedule+0x44");
}

fn bottleneck_golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/bottleneck/{name}.cwt"))
}

/// Every key of a JSON document with its value, paths joined by `.`.
fn leaves<'a>(
    v: &'a serde_json::Value,
    path: &str,
    out: &mut Vec<(String, &'a serde_json::Value)>,
) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                out.push((format!("{path}.{k}"), x));
                leaves(x, &format!("{path}.{k}"), out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| leaves(x, &format!("{path}[]"), out)),
        _ => {}
    }
}

/// The convention: every time in every JSON output is integer nanoseconds named
/// `_ns`. No key names seconds, milliseconds or microseconds, no `_ns` value is a float,
/// and no bare `ts`.
#[test]
fn every_json_output_counts_time_in_integer_nanoseconds() {
    let g = golden();
    let g = g.to_str().unwrap();
    let bw = bottleneck_golden("blocking-write");
    let lc = bottleneck_golden("lock-contention");
    let (bw, lc) = (bw.to_str().unwrap(), lc.to_str().unwrap());
    let commands: Vec<Vec<&str>> = vec![
        vec!["info", "--json", bw],
        vec!["bottleneck", "--json", bw],
        vec!["bottleneck", "--json", lc],
        vec!["latency", "--json", bw],
        vec!["latency", "diff", "--json", bw, lc],
        vec!["diagnose", "--json", "--auto", bw],
        vec!["compare", "--json", bw, lc],
        vec!["flamegraph", "--json", bw],
        vec!["check", "--json", g],
        vec!["calls", "--json", g],
        vec!["dump", "--json", g],
    ];
    let mut checked = 0;
    for c in &commands {
        let o = run(c);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{c:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = String::from_utf8(o.stdout).unwrap();
        // One document, or one per line (dump).
        let docs: Vec<serde_json::Value> = match serde_json::from_str(&text) {
            Ok(v) => vec![v],
            Err(_) => text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
        };
        assert!(!docs.is_empty(), "{c:?} printed nothing");
        for d in &docs {
            let mut all = Vec::new();
            leaves(d, "", &mut all);
            for (path, v) in all {
                // The recorder's counters are stored in the trace under the names the
                // recorder of the day gave them (these goldens predate `_ns` ones).
                if path.starts_with(".counters.") {
                    continue;
                }
                let key = path.rsplit('.').next().unwrap().trim_end_matches("[]");
                for bad in ["_s", "_ms", "_us", "_secs", "seconds"] {
                    assert!(!key.ends_with(bad), "{c:?}: {path} is not in `_ns`");
                }
                assert_ne!(key, "ts", "{c:?}: {path} should be `ts_ns`");
                if key.ends_with("_ns") {
                    let ints = |v: &serde_json::Value| v.is_u64() || v.is_null();
                    let ok = ints(v) || v.as_array().is_some_and(|a| a.iter().all(ints));
                    assert!(ok, "{c:?}: {path} = {v} is not integer ns");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} `_ns` values seen");
}
