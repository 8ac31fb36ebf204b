//! The words of the bottleneck report on small hand-built traces: the scenarios of the
//! analysis's own tests, checked here for the labels and sentences that the analysis
//! no longer writes.

use causeway_bottleneck::{Options, analyze};
use causeway_format::TaskState;
use causeway_format::{Header, Tables};
use causeway_model::Trace;
use causeway_report::{BottleneckView, Format, View, render};
use causeway_testkit::synth::Synth;
use serde_json::Value;

/// Tables naming threads: `(tid, tgid, comm)`.
fn tables(names: &[(u32, u32, &str)]) -> Tables {
    causeway_testkit::synth::named_tables(names)
}

fn view(s: &Synth, tables: &Tables, ncpu: u32, merge: bool) -> BottleneckView {
    let trace = Trace::from_events(tables.clone(), Header::synthetic(ncpu), &s.events());
    let opts = Options {
        merge,
        ..Options::default()
    };
    BottleneckView::new(&analyze(&trace, &opts).expect("analysis runs"))
}

fn json(v: &BottleneckView) -> Value {
    let mut out = Vec::new();
    render(v, Format::Json, &mut out).expect("json renders");
    serde_json::from_slice(&out).expect("valid json")
}

fn text(v: &BottleneckView) -> String {
    let mut out = Vec::new();
    render(v, Format::Text, &mut out).expect("text renders");
    String::from_utf8(out).expect("utf-8")
}

/// A consumer (tid 1) waits for the disk behind an interrupt, a producer (tid 2) for
/// the consumer.
#[test]
fn disk_knot_advice_names_the_disk() {
    let mut t = Tables::default();
    t.strings.push(String::new());
    t.strings.push("virtio0-requests".into());
    let irq = 1;
    let mut s = causeway_testkit::synth::blocking_write(irq, 20);
    s.switch(20_100, 0, 1, TaskState::RUNNABLE, 0);
    let v = view(&s, &t, 2, false);
    assert!(v.found());
    let j = json(&v);
    let advice = j["knots"][0]["advice"].as_str().expect("knot advice");
    assert!(advice.contains("disk 8:0"), "{advice}");
    assert_eq!(j["summary"].as_str(), Some(advice));
    assert_eq!(j["devices"][0]["kind"], "disk");
    assert_eq!(j["devices"][0]["name"], "8:0");
    let cap = j["devices"][0]["capacity"].as_str().expect("capacity");
    assert!(cap.ends_with("(estimated from request latencies)"), "{cap}");
    assert!(text(&v).contains(&format!("What to look at: {advice}\n")));
}

/// Four workers pass one lock around; merged, they are one vertex with a self-loop.
#[test]
fn merged_workers_are_labelled_and_wait_for_each_other() {
    let t = tables(&[
        (100, 100, "worker-0"),
        (101, 100, "worker-1"),
        (102, 100, "worker-2"),
        (103, 100, "worker-3"),
    ]);
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 100);
    s.switch(20, 0, 100, TaskState::INTERRUPTIBLE, 0);
    for k in 1..=200u64 {
        let (w, p) = ((k % 4) as u32, ((k - 1) % 4) as u32);
        let t = 10 * k;
        s.wake_by(t, p, 100 + p, 100 + w)
            .switch(t + 1, w, 0, TaskState::RUNNABLE, 100 + w)
            .switch(t + 20, w, 100 + w, TaskState::INTERRUPTIBLE, 0);
    }
    let j = json(&view(&s, &t, 4, true));
    let id = j["knots"][0]["vertices"][0].as_u64().expect("knot vertex") as usize;
    let label = j["vertices"][id]["label"].as_str().expect("label");
    assert_eq!(label, "worker-* ×4 threads");
    assert_eq!(j["vertices"][id]["kind"]["type"], "similar_threads");
    let advice = j["knots"][0]["advice"].as_str().expect("knot advice");
    assert!(advice.contains("wait for each other"), "{advice}");
    assert_eq!(j["knots"][0]["rank"], 1);
    assert_eq!(j["knots"][0]["shape"], "single");
}

/// A background pair (under one CPU, no device) is set apart and said to be optional;
/// the busy pair's knot says who waits for whom.
#[test]
fn background_knot_is_called_optional() {
    let mut s = Synth::new();
    s.background_pair(92);
    s.switch(0, 2, 0, TaskState::RUNNABLE, 3)
        .switch(0, 3, 0, TaskState::RUNNABLE, 4);
    for k in 0..20 {
        let t = k * 100;
        s.wait_for((3, 2), t + 10, (4, 3), t + 50);
        s.wait_for((4, 3), t + 60, (3, 2), t + 100);
    }
    s.wait_for((4, 3), 2_005, (1, 0), 2_009);
    s.switch(2_100, 2, 3, TaskState::RUNNABLE, 0);
    let j = json(&view(&s, &Tables::default(), 4, false));
    let advice = j["knots"][0]["advice"].as_str().expect("knot advice");
    assert!(advice.contains("waits for"), "{advice}");
    let bg = j["background_knots"][0]["advice"]
        .as_str()
        .expect("background advice");
    assert!(
        bg.contains("background threads; optimizing them is optional"),
        "{bg}"
    );
    assert_eq!(j["background_knots"][0]["rank"], 0);
    // Unnamed threads are labelled by tid.
    assert!(bg.starts_with("tid 1 (1), tid 2 (2)"), "{bg}");
}

/// Figures in seconds follow the nanoseconds: a knot weighs the sum of its edges.
#[test]
fn seconds_and_sums_follow_the_nanoseconds() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2);
    for k in 0..20 {
        let t = k * 100;
        s.wait_for((1, 0), t + 10, (2, 1), t + 50);
        s.wait_for((2, 1), t + 60, (1, 0), t + 100);
    }
    let j = json(&view(&s, &Tables::default(), 2, false));
    let edges = j["edges"].as_array().expect("edges");
    let knot = &j["knots"][0];
    // JSON times are integer nanoseconds, so the knot's weight is the exact sum.
    let sum: u64 = knot["edges"]
        .as_array()
        .expect("knot edges")
        .iter()
        .map(|e| {
            edges[e.as_u64().unwrap() as usize]["weight_ns"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert_eq!(knot["weight_ns"].as_u64(), Some(sum));
    assert_eq!(edges[0]["weight_ns"].as_u64(), Some(20 * 40));
    let duration = j["duration_ns"].as_u64().expect("duration") as f64 / 1e9;
    let share = edges[0]["share"].as_f64().expect("share");
    assert!((share - 20.0 * 40.0 / 1e9 / duration).abs() < 1e-12);
}

/// Nothing to attribute: exit status 1 and the summary says so.
#[test]
fn nothing_found() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(1_000, 0, 1, TaskState::RUNNABLE, 0);
    let v = view(&s, &Tables::default(), 1, true);
    assert!(!v.found());
    assert_eq!(
        v.summary(),
        "No knot or sink found: no thread waits on anything the trace can attribute."
    );
    assert!(text(&v).contains("No knots.\n"));
    let mut dot = Vec::new();
    render(&v, Format::Dot, &mut dot).expect("dot renders");
    assert!(
        String::from_utf8(dot)
            .unwrap()
            .starts_with("digraph waitfor {")
    );
}
