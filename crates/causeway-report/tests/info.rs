//! The `info` report from a trace reader's counts and a model.

use causeway_format::{CgroupRow, CpuSample, Header, Tables, TaskState, Timestamp};
use causeway_format::{SalvageMark, Tgid};
use causeway_format::{TraceStats, VERSION_MAJOR};
use causeway_report::{Format, InfoReport, Selection, TraceFacts, View, render};
use causeway_testkit::synth::Synth;
use std::collections::{BTreeMap, BTreeSet};

fn tables() -> Tables {
    let mut t = causeway_testkit::synth::named_tables(&[(1, 1, "busy"), (2, 2, "sleepy")]);
    // Process 1 in a cgroup with a quota that held it back 60 ns of its last 100 ns
    // runnable (900..1000, switched out runnable to the idle task); process 2 at the
    // root.
    let path = causeway_format::StringId(t.strings.len() as u32);
    t.strings.push("/system.slice/busy.service".into());
    let root = causeway_format::StringId(t.strings.len() as u32);
    t.strings.push("/".into());
    t.cgroups.push(CgroupRow::Member {
        tgid: Tgid(1),
        since: Timestamp(0),
        path,
    });
    t.cgroups.push(CgroupRow::Member {
        tgid: Tgid(2),
        since: Timestamp(0),
        path: root,
    });
    for (ts, periods, throttled, ns) in [(0, 5, 1, 40), (1_000, 6, 2, 100)] {
        t.cgroups.push(CgroupRow::Cpu(CpuSample {
            ts: Timestamp(ts),
            path,
            quota_us: Some(20_000),
            period_us: 100_000,
            periods,
            throttled,
            throttled_ns: ns,
        }));
    }
    t
}

fn report(events: u64, stats: &TraceStats, sel: &Selection) -> InfoReport {
    report_with(events, stats, sel, &Header::synthetic(2), None)
}

fn report_with(
    events: u64,
    stats: &TraceStats,
    sel: &Selection,
    header: &Header,
    recorded: Option<&BTreeSet<Tgid>>,
) -> InfoReport {
    let t = tables();
    let mut s = Synth::new();
    // Thread 1 runs 0..900; thread 2 runs 0..100 and then sleeps until 1000.
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .switch(100, 1, 2, TaskState::INTERRUPTIBLE, 0)
        .switch(900, 0, 1, TaskState::RUNNABLE, 0)
        .wake_by(1_000, 0, 0, 2);
    let model = s.model_with(&t, 2);
    let facts = TraceFacts {
        file: "t.cwt".into(),
        bytes: 123,
        format_version: format!("{VERSION_MAJOR}.1"),
        header,
        time_range: Some((Timestamp(0), Timestamp(1_000))),
        events,
        events_by_kind: BTreeMap::from([("sched_switch", events)]),
        lost_by_cpu: BTreeMap::from([(0, 2)]),
        skipped_unknown_events: 0,
        skipped_unknown_blocks: 0,
        frame_names: Default::default(),
        stats,
        samples_by_thread: BTreeMap::from([(1, 3)]),
        recorded,
        tables: &t,
    };
    InfoReport::new(facts, &model, sel)
}

fn all(top: usize) -> Selection {
    Selection {
        top,
        ..Selection::default()
    }
}

#[test]
fn rankings_and_losses() {
    let stats = TraceStats {
        lost_per_cpu: BTreeMap::from([(0, 1), (1, 5)]),
        ..TraceStats::default()
    };
    let r = report(5, &stats, &all(10));
    assert!(r.found());
    assert_eq!(r.duration_ns, 1_000);
    assert_eq!(r.threads, 2);
    let cpu: Vec<u32> = r.top_cpu.iter().map(|t| t.tid).collect();
    assert_eq!(cpu, vec![1, 2]);
    assert_eq!(r.top_cpu[0].cpu_ns, 900);
    let blocked: Vec<u32> = r.top_blocked.iter().map(|t| t.tid).collect();
    assert_eq!(blocked, vec![2], "only threads that blocked");
    // The larger of the stream's and the trace statistics' count, per CPU.
    assert_eq!(r.lost_events_by_cpu, BTreeMap::from([(0, 2), (1, 5)]));
    assert_eq!(r.lost_events, 7);
    let mut out = Vec::new();
    render(&r, Format::Text, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with("trace:      t.cwt (123 bytes, format 1.1)\n"),
        "{text}"
    );
    assert!(
        text.contains("LOST:       7 events (cpu0: 2, cpu1: 5)\n"),
        "{text}"
    );
    assert!(text.contains("0.000s"), "{text}");
}

#[test]
fn selection_by_name_and_top() {
    let sel = Selection {
        comm: Some("sleepy".into()),
        ..all(1)
    };
    let r = report(5, &TraceStats::default(), &sel);
    assert_eq!(r.threads, 1);
    assert_eq!(r.top_cpu.len(), 1);
    assert_eq!(r.top_cpu[0].comm, "sleepy");
    let r = report(5, &TraceStats::default(), &all(1));
    assert_eq!(r.top_cpu.len(), 1);
    assert_eq!(r.top_cpu[0].tid, 1);
}

#[test]
fn empty_trace_finds_nothing_and_has_no_graph() {
    let r = report(0, &TraceStats::default(), &all(10));
    assert!(!r.found());
    let mut out = Vec::new();
    assert!(render(&r, Format::Dot, &mut out).is_err());
    render(&r, Format::Json, &mut out).unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(j["events"], 0);
    assert!(out.ends_with(b"}\n"));
}

/// In a per-process trace, threads of processes not recorded are ranked apart: their
/// times are built from the switches they share with recorded threads only.
#[test]
fn threads_of_processes_not_recorded_are_ranked_apart() {
    let recorded = BTreeSet::from([Tgid(2)]);
    let r = report_with(
        5,
        &TraceStats::default(),
        &all(10),
        &Header::synthetic(2),
        Some(&recorded),
    );
    let cpu: Vec<u32> = r.top_cpu.iter().map(|t| t.tid).collect();
    assert_eq!(cpu, vec![2], "only the recorded process's thread is ranked");
    assert_eq!(r.others_partial.len(), 1);
    assert_eq!(
        (r.others_partial[0].tid, r.others_partial[0].recorded),
        (1, false)
    );
    let mut out = Vec::new();
    render(&r, Format::Text, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("threads of processes not recorded"), "{text}");
}

/// A recording that sampled waker stacks says so, in text and JSON.
#[test]
fn sampled_waker_stacks_are_stated() {
    let mut h = Header::synthetic(2);
    h.waker_stack_sampling = Some(causeway_format::WakerStackSampling {
        min_wait_ns: 100_000,
        one_in: 16,
    });
    let r = report_with(5, &TraceStats::default(), &all(10), &h, None);
    let mut out = Vec::new();
    render(&r, Format::Text, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("recorded:   waker stacks of waits under 100 µs were sampled 1 in 16"),
        "{text}"
    );
    let mut out = Vec::new();
    render(&r, Format::Json, &mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(
        v["recording_notes"][0]
            .as_str()
            .unwrap()
            .contains("1 in 16")
    );
    assert!(v["notes"].as_array().unwrap().is_empty());
}

/// A salvaged trace says so above its losses, in text and JSON.
#[test]
fn a_salvaged_trace_is_marked() {
    let mut h = Header::synthetic(2);
    h.salvaged = Some(SalvageMark {
        covered_ns: 700_000_000,
        original_ns: Some(3_000_000_000),
        span_ns: 700_000_000,
        stats_lost: true,
        damaged_bytes: 443,
    });
    let r = report_with(5, &TraceStats::default(), &all(10), &h, None);
    let mut out = Vec::new();
    render(&r, Format::Text, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("NOTE:       salvaged: covers 0.70 of 3.00 s, statistics lost"),
        "{text}"
    );
    let mut out = Vec::new();
    render(&r, Format::Json, &mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["salvaged"]["covered_ns"], 700_000_000);
    assert!(v["notes"][0].as_str().unwrap().starts_with("salvaged:"));
}

#[test]
fn cgroups_with_their_owner_and_the_runnable_time_a_quota_held_back() {
    let r = report(4, &TraceStats::default(), &all(5));
    let busy = r
        .cgroups
        .iter()
        .find(|c| c.pids == [1])
        .expect("process 1's cgroup");
    assert_eq!(busy.path, "/system.slice/busy.service");
    assert_eq!(busy.owner.as_deref(), Some("unit busy.service"));
    let q = busy.quota.as_ref().expect("its quota");
    assert_eq!(
        (q.quota_us, q.period_us, q.periods, q.throttled),
        (20_000, 100_000, 1, 1)
    );
    // 60 ns throttled between the samples, all of it in the only runnable stretch.
    assert_eq!(q.held_ns, 60);
    let root = r
        .cgroups
        .iter()
        .find(|c| c.pids == [2])
        .expect("process 2's");
    assert!(root.quota.is_none() && root.owner.is_none());
    let mut out = Vec::new();
    render(&r, Format::Text, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("cgroup:     /system.slice/busy.service [unit busy.service]: processes 1; CPU quota 20.0 ms / 100.0 ms: throttled 1 of 1 periods"),
        "{text}"
    );
}
