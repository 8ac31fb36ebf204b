//! `causeway sql`'s output formats on a golden trace (no root, no zoo): an answer with
//! no rows keeps its columns in the table and CSV formats and is one empty JSON array,
//! so a script that parses the output never meets an empty file or two arrays.

#![cfg(feature = "sql")]

mod common;

use common::{causeway, ok};
use std::path::Path;

fn sql(args: &[&str], tables: &Path) -> String {
    let o = causeway()
        .arg("sql")
        .args(args)
        .arg(tables)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "sql {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn an_answer_without_rows_keeps_its_columns_and_is_valid_json() {
    let tmp = tempfile::tempdir().unwrap();
    let tables = tmp.path().join("t");
    let trace =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/bottleneck/lock-chain.cwt");
    ok(causeway()
        .args(["tables", "-o"])
        .arg(&tables)
        .arg(&trace)
        .output());

    let none = "SELECT state, count(*) AS n FROM thread_states WHERE dur_ns < 0 GROUP BY state";
    let table = sql(&[none], &tables);
    assert!(
        table.contains("state") && table.contains(" n "),
        "no header: {table:?}"
    );
    let csv = sql(&["--format", "csv", none], &tables);
    assert_eq!(csv.trim(), "state,n");
    let json = sql(&["--json", none], &tables);
    let v: serde_json::Value = serde_json::from_str(&json).expect("one JSON document");
    assert_eq!(v, serde_json::json!([]));

    // And with rows: one array of objects.
    let some = "SELECT state, count(*) AS n FROM thread_states GROUP BY state ORDER BY state";
    let v: serde_json::Value = serde_json::from_str(&sql(&["--json", some], &tables)).unwrap();
    let rows = v.as_array().expect("an array");
    assert!(rows.iter().any(|r| r["state"] == "blocked"), "{v}");
}
