//! Managed runtimes recorded as they run by default: the answer is the program's, and
//! the runtime's own threads are its pauses (docs/causeway-bottleneck.md, "Managed
//! runtimes").
//!
//! - `java-commit`: the pipeline-commit server on the JVM. The top finding is the knot
//!   {sync, disk}; no thread of the JVM's own is in it or in "What to look at"; the
//!   JVM's pauses are a brief stop. Before the JVM rule: "No knots", the VM Thread's
//!   timer the top finding. At least 90 % of the application threads' blocking time is
//!   on stacks that reach the application's class: before the JVM walker 0 %, and on a
//!   loaded host 0-85 % while a process judged "not a JVM" (the wrapper script's
//!   shell before its exec, the launcher before it loads libjvm) stayed so for a
//!   second after it became one.
//! - `java-gc`: a heap too small for the data a service keeps. The answer is the JVM's
//!   pauses, with their number, the longest and their total.

mod common;

use common::zoo::{Zoo, analyse, json};
use serde_json::Value;
use std::sync::Mutex;

/// One recording at a time (the workloads use both CPUs).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Names HotSpot gives its own threads (the kernel keeps 15 bytes).
const JVM_THREADS: &[&str] = &[
    "VM Thread",
    "GC Thread",
    "G1 ",
    "CompilerThre",
    "VM Periodic",
    "Monitor Deflati",
    "Service Thread",
    "Signal Dispatch",
    "Common-Cleaner",
    "Reference Handl",
];

fn label(r: &Value, v: &Value) -> String {
    let i = v.as_u64().unwrap() as usize;
    r["vertices"][i]["label"].as_str().unwrap_or("").to_string()
}

fn what_to_look_at(text: &str) -> &str {
    text.lines()
        .find(|l| l.starts_with("What to look at"))
        .unwrap_or_else(|| panic!("no \"What to look at\":\n{text}"))
}

#[test]
fn java_commit_knot_is_the_sync_thread_and_the_disk() {
    let Some(zoo) = Zoo::on_disk() else { return };
    let out = zoo
        .record("java-commit")
        .seconds("4")
        .args(["--dir", zoo.dir().to_str().unwrap()])
        .one_at_a_time(&ONE_AT_A_TIME)
        .run();
    let r = json(&analyse(&out, &["bottleneck", "--json"]));
    let knot = &r["knots"][0];
    let mut members: Vec<String> = knot["vertices"]
        .as_array()
        .unwrap_or_else(|| panic!("no knot: {r:#}"))
        .iter()
        .map(|v| label(&r, v))
        .collect();
    members.sort();
    assert_eq!(members.len(), 2, "top knot {members:?}");
    assert!(members.iter().any(|m| m.starts_with("sync")), "{members:?}");
    assert!(members.iter().any(|m| m.starts_with("disk")), "{members:?}");
    let text = String::from_utf8_lossy(&analyse(&out, &["bottleneck"]).stdout).into_owned();
    let top = what_to_look_at(&text);
    assert!(top.contains("fdatasync"), "{top}");
    for name in JVM_THREADS {
        assert!(!top.contains(name), "a JVM thread in the answer: {top}");
    }
    // The JVM's own threads are one pause vertex per JVM, never a thread vertex.
    let vertices = r["vertices"].as_array().unwrap();
    for v in vertices {
        let l = v["label"].as_str().unwrap();
        assert!(
            !JVM_THREADS.iter().any(|n| l.starts_with(n)),
            "a JVM thread as a vertex: {l}"
        );
    }
    let pauses: Vec<&Value> = vertices
        .iter()
        .filter(|v| v["kind"]["type"] == "runtime_pauses")
        .collect();
    assert!(!pauses.is_empty(), "no JVM pause vertex");
    let stops: Vec<String> = r["pauses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| label(&r, &p["vertex"]))
        .collect();
    assert!(
        stops.iter().any(|s| s.starts_with("JVM safepoints/GC")),
        "the JVM's pauses are not a brief stop: {stops:?}"
    );
    let folded = analyse(&out, &["flamegraph", "--kind", "off-cpu", "--folded"]);
    let share = application_share(&String::from_utf8_lossy(&folded.stdout));
    assert!(
        share >= 0.9,
        "{:.1} % of the application threads' blocking time reaches PipelineCommit",
        share * 100.0
    );
}

/// The share of the application threads' (acceptor, network, sync, reply, client)
/// blocking time, from folded off-CPU stacks, on stacks with a `PipelineCommit` frame.
fn application_share(folded: &str) -> f64 {
    const APP_THREADS: &[&str] = &["acceptor", "net", "sync", "reply", "client"];
    let (mut all, mut app) = (0u64, 0u64);
    for line in folded.lines() {
        let Some((stack, weight)) = line.rsplit_once(' ') else {
            continue;
        };
        let thread = stack.split(';').next().unwrap_or("");
        if !APP_THREADS.iter().any(|t| thread.starts_with(t)) {
            continue;
        }
        let w: u64 = weight.parse().unwrap_or(0);
        all += w;
        if stack.contains("PipelineCommit") {
            app += w;
        }
    }
    assert!(all > 0, "no application thread blocked:\n{folded}");
    app as f64 / all as f64
}

#[test]
fn java_gc_answer_is_its_pauses() {
    let Some(zoo) = Zoo::start() else { return };
    let out = zoo
        .record("java-gc")
        .seconds("3")
        .one_at_a_time(&ONE_AT_A_TIME)
        .run();
    let r = json(&analyse(&out, &["bottleneck", "--json"]));
    assert!(
        r["knots"].as_array().unwrap().is_empty(),
        "a knot: {:#}",
        r["knots"]
    );
    let sink = &r["sinks"][0];
    let v = &r["vertices"][sink["vertex"].as_u64().unwrap() as usize];
    let kind = &v["kind"];
    assert_eq!(kind["type"], "runtime_pauses", "top sink {v:#}");
    let (pauses, longest, total) = (
        kind["pauses"].as_u64().unwrap(),
        kind["longest_ns"].as_u64().unwrap(),
        kind["total_ns"].as_u64().unwrap(),
    );
    let duration = r["duration_ns"].as_u64().unwrap();
    // A 192 MiB heap holding 120 MiB: tens of collections, each of milliseconds or
    // more, together a large part of the run.
    assert!(pauses >= 10, "{pauses} pauses");
    assert!(longest >= 5_000_000, "longest pause {longest} ns");
    assert!(longest <= total, "{longest} > {total}");
    assert!(
        total * 5 >= duration,
        "pauses {total} ns of {duration} ns recorded"
    );
    let text = String::from_utf8_lossy(&analyse(&out, &["bottleneck"]).stdout).into_owned();
    let top = what_to_look_at(&text);
    assert!(top.contains("JVM safepoints/GC"), "{top}");
    assert!(top.contains("pauses") && top.contains("longest"), "{top}");
    for name in JVM_THREADS {
        assert!(!top.contains(name), "a JVM thread in the answer: {top}");
    }
}
