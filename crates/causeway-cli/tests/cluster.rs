//! `causeway sql --cluster` on a real Ballista cluster (issue 30): a scheduler and two
//! executors started as separate `causeway cluster` processes on localhost, and the
//! same queries answered embedded and on the cluster, row for row. The tables are the
//! golden traces of four "hosts", so the test needs neither root nor the zoo.

#![cfg(feature = "cluster")]

mod common;

use common::causeway;
use serde_json::Value;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// The cluster's processes, stopped when the test ends however it ends.
struct Cluster {
    children: Vec<Child>,
    scheduler: String,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Ports nobody listens on now (taken from the kernel, then released).
fn free_ports(n: usize) -> Vec<u16> {
    let held: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free port"))
        .collect();
    held.iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

fn spawn(args: &[String], log: &Path) -> Child {
    let err = std::fs::File::create(log).unwrap();
    causeway()
        .args(args)
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .expect("start a cluster process")
}

fn wait_for_port(port: u16, what: &str, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} never listened on {port}: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A scheduler and two executors, each its own process, all listening.
fn start(dir: &Path) -> Cluster {
    let p = free_ports(5);
    let scheduler = format!("127.0.0.1:{}", p[0]);
    let mut cluster = Cluster {
        children: Vec::new(),
        scheduler: scheduler.clone(),
    };
    let log = dir.join("scheduler.log");
    cluster.children.push(spawn(
        &[
            "cluster".into(),
            "scheduler".into(),
            "--bind".into(),
            scheduler.clone(),
        ],
        &log,
    ));
    wait_for_port(p[0], "the scheduler", &log);
    for (i, ports) in [(p[1], p[2]), (p[3], p[4])].into_iter().enumerate() {
        let log = dir.join(format!("executor{i}.log"));
        let mut args: Vec<String> = [
            "cluster",
            "executor",
            "--scheduler",
            &scheduler,
            "--bind-host",
            "127.0.0.1",
            "--external-host",
            "127.0.0.1",
            "--flight-port",
            &ports.0.to_string(),
            "--grpc-port",
            &ports.1.to_string(),
            "--concurrency",
            "2",
        ]
        .map(String::from)
        .into();
        // The second executor also prints Ballista's own log lines.
        if i == 1 {
            args.push("-v".into());
        }
        cluster.children.push(spawn(&args, &log));
        wait_for_port(ports.0, "an executor", &log);
    }
    cluster
}

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/bottleneck")
        .join(format!("{name}.cwt"))
}

fn ok(o: Output, what: &str) -> Output {
    assert!(
        o.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Run `c` to its end, or fail after `secs` (a query the cluster never answers must
/// fail the test, not hang it).
fn output_within(mut c: std::process::Command, secs: u64, what: &str) -> Output {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start causeway");
    let deadline = Instant::now() + Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}: no answer within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// `causeway sql --json QUERY DIR`, embedded or on the cluster.
fn sql(query: &str, dir: &Path, cluster: Option<&str>) -> Vec<Value> {
    let mut c = causeway();
    c.args(["sql", "--json"]);
    if let Some(s) = cluster {
        c.args(["--cluster", s]);
    }
    c.arg(query).arg(dir);
    let o = ok(output_within(c, 120, query), query);
    serde_json::from_slice::<Value>(&o.stdout)
        .expect("JSON rows")
        .as_array()
        .expect("an array of rows")
        .clone()
}

/// The queries: a scan with a filter and a grouping, the standard views (joins over
/// three tables), the census's call-site query, and a causeway function run on the
/// executors. Every ORDER BY covers the whole row, so the order is defined.
const QUERIES: [&str; 5] = [
    "SELECT host, state, count(*) AS n, sum(dur_ns) AS total FROM thread_states
     GROUP BY host, state ORDER BY host, state",
    "SELECT host, thread, waker, count(*) AS n, sum(dur_ns) AS total FROM waits
     GROUP BY host, thread, waker ORDER BY host, thread, waker",
    "SELECT host, tid, thread, running_ns, blocked_ns, waits, max_wait_ns FROM thread_summary
     ORDER BY host, tid, thread, running_ns",
    causeway_sql::fleet::SITES_QUERY,
    "SELECT host, utid, dur(blocked_ns) AS blocked FROM threads
     WHERE blocked_ns > 0 ORDER BY host, utid",
];

#[test]
fn the_same_queries_answer_alike_embedded_and_on_a_two_executor_cluster() {
    let tmp = tempfile::tempdir().unwrap();
    let tables = tmp.path().join("fleet");
    for (host, trace) in [
        ("a", "lock-contention"),
        ("b", "lock-contention"),
        ("c", "lock-chain"),
        ("d", "blocking-write"),
    ] {
        let mut c = causeway();
        c.args(["tables", "--host", host, "-o"]).arg(&tables);
        ok(c.arg(golden(trace)).output().unwrap(), "causeway tables");
    }
    let cluster = start(tmp.path());
    for q in QUERIES {
        let embedded = sql(q, &tables, None);
        assert!(!embedded.is_empty(), "{q} returned no rows");
        let distributed = sql(q, &tables, Some(&cluster.scheduler));
        assert_eq!(embedded, distributed, "{q}");
    }
    // The census through the cluster, whole: sites and odd hosts.
    let fleet = |dir: &Path, cluster: Option<&str>| {
        let mut c = causeway();
        c.args(["fleet", "--json"]).arg(dir);
        if let Some(s) = cluster {
            c.args(["--cluster", s]);
        }
        let o = ok(output_within(c, 120, "causeway fleet"), "causeway fleet");
        String::from_utf8(o.stdout).unwrap()
    };
    assert_eq!(
        fleet(&tables, None),
        fleet(&tables, Some(&cluster.scheduler))
    );
    // Hosts whose traces have no sink (a knot each): the census's sink branch is
    // empty, the case that once never answered on the cluster.
    let no_sinks = tmp.path().join("no-sinks");
    for (host, trace) in [("a", "lock-contention"), ("d", "blocking-write")] {
        let mut c = causeway();
        c.args(["tables", "--host", host, "-o"]).arg(&no_sinks);
        ok(c.arg(golden(trace)).output().unwrap(), "causeway tables");
    }
    let sinks = "SELECT count(*) AS n FROM sinks WHERE NOT background";
    assert_eq!(
        sql(sinks, &no_sinks, None),
        vec![serde_json::json!({"n": 0})]
    );
    let embedded = fleet(&no_sinks, None);
    assert!(embedded.contains("knot"), "{embedded}");
    assert_eq!(embedded, fleet(&no_sinks, Some(&cluster.scheduler)));
    // The census in one query, a union whose join branch is empty: with Ballista's
    // adaptive planner such a query hung or dropped the other branch's rows,
    // depending on the order its tasks reported in, so it runs a few times.
    let union = "SELECT kind, count(*) AS n FROM (
        SELECT 'knot' AS kind, e.host FROM bottleneck_edges e WHERE e.knot IS NOT NULL
        UNION ALL
        SELECT 'sink', e.host FROM bottleneck_edges e JOIN sinks s
          ON s.trace_id = e.trace_id AND s.host = e.host AND s.vertex = e.to_vertex
        WHERE NOT s.background) GROUP BY kind ORDER BY kind";
    let want = sql(union, &no_sinks, None);
    assert!(!want.is_empty(), "{union}: no knot rows");
    for _ in 0..3 {
        assert_eq!(sql(union, &no_sinks, Some(&cluster.scheduler)), want);
    }
    // A bad address is a usage error, not a hang.
    let o = causeway()
        .args(["sql", "--cluster", "nowhere", "SELECT 1"])
        .arg(&tables)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("HOST:PORT"));
    // Ballista's log lines only with -v: the others print causeway's own lines only.
    let foreign = |log: &str| {
        let text = std::fs::read_to_string(tmp.path().join(log)).unwrap();
        text.lines().filter(|l| !l.starts_with("causeway:")).count()
    };
    assert_eq!(foreign("scheduler.log"), 0);
    assert_eq!(foreign("executor0.log"), 0);
    assert!(foreign("executor1.log") > 0, "-v printed no log line");
}
