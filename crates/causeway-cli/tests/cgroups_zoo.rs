//! Services in cgroups, recorded as they run (real eBPF, the default event groups):
//!
//! - `cpu-quota`: a server whose cgroup has a CPU quota of 20 ms per 100 ms on idle
//!   CPUs. The top finding of `bottleneck` is the cgroup's CPU quota, with the server's
//!   worker waiting on it; `diagnose`'s verdict says the worker was throttled by that
//!   quota; `info` lists the cgroup with its quota. Before the cgroup samples the
//!   answer was "No knots" and a 0.05 s wait on other processes, and the verdict "CPU:
//!   busy the whole time".
//! - `cpu-quota --fixed` (the same cgroup, no quota): no quota anywhere in the answer.
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

    // `info` names the cgroup of each recorded process and the quota.
    let info = analyse_json(&out, &["info", "--json"]);
    let quota = info["cgroups"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["quota"].is_object()))
        .unwrap_or_else(|| panic!("no cgroup with a quota in info: {}", info["cgroups"]));
    assert_eq!(quota["quota"]["quota_us"], 20_000);
    assert_eq!(quota["pids"].as_array().map(Vec::len), Some(1));
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
