//! Another engine reads causeway's tables (issue 30): DuckDB, from PyPI in
//! `target/interop-venv` (made by `scripts/setup.sh`), counts every table's rows of a
//! real recording and gets what `causeway sql` gets, and sums a time column the same.
//!
//! Needs root (the recording) and DuckDB; without either it is skipped, unless
//! `CAUSEWAY_REQUIRE_ROOT=1` (CI), where it fails.

mod common;

use common::zoo::{Zoo, json};
use common::{causeway, ok};
use std::path::{Path, PathBuf};
use std::process::Command;

fn duckdb_python() -> Option<PathBuf> {
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/interop-venv/bin/python3");
    let ok = Command::new(&py)
        .args(["-c", "import duckdb"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(py);
    }
    let why = "DuckDB is not installed in target/interop-venv (scripts/setup.sh installs it)";
    assert!(std::env::var_os("CAUSEWAY_REQUIRE_ROOT").is_none(), "{why}");
    eprintln!("skipped: {why}");
    None
}

#[test]
fn duckdb_counts_what_causeway_sql_counts() {
    let Some(zoo) = Zoo::start() else { return };
    let Some(py) = duckdb_python() else { return };
    let t = zoo.record("lock-contention").seconds("1").run();
    let dir = zoo.dir().join("tables");
    ok(causeway()
        .args(["tables", "-o"])
        .arg(&dir)
        .arg(&t.path)
        .output());

    let names: Vec<String> = {
        let o = ok(causeway()
            .args(["sql", "--json", "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name"])
            .arg(&dir)
            .output());
        json(&o)
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["table_name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(names.len() >= 29, "{names:?}");
    let counts: Vec<String> = names
        .iter()
        .map(|n| format!("(SELECT count(*) FROM {n}) AS {n}"))
        .collect();
    let ours = causeway()
        .args([
            "sql",
            "--json",
            &format!(
                "SELECT {}, (SELECT sum(dur_ns) FROM thread_states) AS state_ns",
                counts.join(", ")
            ),
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let ours = json(&ours)[0].clone();

    // DuckDB reads the same files by path (without hive partitioning: the files carry
    // `host` themselves).
    let script = format!(
        "import duckdb, json, sys\n\
         d = sys.argv[1]\n\
         out = {{}}\n\
         for n in {names:?}:\n\
         \x20   out[n] = duckdb.sql(f\"SELECT count(*) FROM read_parquet('{{d}}/*/*/{{n}}.parquet', hive_partitioning=false)\").fetchall()[0][0]\n\
         out['state_ns'] = duckdb.sql(f\"SELECT sum(dur_ns) FROM read_parquet('{{d}}/*/*/thread_states.parquet', hive_partitioning=false)\").fetchall()[0][0]\n\
         print(json.dumps(out))\n"
    );
    let o = Command::new(&py)
        .arg("-c")
        .arg(&script)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "duckdb: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let theirs = json(&o);
    for n in names.iter().map(String::as_str).chain(["state_ns"]) {
        assert_eq!(
            theirs[n].as_i64(),
            ours[n].as_i64(),
            "{n}: DuckDB {} rows, causeway sql {}",
            theirs[n],
            ours[n]
        );
    }
    assert!(ours["switches"].as_i64().unwrap() > 0);
}
