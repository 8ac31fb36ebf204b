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
