//! `causeway export` on real recordings of every zoo workload (issue 15): the Perfetto
//! file must decode with types generated from Perfetto's published .proto files (the
//! `perfetto_protos` crate, not the export's own message declarations), and its
//! tracks, thread states, wake-up flows and slice counts must match the model of the
//! same trace. The Chrome JSON export must agree on the CPU slices. The diagnosis's
//! culprit chain is a track of its own with one slice per vertex `causeway diagnose
//! --auto` names, and arrows between them.
//!
//! Needs root and the built zoo; skipped without root unless `CAUSEWAY_REQUIRE_ROOT=1`
//! (then it fails, as in CI).

mod common;

use causeway_format::{EventKind, TraceReader, Waker};
use causeway_model::{Model, SegmentId, SegmentState};
use common::zoo::{Zoo, analyse};
use common::{causeway, model};
use perfetto_protos::trace::Trace as PbTrace;
use perfetto_protos::track_event::track_event::Type;
use protobuf::Message;
use std::collections::HashMap;
use std::path::Path;

const ZOO: &[&str] = &[
    "blocking-write",
    "lock-contention",
    "load-imbalance",
    "circular-timeout",
    "spin-flag",
    "long-cpu",
    "two-peaks",
    "blocking-net",
];

/// What the decoded file holds, per track uuid.
#[derive(Default)]
struct Decoded {
    /// Thread descriptors in file order: (uuid, pid, tid, name).
    threads: Vec<(u64, i32, i32, String)>,
    /// Process descriptors: pid -> name.
    processes: HashMap<i32, String>,
    /// Track names and parents.
    tracks: HashMap<u64, (String, u64)>,
    /// Names of the slices begun on each track, in time order.
    slices: HashMap<u64, Vec<String>>,
    flows_out: usize,
    flows_in: usize,
    /// Flows of the diagnosis's chain (category `diagnosis`), apart from wake-ups.
    chain_flows_out: usize,
    chain_flows_in: usize,
}

impl Decoded {
    /// The uuid of the child track `name` of `parent`.
    fn child(&self, parent: u64, name: &str) -> u64 {
        *self
            .tracks
            .iter()
            .find(|(_, (n, p))| *p == parent && n == name)
            .unwrap_or_else(|| panic!("no {name} track under {parent}"))
            .0
    }

    fn slices(&self, track: u64) -> &[String] {
        self.slices.get(&track).map_or(&[], Vec::as_slice)
    }
}

/// Decode with the published schema's types; checks that slices nest on every track.
fn decode(bytes: &[u8]) -> Decoded {
    let trace = PbTrace::parse_from_bytes(bytes).expect("decodes as perfetto.protos.Trace");
    let mut d = Decoded::default();
    let mut open: HashMap<u64, Vec<u64>> = HashMap::new();
    for p in &trace.packet {
        if p.has_track_descriptor() {
            let t = p.track_descriptor();
            if t.thread.is_some() {
                let th = &t.thread;
                d.threads
                    .push((t.uuid(), th.pid(), th.tid(), th.thread_name().to_string()));
            }
            if t.process.is_some() {
                d.processes
                    .insert(t.process.pid(), t.process.process_name().to_string());
            }
            d.tracks
                .insert(t.uuid(), (t.name().to_string(), t.parent_uuid()));
        }
        if p.has_track_event() {
            let e = p.track_event();
            let stack = open.entry(e.track_uuid()).or_default();
            match e.type_() {
                Type::TYPE_SLICE_BEGIN => {
                    stack.push(p.timestamp());
                    d.slices
                        .entry(e.track_uuid())
                        .or_default()
                        .push(e.name().to_string());
                }
                Type::TYPE_SLICE_END => {
                    let begin = stack.pop().expect("slice end without a begin");
                    assert!(p.timestamp() >= begin, "slice ends before it begins");
                }
                _ => {}
            }
            if e.categories.iter().any(|c| c == "diagnosis") {
                d.chain_flows_out += e.flow_ids.len();
                d.chain_flows_in += e.terminating_flow_ids.len();
            } else {
                d.flows_out += e.flow_ids.len();
                d.flows_in += e.terminating_flow_ids.len();
            }
        }
    }
    assert!(open.values().all(Vec::is_empty), "unclosed slices");
    d
}

/// Wake-ups the export must draw as flows: waits a thread of the model ended.
fn expected_flows(m: &Model) -> usize {
    let mut n = 0;
    for (ti, t) in m.threads().enumerate() {
        for (si, s) in t.segments.iter().enumerate() {
            let by_thread = s
                .wake()
                .is_some_and(|w| matches!(w.waker, Waker::Thread { .. }));
            let id = SegmentId {
                thread: ti as u32,
                index: si as u32,
            };
            if by_thread && m.waker_segment(id).is_some() {
                n += 1;
            }
        }
    }
    n
}

/// System call entries of threads the model knows.
fn syscall_entries(path: &Path, m: &Model) -> usize {
    let mut rd = TraceReader::open(path).unwrap();
    rd.events()
        .map(Result::unwrap)
        .filter(|e| match e.kind {
            EventKind::SyscallEnter { tid, .. } => m.thread_index_at(tid, e.ts).is_some(),
            _ => false,
        })
        .count()
}

fn check_against_model(name: &str, trace: &Path, d: &Decoded) {
    let (m, _, _) = model(trace);
    assert_eq!(
        d.threads.len(),
        m.threads().count(),
        "{name}: thread tracks"
    );
    let mut running = 0;
    for (t, (uuid, pid, tid, tname)) in m.threads().zip(&d.threads) {
        assert_eq!(t.tid.0 as i32, *tid, "{name}: threads in model order");
        assert_eq!(t.tgid.map_or(t.tid.0, |g| g.0) as i32, *pid);
        assert_eq!(&t.comm, tname);
        assert!(
            d.processes.contains_key(pid),
            "{name}: process {pid} described"
        );
        let states = d.slices(d.child(*uuid, "state"));
        assert_eq!(
            states.len(),
            t.segments.len(),
            "{name}: {tname} state slices"
        );
        // Compared as counts per state, not slice by slice: segments of zero length
        // share a start time with their neighbour, and the order of slices that begin
        // at the same nanosecond is the exporter's to choose.
        let class = |shown: &str| match shown.split(' ').next().unwrap_or("") {
            "stopped" => "blocked".to_string(),
            c => c.to_string(),
        };
        let mut want = std::collections::BTreeMap::<String, usize>::new();
        for s in &t.segments {
            let c = match s.state {
                SegmentState::Running { .. } => "running",
                SegmentState::Runnable { .. } => "runnable",
                SegmentState::Blocked { .. } => "blocked",
                SegmentState::Unknown { .. } => "unknown",
            };
            *want.entry(c.to_string()).or_default() += 1;
            running += usize::from(s.state.is_running());
        }
        let mut got = std::collections::BTreeMap::<String, usize>::new();
        for shown in states {
            *got.entry(class(shown)).or_default() += 1;
        }
        assert_eq!(got, want, "{name}: {tname}: state slices by state");
    }
    let cpu_slices: usize = d
        .tracks
        .iter()
        .filter(|(_, (n, _))| n.starts_with("CPU "))
        .map(|(u, _)| d.slices(*u).len())
        .sum();
    assert_eq!(cpu_slices, running, "{name}: CPU slices = running segments");
    let flows = expected_flows(&m);
    assert_eq!(
        (d.flows_out, d.flows_in),
        (flows, flows),
        "{name}: wake-up flows"
    );
    assert!(flows > 0, "{name}: a zoo workload has wake-ups");
    let syscalls: usize = d
        .threads
        .iter()
        .map(|(u, ..)| d.slices(d.child(*u, "syscalls")).len())
        .sum();
    assert_eq!(
        syscalls,
        syscall_entries(trace, &m),
        "{name}: syscall slices"
    );
}

/// The diagnosis track holds one slice per vertex the diagnosis names (the problem, the
/// findings, the steps of their slices), on rows under one track, with an arrow from
/// each cause to what it delayed; none when `diagnose` finds no stall.
fn check_diagnosis(name: &str, trace: &Path, d: &Decoded) {
    let o = causeway()
        .args(["diagnose", "--auto", "--json"])
        .arg(trace)
        .output()
        .unwrap();
    let parent = d
        .tracks
        .iter()
        .find(|(_, (n, _))| n == "diagnosis: culprit chain")
        .map(|(u, _)| *u);
    if o.status.code() != Some(0) {
        assert!(
            parent.is_none(),
            "{name}: a chain track without a diagnosis"
        );
        return;
    }
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut ids = std::collections::BTreeSet::new();
    ids.insert(v["problem"]["id"].as_u64().unwrap());
    for f in v["findings"].as_array().unwrap() {
        ids.insert(f["vertex"]["id"].as_u64().unwrap());
        for st in f["slice"]["steps"].as_array().into_iter().flatten() {
            ids.insert(st["vertex"]["id"].as_u64().unwrap());
        }
    }
    let parent = parent.unwrap_or_else(|| panic!("{name}: no diagnosis track"));
    let shown: usize = d
        .tracks
        .iter()
        .filter(|(_, (_, p))| *p == parent)
        .map(|(u, _)| d.slices(*u).len())
        .sum();
    assert_eq!(
        shown,
        ids.len(),
        "{name}: one chain slice per diagnosed vertex"
    );
    assert_eq!(d.chain_flows_out, d.chain_flows_in, "{name}: chain arrows");
    if ids.len() > 1 {
        assert!(d.chain_flows_out >= 1, "{name}: a chain without arrows");
    }
}

#[test]
fn perfetto_export_of_each_zoo_recording_matches_the_model() {
    let Some(zoo) = Zoo::start() else { return };
    for name in ZOO {
        let trace = zoo.record(name).seconds("0.6").run();
        let pf = zoo.dir().join(format!("{name}.pftrace"));
        let js = zoo.dir().join(format!("{name}.json"));
        let (pf_arg, js_arg) = (pf.to_str().unwrap(), js.to_str().unwrap());
        analyse(
            &trace,
            &["export", "--perfetto", pf_arg, "--chrome-json", js_arg],
        );
        let d = decode(&std::fs::read(&pf).unwrap());
        check_against_model(name, &trace, &d);
        check_diagnosis(name, &trace, &d);
        if *name == "blocking-write" {
            let knot = d
                .tracks
                .iter()
                .find(|(_, (n, _))| n == "bottleneck knot 1")
                .expect("blocking-write has a knot track");
            assert!(d.slices(*knot.0).iter().any(|s| s.contains("waits for")));
        }
        check_chrome(name, &js, &d);
    }
}

/// The Chrome JSON holds as many CPU slices and flows (wake-ups and the diagnosis's
/// arrows) as the Perfetto file.
fn check_chrome(name: &str, path: &Path, d: &Decoded) {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let evs = v["traceEvents"].as_array().unwrap();
    let count = |f: &dyn Fn(&serde_json::Value) -> bool| evs.iter().filter(|e| f(e)).count();
    let cpu = count(&|e| e["ph"] == "X" && e["cat"] == "cpu");
    let want: usize = d
        .tracks
        .iter()
        .filter(|(_, (n, _))| n.starts_with("CPU "))
        .map(|(u, _)| d.slices(*u).len())
        .sum();
    assert_eq!(cpu, want, "{name}: chrome cpu slices");
    assert_eq!(
        count(&|e| e["ph"] == "s"),
        d.flows_out + d.chain_flows_out,
        "{name}: chrome flows"
    );
    assert_eq!(
        count(&|e| e["ph"] == "f"),
        d.flows_in + d.chain_flows_in,
        "{name}: chrome flow ends"
    );
}

#[test]
fn export_without_an_output_is_a_usage_error() {
    let o = causeway()
        .args(["export", "nonexistent.cwt"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--perfetto"));
}
