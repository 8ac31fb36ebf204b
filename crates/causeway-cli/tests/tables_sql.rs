//! `causeway tables` and `causeway sql` on real recordings (issue 30): two zoo
//! workloads recorded with real eBPF, written as Parquet tables into one directory,
//! and queried with SQL: every table holds as many rows as the trace has events of its
//! kinds, the knots table says what `bottleneck --json` says, and the diagnosis
//! table holds the culprit chain of `diagnose --auto --json`.
//!
//! Needs root and the built zoo; skipped without root unless `CAUSEWAY_REQUIRE_ROOT=1`
//! (then it fails, as in CI).

mod common;

use common::zoo::{Zoo, analyse_json, json};
use common::{causeway, ok};
use serde_json::Value;
use std::path::Path;

/// `causeway sql --json QUERY DIR`, parsed.
fn sql(query: &str, dir: &Path) -> Vec<Value> {
    let o = causeway()
        .args(["sql", "--json", query])
        .arg(dir)
        .output()
        .expect("run causeway sql");
    assert!(
        o.status.success(),
        "causeway sql {query:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    json(&o).as_array().expect("an array of rows").clone()
}

/// Each event kind and the query that counts its rows in the tables.
const COUNTS: [(&str, &str); 29] = [
    ("sched_switch", "SELECT count(*) FROM switches"),
    (
        "wakeup",
        "SELECT count(*) FROM wakeups WHERE NOT new_thread",
    ),
    (
        "wakeup_new",
        "SELECT count(*) FROM wakeups WHERE new_thread",
    ),
    ("fork", "SELECT count(*) FROM lifecycle WHERE kind = 'fork'"),
    ("exec", "SELECT count(*) FROM lifecycle WHERE kind = 'exec'"),
    ("exit", "SELECT count(*) FROM lifecycle WHERE kind = 'exit'"),
    (
        "irq_entry",
        "SELECT count(*) FROM interrupts WHERE kind = 'irq' AND start_ns IS NOT NULL",
    ),
    (
        "irq_exit",
        "SELECT count(*) FROM interrupts WHERE kind = 'irq' AND end_ns IS NOT NULL",
    ),
    (
        "softirq_entry",
        "SELECT count(*) FROM interrupts WHERE kind = 'softirq' AND start_ns IS NOT NULL",
    ),
    (
        "softirq_exit",
        "SELECT count(*) FROM interrupts WHERE kind = 'softirq' AND end_ns IS NOT NULL",
    ),
    (
        "block_issue",
        "SELECT count(*) FROM block_io WHERE issue_ns IS NOT NULL",
    ),
    (
        "block_complete",
        "SELECT count(*) FROM block_io WHERE complete_ns IS NOT NULL",
    ),
    (
        "net_xmit",
        "SELECT count(*) FROM packets WHERE dir = 'xmit'",
    ),
    (
        "net_recv",
        "SELECT count(*) FROM packets WHERE dir = 'recv'",
    ),
    (
        "syscall_enter",
        "SELECT count(*) FROM syscalls WHERE enter_ns IS NOT NULL",
    ),
    (
        "syscall_exit",
        "SELECT count(*) FROM syscalls WHERE exit_ns IS NOT NULL",
    ),
    ("stack", "SELECT count(*) FROM callstacks"),
    ("marker", "SELECT count(*) FROM markers"),
    ("lost", "SELECT count(*) FROM losses"),
    (
        "signal_generate",
        "SELECT count(*) FROM signals WHERE kind = 'generate'",
    ),
    (
        "signal_deliver",
        "SELECT count(*) FROM signals WHERE kind = 'deliver'",
    ),
    (
        "timer_arm",
        "SELECT count(*) FROM timers WHERE kind = 'arm'",
    ),
    (
        "timer_expire",
        "SELECT count(*) FROM timers WHERE kind = 'expire'",
    ),
    (
        "sock_send",
        "SELECT count(*) FROM sockets WHERE kind = 'send'",
    ),
    (
        "sock_ready",
        "SELECT count(*) FROM sockets WHERE kind = 'ready'",
    ),
    (
        "go_run",
        "SELECT count(*) FROM goroutines WHERE kind = 'run'",
    ),
    (
        "go_park",
        "SELECT count(*) FROM goroutines WHERE kind = 'park'",
    ),
    (
        "go_net_wait",
        "SELECT count(*) FROM goroutines WHERE kind = 'net_wait'",
    ),
    (
        "go_ready",
        "SELECT count(*) FROM goroutines WHERE kind = 'ready'",
    ),
];

/// One query with every count of one trace as columns named after the event kinds.
fn counts_query(trace_id: &str) -> String {
    let cols: Vec<String> = COUNTS
        .iter()
        .map(|(kind, q)| {
            let filter = if q.contains(" WHERE ") {
                " AND"
            } else {
                " WHERE"
            };
            format!("({q}{filter} trace_id = '{trace_id}') AS {kind}")
        })
        .collect();
    format!("SELECT {}", cols.join(", "))
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("an integer, not {v}"))
}

/// The rows of the first trace's tables match its own counts, and its knots its
/// `bottleneck --json`.
fn check_trace(trace: &Path, trace_id: &str, dir: &Path) {
    let info = analyse_json(trace, &["info", "--json"]);
    let by_kind = info["events_by_kind"].as_object().unwrap();
    let row = &sql(&counts_query(trace_id), dir)[0];
    for (kind, _) in COUNTS {
        let want = by_kind.get(kind).map_or(0, int);
        assert_eq!(
            int(&row[kind]),
            want,
            "{}: rows for {kind} events (info says {want})",
            trace.display()
        );
    }
    let events: i64 = by_kind.values().map(int).sum();
    let t = &sql(
        &format!(
            "SELECT events, (SELECT count(*) FROM processes WHERE trace_id = '{trace_id}') AS processes FROM traces WHERE trace_id = '{trace_id}'"
        ),
        dir,
    )[0];
    assert_eq!(int(&t["events"]), events, "traces.events");
    assert_eq!(int(&t["processes"]), int(&info["processes"]), "processes");
    // The recorded processes' threads, as `info` counts them.
    let pids: std::collections::BTreeSet<i64> = info["top_cpu"]
        .as_array()
        .unwrap()
        .iter()
        .chain(info["top_blocked"].as_array().unwrap())
        .filter(|r| r["recorded"] == true)
        .map(|r| int(&r["pid"]))
        .collect();
    let list: Vec<String> = pids.iter().map(i64::to_string).collect();
    let th = &sql(
        &format!(
            "SELECT count(*) AS n FROM threads WHERE trace_id = '{trace_id}' AND pid IN ({})",
            list.join(",")
        ),
        dir,
    )[0];
    assert_eq!(
        int(&th["n"]),
        int(&info["threads"]),
        "threads of the recorded processes"
    );
    // Every thread's segments are in thread_states, each thread's tiling its life.
    let seg = &sql(
        &format!(
            "SELECT (SELECT sum(segments) FROM threads WHERE trace_id = '{trace_id}') AS declared,
                    (SELECT count(*) FROM thread_states WHERE trace_id = '{trace_id}') AS rows,
                    (SELECT count(*) FROM (SELECT utid, start_ns + dur_ns AS e,
                         lead(start_ns) OVER (PARTITION BY utid ORDER BY seg) AS next
                       FROM thread_states WHERE trace_id = '{trace_id}') WHERE next IS NOT NULL AND next <> e) AS gaps"
        ),
        dir,
    )[0];
    assert_eq!(int(&seg["declared"]), int(&seg["rows"]), "segments");
    assert!(int(&seg["rows"]) > 0, "no thread states");
    assert_eq!(int(&seg["gaps"]), 0, "segments of a thread leave gaps");

    // The bottleneck verdict: the first knot (or sink) and the summary.
    let report = analyse_json(trace, &["bottleneck", "--json"]);
    let summary = &sql(
        &format!("SELECT bottleneck FROM traces WHERE trace_id = '{trace_id}'"),
        dir,
    )[0]["bottleneck"];
    assert_eq!(summary, &report["summary"], "the verdict");
    let knots = report["knots"].as_array().unwrap();
    if let Some(k) = knots.first() {
        let got = &sql(
            &format!(
                "SELECT vertices, weight_ns, shape FROM knots WHERE trace_id = '{trace_id}' AND rank = 1"
            ),
            dir,
        );
        assert_eq!(got.len(), 1, "one knot of rank 1");
        assert_eq!(got[0]["vertices"], k["vertices"]);
        assert_eq!(got[0]["weight_ns"], k["weight_ns"]);
        assert_eq!(got[0]["shape"], k["shape"]);
    } else {
        let s = &report["sinks"][0];
        let got = &sql(
            &format!(
                "SELECT vertex, incoming_ns FROM sinks WHERE trace_id = '{trace_id}' AND NOT background LIMIT 1"
            ),
            dir,
        )[0];
        assert_eq!(got["vertex"], s["vertex"]);
        assert_eq!(got["incoming_ns"], s["incoming_ns"]);
    }

    // The culprit chain of the longest stall, hop for hop as `diagnose --auto --json`.
    let diag = causeway()
        .args(["diagnose", "--auto", "--json"])
        .arg(trace)
        .output()
        .unwrap();
    let rows = sql(
        &format!(
            "SELECT step, vertex, tid, start_ns, dur_ns, link FROM diagnosis \
             WHERE trace_id = '{trace_id}' ORDER BY step"
        ),
        dir,
    );
    if diag.status.success() {
        let chain = json(&diag)["chain"].as_array().unwrap().clone();
        assert_eq!(rows.len(), chain.len(), "hops of the chain");
        for (r, hop) in rows.iter().zip(&chain) {
            assert_eq!(r["vertex"], hop["vertex"]["id"]);
            assert_eq!(r["tid"], hop["vertex"]["tid"]);
            assert_eq!(r["start_ns"], hop["vertex"]["start_ns"]);
            assert_eq!(r["dur_ns"], hop["vertex"]["duration_ns"]);
            assert_eq!(r["link"], hop["kind"]);
        }
    } else {
        assert!(rows.is_empty(), "a chain where diagnose finds no stall");
    }
}

#[test]
fn two_recordings_as_tables_hold_every_event_and_the_verdict() {
    let Some(zoo) = Zoo::on_disk() else { return };
    let lock = zoo.record("lock-contention").seconds("1").run();
    let write = zoo.record("blocking-write").seconds("1").run();
    let dir = zoo.dir().join("tables");
    let o = ok(causeway()
        .args(["tables", "--json", "-o"])
        .arg(&dir)
        .arg(&lock.path)
        .arg(&write.path)
        .output());
    let written = json(&o);
    let written = written.as_array().unwrap();
    assert_eq!(written.len(), 2);
    for (w, trace) in written.iter().zip([&lock.path, &write.path]) {
        let id = w["trace_id"].as_str().unwrap();
        let part = Path::new(w["dir"].as_str().unwrap());
        assert!(part.ends_with(format!("trace={id}")), "{}", part.display());
        assert!(
            part.parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("host=")
        );
        check_trace(trace, id, &dir);
    }
    // Both traces in one query.
    let per = sql(
        "SELECT trace_id, count(*) AS n FROM switches GROUP BY trace_id",
        &dir,
    );
    assert_eq!(per.len(), 2, "{per:?}");
}

#[test]
fn a_trace_file_is_queried_directly_and_bad_sql_is_a_clear_error() {
    let Some(zoo) = Zoo::start() else { return };
    let t = zoo.record("lock-contention").seconds("1").run();
    let rows = sql(
        "SELECT thread, count(*) AS waits, dur(sum(dur_ns)) AS blocked FROM waits GROUP BY thread ORDER BY sum(dur_ns) DESC",
        &t.path,
    );
    assert!(
        rows.iter()
            .any(|r| r["thread"].as_str().unwrap().starts_with("worker")),
        "{rows:?}"
    );
    let o = causeway()
        .args(["sql", "SELECT nope FROM switches"])
        .arg(&t.path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("nope"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn the_fleet_census_counts_hosts_per_knot_site_and_names_the_odd_host() {
    let Some(zoo) = Zoo::on_disk() else { return };
    let lock = zoo.record("lock-contention").seconds("1").run();
    let write = zoo.record("blocking-write").seconds("1").run();
    let dir = zoo.dir().join("fleet");
    // Three hosts with the lock problem, one with another workload.
    for (host, trace) in [("a", &lock), ("b", &lock), ("c", &lock), ("d", &write)] {
        ok(causeway()
            .args(["tables", "--host", host, "-o"])
            .arg(&dir)
            .arg(&trace.path)
            .output());
    }
    let o = ok(causeway().args(["fleet", "--json"]).arg(&dir).output());
    let c = json(&o);
    assert_eq!(c["hosts"], 4);
    let top = &c["sites"][0];
    assert_eq!(top["kind"], "knot", "{c}");
    assert_eq!(top["hosts"], 3, "{c}");
    assert!(top["site"].as_str().unwrap().contains("worker_main"), "{c}");
    let odd = &c["outliers"][0];
    assert_eq!(odd["host"], "d", "{c}");
    assert!(
        odd["emd_octaves"].as_f64().unwrap() > c["outliers"][1]["emd_octaves"].as_f64().unwrap()
    );
    // The text form says the same.
    let o = causeway().arg("fleet").arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("fleet: 4 hosts"), "{text}");
}
