//! `causeway bottleneck` on a recording of pre-forked processes that retitle
//! themselves (`tests/progs/titled-pool.c`, real eBPF): vertices are labelled by the
//! titles the program set (`tp: worker * ×6 processes`, `tp: cruncher (PID)`), not by
//! a plain command line; and the CPU-bound process every worker waits for is the
//! answer, with the function its CPU goes to named from the recorder's on-CPU samples,
//! in the JSON and in the text report.
//!
//! Needs root; skipped without it unless `CAUSEWAY_REQUIRE_ROOT=1` (then it fails).

mod common;

use common::build_prog;
use common::zoo::{Zoo, analyse, analyse_json};
use serde_json::Value;

fn comms(v: &Value) -> Vec<&str> {
    v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["comm"].as_str())
        .collect()
}

#[test]
fn retitled_processes_are_labelled_by_title_and_the_cpu_bound_sink_names_its_function() {
    let Some(zoo) = Zoo::start() else { return };
    let bin = build_prog(zoo.dir(), "titled-pool");
    let pad = "x".repeat(64);
    let trace = zoo
        .record_program(&bin)
        .out("tp.cwt")
        .args(["6", "2", &pad])
        .run();
    let r = analyse_json(&trace, &["bottleneck", "--json"]);
    let vs = r["vertices"].as_array().unwrap();
    let labels: Vec<&str> = vs.iter().map(|v| v["label"].as_str().unwrap()).collect();

    // Workers: labelled by their titles, merged under the pattern of their titles.
    let workers: Vec<&Value> = vs
        .iter()
        .filter(|v| comms(v).contains(&"tp-worker"))
        .collect();
    assert!(!workers.is_empty(), "no worker vertex: {labels:?}");
    for w in &workers {
        assert!(
            w["label"].as_str().unwrap().starts_with("tp: worker "),
            "{labels:?}"
        );
    }
    let merged = workers
        .iter()
        .find(|w| w["kind"]["type"] == "similar_processes")
        .unwrap_or_else(|| panic!("workers not merged: {labels:?}"));
    let n = merged["threads"].as_array().unwrap().len();
    assert_eq!(
        merged["label"],
        format!("tp: worker * ×{n} processes"),
        "{labels:?}"
    );

    // The cruncher: its title and pid; the parent, whose title is its plain command
    // line, keeps its thread name.
    let cruncher = vs
        .iter()
        .find(|v| comms(v) == ["tp-cruncher"])
        .unwrap_or_else(|| panic!("no cruncher vertex: {labels:?}"));
    let pid = cruncher["threads"][0]["tid"].as_u64().unwrap();
    let cl = cruncher["label"].as_str().unwrap();
    assert_eq!(cl, format!("tp: cruncher ({pid})"));
    if let Some(parent) = vs.iter().find(|v| comms(v) == ["titled-pool"]) {
        assert!(
            parent["label"]
                .as_str()
                .unwrap()
                .starts_with("titled-pool ("),
            "{parent}"
        );
    }

    // The answer is the cruncher: the top sink, or in the top knot when it blocked on
    // an empty queue often enough to close a loop with the workers.
    let id = cruncher["id"].as_u64().unwrap();
    let top_knot = r["knots"]
        .as_array()
        .and_then(|k| k.first())
        .is_some_and(|k| k["vertices"].as_array().unwrap().contains(&id.into()));
    let top_sink =
        r["knots"].as_array().unwrap().is_empty() && r["sinks"][0]["vertex"].as_u64() == Some(id);
    assert!(top_knot || top_sink, "summary: {}", r["summary"]);
    assert!(
        r["summary"].as_str().unwrap().contains(cl),
        "{}",
        r["summary"]
    );

    // Its on-CPU samples name crunch() as where the CPU goes.
    let prof = &cruncher["on_cpu"];
    let hot = &prof["stacks"][0];
    assert!(
        hot["user"]
            .as_array()
            .is_some_and(|u| u.iter().any(|f| f == "crunch")),
        "hottest stack of the cruncher: {prof}"
    );
    assert!(hot["share"].as_f64().unwrap() > 0.5, "{prof}");

    // The text report shows the same: the cruncher's "on CPU" lines name crunch.
    let text = String::from_utf8(analyse(&trace, &["bottleneck"]).stdout).unwrap();
    let head = format!("on CPU, {cl}:");
    let at = text
        .find(&head)
        .unwrap_or_else(|| panic!("no `{head}` in the report:\n{text}"));
    let next = text[at..].lines().nth(1).unwrap_or("");
    assert!(next.contains("crunch"), "{next}\n{text}");
    assert!(text.contains("tp: worker * ×"), "{text}");
}
