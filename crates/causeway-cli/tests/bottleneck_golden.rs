//! The bottleneck text report of each zoo workload, compared with the report kept
//! beside its recording in `tests/golden/bottleneck/` (recorded by
//! `scripts/record-goldens.sh`). The recordings are fixed, so every number is
//! reproducible and nothing is masked: a change of wording, of a number format or of a
//! verdict shows here and is made on purpose. After such a change, rewrite the reports
//! with `CAUSEWAY_BLESS=1 cargo test --release -p causeway-cli --test bottleneck_golden`
//! and read the diff before committing it. No root needed: it reads traces only.

use std::path::{Path, PathBuf};
use std::process::Command;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/bottleneck")
}

/// The first line that differs, with its number, for the failure message.
fn first_difference(want: &str, got: &str) -> String {
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        if w != g {
            return format!("line {}:\n  want: {w}\n  got:  {g}", i + 1);
        }
    }
    format!(
        "the reports differ in length: {} lines kept, {} now",
        want.lines().count(),
        got.lines().count()
    )
}

#[test]
fn every_zoo_report_matches_its_golden() {
    let bless = std::env::var_os("CAUSEWAY_BLESS").is_some();
    let mut traces: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cwt"))
        .collect();
    traces.sort();
    assert!(traces.len() >= 12, "goldens missing: {traces:?}");
    let mut failures = Vec::new();
    for trace in &traces {
        let o = Command::new(env!("CARGO_BIN_EXE_causeway"))
            .arg("bottleneck")
            .arg(trace)
            .output()
            .unwrap();
        // Every zoo workload has a knot or a sink: exit 0.
        assert!(
            o.status.success(),
            "{}: {}",
            trace.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let got = String::from_utf8(o.stdout).unwrap();
        let kept = trace.with_extension("txt");
        if bless {
            std::fs::write(&kept, &got).unwrap();
            continue;
        }
        let want =
            std::fs::read_to_string(&kept).unwrap_or_else(|e| panic!("{}: {e}", kept.display()));
        if want != got {
            failures.push(format!(
                "{}: {}",
                kept.display(),
                first_difference(&want, &got)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "bottleneck reports changed (CAUSEWAY_BLESS=1 rewrites them; read the diff):\n{}",
        failures.join("\n")
    );
}

/// `causeway whatif --json` on a golden recording.
fn whatif(trace: &Path, args: &[&str]) -> (bool, serde_json::Value, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_causeway"))
        .arg("whatif")
        .arg(trace)
        .args(["--json", "--factor", "2"])
        .args(args)
        .output()
        .expect("run causeway whatif");
    let json = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (
        o.status.success(),
        json,
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

/// The three ways to name blocking-write's flushes choose the same waits: the edge
/// from the consumer to the disk, every wait the disk ended (those and a few of other
/// threads), and the waits under the call site the edge's stacks name (`flush_log`,
/// which calls `fsync`). A call site that no wait blocked under is refused.
#[test]
fn an_edge_its_device_and_its_call_site_choose_the_same_waits() {
    let trace = golden_dir().join("blocking-write.cwt");
    let runs = [
        vec!["--edge", "consumer->disk"],
        vec!["--waits-on", "disk"],
        vec!["--site", "flush_log"],
    ];
    let got: Vec<serde_json::Value> = runs
        .iter()
        .map(|args| {
            let (ok, json, err) = whatif(&trace, args);
            assert!(ok, "{args:?}: {err}");
            json
        })
        .collect();
    let edge = &got[0];
    assert!(edge["waits_changed"].as_u64().unwrap() > 1000, "{edge}");
    assert!(edge["gain"].as_f64().unwrap() > 0.05, "{edge}");
    // The disk also ended a few waits of other threads than the consumer's; they do
    // not bear the counted work.
    let changed = |p: &serde_json::Value| p["waits_changed"].as_u64().unwrap();
    assert!(changed(&got[1]) >= changed(edge), "{}", got[1]);
    assert!(changed(&got[1]) <= changed(edge) + 50, "{}", got[1]);
    assert_eq!(changed(&got[2]), changed(edge), "{}", got[2]);
    for (args, p) in runs.iter().zip(&got).skip(1) {
        let (a, b) = (p["gain"].as_f64().unwrap(), edge["gain"].as_f64().unwrap());
        assert!((a - b).abs() < 0.01, "{args:?}: {a} against the edge's {b}");
    }
    assert_eq!(got[1]["changes"][0]["target"], "waits_on");
    assert_eq!(got[2]["changes"][0]["function"], "flush_log");
    let (ok, _, err) = whatif(&trace, &["--site", "flush_lo"]);
    assert!(!ok && err.contains("flush_lo"), "{err}");
}
