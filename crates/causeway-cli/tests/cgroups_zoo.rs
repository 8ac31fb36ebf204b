//! Services in cgroups, recorded as they run (real eBPF, the default event groups):
//!
//! - `cpu-quota`: a server whose cgroup has a CPU quota of 20 ms per 100 ms on idle
//!   CPUs. The top finding of `bottleneck` is the cgroup's CPU quota, with the server's
//!   worker waiting on it; `diagnose`'s verdict says the worker was throttled by that
//!   quota; `info` lists the cgroup with its quota. Before the cgroup samples the
//!   answer was "No knots" and a 0.05 s wait on other processes, and the verdict "CPU:
//!   busy the whole time".
//! - `cpu-quota --fixed` (the same cgroup, no quota): no quota anywhere in the answer.
//! - `cpu-pinned`: a server restricted to one CPU (`sched_setaffinity`) while the other
//!   idles. The top finding is the server's CPU affinity, its workers waiting on it.
//!   Before the affinity rows the answer was the knot {clients, workers} with "more
//!   cores or a higher priority may help"; with `--fixed` no affinity is named.
//!
//! - `memcg-reclaim`: a file working set over a memory limit: the readers and the disk,
//!   the limit leading the advice; with `--mmap 1` the reads are page faults and the
//!   verdict says "page fault under the memory limit of …".
//!
//! Needs root and the built zoo; skipped without root unless `CAUSEWAY_REQUIRE_ROOT=1`
//! (then it fails, as in CI).

mod common;

use common::zoo::{Zoo, analyse_json};
use serde_json::Value;
use std::sync::Mutex;

/// One recording at a time (the workloads use both CPUs).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn label(r: &Value, v: &Value) -> String {
    let i = v.as_u64().unwrap() as usize;
    r["vertices"][i]["label"].as_str().unwrap_or("").to_string()
}

#[test]
fn a_spent_cpu_quota_is_the_answer() {
    let Some(zoo) = Zoo::start() else { return };
    let out = zoo
        .record("cpu-quota")
        .out("cq.cwt")
        .seconds("3")
        .one_at_a_time(&ONE_AT_A_TIME)
        .run();
    let r = analyse_json(&out, &["bottleneck", "--json"]);
    let summary = r["summary"].as_str().unwrap_or("");
    assert!(
        r["knots"].as_array().is_none_or(|k| k.is_empty()),
        "a knot above the quota: {summary}"
    );
    let sink = &r["sinks"][0];
    let v = &r["vertices"][sink["vertex"].as_u64().unwrap() as usize];
    assert_eq!(v["kind"]["type"], "cpu_quota", "top finding: {summary}");
    assert!(
        v["kind"]["cgroup"]
            .as_str()
            .is_some_and(|c| c.starts_with("/cw-cpu-quota-")),
        "{v}"
    );
    assert_eq!(v["kind"]["quota_us"], 20_000);
    assert_eq!(v["kind"]["period_us"], 100_000);
    // Throttled in (nearly) every period it ran, and held back most of the time.
    let (periods, throttled) = (
        v["kind"]["periods"].as_u64().unwrap(),
        v["kind"]["throttled"].as_u64().unwrap(),
    );
    assert!(periods >= 10 && throttled * 10 >= periods * 8, "{v}");
    let held = v["kind"]["held_ns"].as_u64().unwrap();
    assert!(held > 800_000_000, "held back {held} ns of ~2.4 s runnable");
    let chain: Vec<String> = sink["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| label(&r, x))
        .collect();
    assert!(
        chain
            .iter()
            .rev()
            .nth(1)
            .is_some_and(|w| w.starts_with("worker (")),
        "the worker is not the quota's waiter: {chain:?}"
    );
    assert!(summary.contains("raise the quota"), "{summary}");

    // The verdict of a stalled client ends at the worker, throttled by the quota.
    let d = analyse_json(
        &out,
        &["diagnose", "--auto", "--thread", "client-0", "--json"],
    );
    let last = d["chain"]
        .as_array()
        .and_then(|c| c.last())
        .unwrap_or_else(|| panic!("no verdict: {d}"));
    assert_eq!(last["vertex"]["thread"], "worker", "{last}");
    let t = &last["vertex"]["throttled"];
    assert!(
        t["cgroup"]
            .as_str()
            .is_some_and(|c| c.starts_with("/cw-cpu-quota-")),
        "the verdict's last hop is not throttled: {last}"
    );
    assert!(
        t["held_ns"].as_u64().unwrap() * 2 > last["vertex"]["duration_ns"].as_u64().unwrap(),
        "{last}"
    );

    // Lifting the quota predicts a large gain: the held-back runnable time is the wait
    // (before the quota was a wait: +0 %). Measured 4.8-5.0x with `--fixed`; the
    // replay gave 4.66x on the host where this was written, but 2.17-3.21x (gain
    // 1.17-2.21) on an Intel host in 6 recordings, with the workload of either
    // version: how far the prediction falls short of the real fix is issue 48's
    // subject, so this asserts only that lifting the quota predicts over 1.75x.
    let w = analyse_json(&out, &["whatif", "--waits-on", "CPU quota", "--json"]);
    let gain = w["gain"].as_f64().unwrap_or(0.0);
    assert!(gain > 0.75, "predicted {gain:.2} without the quota: {w}");
    assert!(w["waits_changed"].as_u64() > Some(10), "{w}");

    // `info` names the cgroup of each recorded process and the quota.
    let info = analyse_json(&out, &["info", "--json"]);
    let quota = info["cgroups"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["quota"].is_object()))
        .unwrap_or_else(|| panic!("no cgroup with a quota in info: {}", info["cgroups"]));
    assert_eq!(quota["quota"]["quota_us"], 20_000);
    let worker = &last["vertex"]["pid"];
    assert!(
        quota["pids"].as_array().is_some_and(|p| p.contains(worker)),
        "the worker's process {worker} is not listed in its cgroup: {quota}"
    );
}

#[test]
fn an_affinity_that_keeps_workers_off_idle_cpus_is_the_answer() {
    let Some(zoo) = Zoo::start() else { return };
    let out = zoo
        .record("cpu-pinned")
        .out("cp.cwt")
        .seconds("3")
        .one_at_a_time(&ONE_AT_A_TIME)
        .run();
    let r = analyse_json(&out, &["bottleneck", "--json"]);
    let summary = r["summary"].as_str().unwrap_or("");
    let sink = &r["sinks"][0];
    let v = &r["vertices"][sink["vertex"].as_u64().unwrap_or(u64::MAX) as usize];
    assert_eq!(v["kind"]["type"], "cpu_affinity", "top finding: {summary}");
    assert_eq!(v["kind"]["cpus"], "0", "{v}");
    assert!(
        summary.starts_with("worker-* ×2 threads waits for the CPU affinity of cp-server")
            && summary.contains("let it run on more CPUs"),
        "{summary}"
    );
    assert!(v["kind"]["held_ns"].as_u64() > Some(100_000_000), "{v}");
    // Lifting it predicts a gain (2x measured with --fixed on 2 CPUs).
    let w = analyse_json(&out, &["whatif", "--waits-on", "CPU affinity", "--json"]);
    let gain = w["gain"].as_f64().unwrap_or(0.0);
    assert!(gain > 0.2, "predicted {gain:.2} without the affinity: {w}");
    let info = analyse_json(&out, &["info", "--json"]);
    assert_eq!(info["affinity"][0]["cpus"], "0", "{}", info["affinity"]);

    let fixed = zoo
        .record("cpu-pinned")
        .out("cpf.cwt")
        .seconds("2")
        .args(["--fixed"])
        .one_at_a_time(&ONE_AT_A_TIME)
        .run();
    let r = analyse_json(&fixed, &["bottleneck", "--json"]);
    assert!(!r.to_string().contains("cpu_affinity"), "{}", r["summary"]);
}

#[test]
fn without_the_quota_no_quota_is_named() {
    let Some(zoo) = Zoo::start() else { return };
    let out = zoo
        .record("cpu-quota")
        .out("cqf.cwt")
        .seconds("2")
        .args(["--fixed"])
        .one_at_a_time(&ONE_AT_A_TIME)
        .run();
    let r = analyse_json(&out, &["bottleneck", "--json"]);
    let text = r.to_string();
    assert!(!text.contains("cpu_quota"), "{}", r["summary"]);
    let info = analyse_json(&out, &["info", "--json"]);
    assert!(
        info["cgroups"]
            .as_array()
            .is_some_and(|c| c.iter().all(|c| c["quota"].is_null())),
        "{}",
        info["cgroups"]
    );
}

/// A cgroup of the test's own (v1 cpu hierarchy where the host has one, else v2),
/// removed when dropped.
struct TestCgroup(std::path::PathBuf);

impl TestCgroup {
    fn new(name: &str) -> TestCgroup {
        let v1 = std::path::Path::new("/sys/fs/cgroup/cpu/cgroup.procs").exists();
        let root = if v1 {
            "/sys/fs/cgroup/cpu"
        } else if std::path::Path::new("/sys/fs/cgroup/unified/cgroup.procs").exists() {
            "/sys/fs/cgroup/unified"
        } else {
            "/sys/fs/cgroup"
        };
        let dir = std::path::Path::new(root).join(format!("{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TestCgroup(dir)
    }

    /// A shell loop started in the cgroup (it moves itself in, then sleeps in a loop).
    fn spawn(&self) -> std::process::Child {
        let procs = self.0.join("cgroup.procs");
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "echo $$ > {}; while :; do sleep 0.02; done",
                procs.display()
            ))
            .spawn()
            .unwrap()
    }
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// `record --cgroup` records the processes in the cgroup at the start and one that
/// enters it while recording; a cgroup that does not exist is refused by name.
#[test]
fn record_cgroup_follows_the_processes_that_enter_it() {
    let Some(zoo) = Zoo::start() else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cg = TestCgroup::new("cw-record-cgroup");
    let mut first = cg.spawn();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = zoo.dir().join("cg.cwt");
    let rec = common::causeway()
        .args(["record", "--duration", "3", "--cgroup"])
        .arg(&cg.0)
        .arg("-o")
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let mut second = cg.spawn();
    let done = rec.wait_with_output().unwrap();
    let (a, b) = (first.id(), second.id());
    for c in [&mut first, &mut second] {
        let _ = c.kill();
        let _ = c.wait();
    }
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let info = analyse_json(&out, &["info", "--json"]);
    let pids: Vec<u64> = info["cgroups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["path"]
                .as_str()
                .is_some_and(|p| p.contains("cw-record-cgroup"))
        })
        .flat_map(|c| {
            c["pids"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_u64)
        })
        .collect();
    assert!(
        pids.contains(&u64::from(a)) && pids.contains(&u64::from(b)),
        "recorded {pids:?}, in the cgroup {a} and (entered later) {b}: {}",
        info["cgroups"]
    );
    assert!(
        info["counters"]["cgroup_processes_entered"].as_u64() >= Some(1),
        "{}",
        info["counters"]
    );

    // A refused cgroup: exit 1 and its message on standard error.
    let refused = |path: &str| {
        let bad = common::causeway()
            .args(["record", "--duration", "1", "--cgroup", path])
            .arg("-o")
            .arg(zoo.dir().join("bad.cwt"))
            .output()
            .unwrap();
        assert_eq!(bad.status.code(), Some(1));
        String::from_utf8_lossy(&bad.stderr).into_owned()
    };
    let err = refused("/no-such-cgroup-here");
    assert!(err.contains("no cgroup `/no-such-cgroup-here`"), "{err}");
    // A controller the kernel has but that is not mounted (this host mounts some v1
    // hierarchies, not all) is named as such.
    let controllers = std::fs::read_to_string("/proc/cgroups").unwrap_or_default();
    let unmounted = controllers
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .find(|c| !std::path::Path::new("/sys/fs/cgroup").join(c).exists());
    if let Some(ctl) = unmounted {
        let err = refused(&format!("/sys/fs/cgroup/{ctl}/app"));
        assert!(
            err.contains(&format!("the {ctl} controller is not mounted")),
            "{err}"
        );
    }
}

/// `memcg-reclaim`: a file working set three times its cgroup's memory limit. The
/// finding stays the readers and the disk at the read (a knot, or the disk as a
/// saturated sink the readers wait for), and its advice opens with the limit as the
/// cause (most of what the readers read were evicted pages); `info` lists the limit.
/// Before the memory samples the limit was named nowhere; before the refault share,
/// it came after "batch or cut the I/O".
#[test]
fn a_memory_limit_leads_the_knot_it_causes() {
    let Some(zoo) = Zoo::on_disk() else { return };
    let out = zoo
        .record("memcg-reclaim")
        .out("mr.cwt")
        .seconds("3")
        .args(["--dir", zoo.dir().to_str().unwrap()])
        .one_at_a_time(&ONE_AT_A_TIME)
        .run();
    let r = analyse_json(&out, &["bottleneck", "--json"]);
    let summary = r["summary"].as_str().unwrap_or("");
    // The knot {readers, disk} or, when the readers keep the disk busy almost all the
    // time, the disk as a sink the readers wait for: the same pair at the read.
    let top: Vec<String> = match r["knots"][0]["vertices"].as_array() {
        Some(k) => k.iter().map(|v| label(&r, v)).collect(),
        None => r["sinks"][0]["chain"]
            .as_array()
            .unwrap_or_else(|| panic!("no finding: {summary}"))
            .iter()
            .rev()
            .take(2)
            .map(|v| label(&r, v))
            .collect(),
    };
    assert!(
        top.iter().any(|l| l.starts_with("disk")) && top.iter().any(|l| l.starts_with("reader")),
        "{top:?}: {summary}"
    );
    assert!(summary.contains("read_block"), "{summary}");
    // Most of what the readers read from the disk were pages the limit evicted: the
    // limit leads "What to look at", with its share and the reclaim.
    assert!(
        summary.starts_with("The memory limit of cgroup /cw-memcg-reclaim-")
            && summary.contains("(64 MiB")
            && summary.contains("is the cause")
            && summary.contains("raise the limit"),
        "{summary}"
    );
    let m = &r["memory_limits"][0];
    assert!(
        m["refault_share"].as_f64() >= Some(0.5) && m["read_bytes"].as_u64() > Some(1 << 20),
        "{m}"
    );
    assert!(
        m["cgroup"]
            .as_str()
            .is_some_and(|c| c.contains("cw-memcg-reclaim-")),
        "{m}"
    );
    assert!(
        m["hits"].as_u64() > Some(0) && m["refaults"].as_u64() > Some(1000),
        "{m}"
    );
    // The kernel's stall counts (PSI) beside it: the readers stall on I/O most of the
    // time; the memory controller here is v1, so the PSI is the system's.
    assert!(m["memory_pressure"]["some"].as_f64().is_some(), "{m}");
    // Reclaim timed in the kernel (the vmscan tracepoints), not only sampled.
    assert!(
        m["reclaims"].as_u64() > Some(0) && m["reclaim_ns"].as_u64() > Some(0),
        "{m}"
    );
    assert!(summary.contains("page reclaims ("), "{summary}");
    let info = analyse_json(&out, &["info", "--json"]);
    assert!(
        info["cgroups"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["memory"]["limit_bytes"] == 64 << 20)),
        "{}",
        info["cgroups"]
    );
    assert!(
        info["pressure"].as_array().is_some_and(|p| p
            .iter()
            .any(|p| p["resource"] == "io" && p["some"].as_f64() > Some(0.2))),
        "{}",
        info["pressure"]
    );
}

/// `memcg-reclaim --mmap 1`: the readers copy from a mapping of the file, so their
/// reads are page faults under the cgroup's 64 MiB limit. The verdict for a reader's
/// wait says both: the page fault (not the disk a fault's read waits on, its innermost
/// kernel frame) and the limit its cgroup kept reaching. Before the memory wait kinds
/// it said "disk: the end of what the trace shows", the limit named nowhere in it.
#[test]
fn a_page_fault_under_a_memory_limit_is_named_in_the_verdict() {
    let Some(zoo) = Zoo::on_disk() else { return };
    let out = zoo
        .record("memcg-reclaim")
        .out("mf.cwt")
        .seconds("2")
        .args(["--dir", zoo.dir().to_str().unwrap(), "--mmap", "1"])
        .one_at_a_time(&ONE_AT_A_TIME)
        .run();
    let args = ["--auto", "--thread", "reader-0", "--stall", "wait"];
    // Every fault waits about as long as the others: the longest may be judged no
    // stall (exit 1), and its verdict line still says what it waited on.
    let d = common::zoo::json(&common::zoo::answer(
        &out,
        &[&["diagnose", "--json"][..], &args].concat(),
    ));
    let hop = &d["chain"][0];
    assert!(
        ["page fault", "reclaim"].contains(&hop["kind"].as_str().unwrap_or("")),
        "{:#}",
        d["chain"]
    );
    let m = &hop["vertex"]["memory_limit"];
    assert_eq!(m["limit"], 64 << 20, "{hop:#}");
    assert!(m["hits"].as_u64() > Some(0), "{m}");
    let text = common::zoo::answer(&out, &[&["diagnose"][..], &args].concat()).stdout;
    let text = String::from_utf8(text).unwrap();
    let verdict = text.lines().nth(1).unwrap_or("");
    assert!(
        verdict.contains("under the memory limit of /cw-memcg-reclaim-")
            && verdict.contains("(64 MiB, reached"),
        "{text}"
    );
}
