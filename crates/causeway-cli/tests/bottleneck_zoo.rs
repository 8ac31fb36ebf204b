//! `causeway bottleneck` on real recordings of the workload zoo (issue 4): each
//! workload is recorded for about a second with `causeway record` (real eBPF) and the
//! wPerf analysis must name the known bottleneck, with the stacks behind it. Each test
//! also checks what a plain ranking by longest off-CPU time (the report's
//! `longest_off_cpu`) would have named instead.
//!
//! Needs root and the built zoo; skipped without root unless `CAUSEWAY_REQUIRE_ROOT=1`
//! (then it fails, as in CI).

mod common;

use common::causeway;
use common::zoo::{Zoo, analyse_json};
use serde_json::Value;
use std::path::Path;

/// One zoo test at a time: each records a workload that wants the machine's cores
/// (the 16+16-thread `group-commit`, four lock workers), and several side by side on
/// a 2-core runner starve each other's threads enough to change the very waits the
/// tests assert on (runnable time turning into waits on the client, on the loopback).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// `causeway bottleneck --json [FLAGS] TRACE`, parsed.
fn bottleneck(trace: &Path, flags: &[&str]) -> Value {
    analyse_json(trace, &[&["bottleneck", "--json"], flags].concat())
}

/// The report, with lookups by vertex name.
struct Report(Value);

/// A knot's vertex ids, sorted.
fn sorted_vertices(k: &Value) -> Vec<u64> {
    sorted_vertices_of(&k["vertices"])
}

/// A JSON array of vertex ids, sorted.
fn sorted_vertices_of(list: &Value) -> Vec<u64> {
    let ids: Vec<u64> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    sorted(&ids)
}

fn sorted(ids: &[u64]) -> Vec<u64> {
    let mut vs = ids.to_vec();
    vs.sort_unstable();
    vs
}

impl Report {
    fn vertex(&self, id: &Value) -> &Value {
        &self.0["vertices"][id.as_u64().unwrap() as usize]
    }

    fn label(&self, id: &Value) -> String {
        self.vertex(id)["label"].as_str().unwrap().to_string()
    }

    /// Thread names behind a vertex (empty for pseudo threads).
    fn comms(&self, id: &Value) -> Vec<String> {
        self.vertex(id)["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["comm"].as_str().unwrap().to_string())
            .collect()
    }

    fn kind(&self, id: &Value) -> String {
        self.vertex(id)["kind"]["type"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// A vertex that is the thread `comm`, or a merged vertex containing it.
    fn find(&self, comm: &str) -> Option<u64> {
        self.0["vertices"].as_array().unwrap().iter().find_map(|v| {
            let has = v["threads"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["comm"] == comm);
            has.then(|| v["id"].as_u64().unwrap())
        })
    }

    fn vertex_of_kind(&self, kind: &str) -> Option<u64> {
        self.0["vertices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["kind"]["type"] == kind)
            .map(|v| v["id"].as_u64().unwrap())
    }

    fn edge(&self, from: u64, to: u64) -> Option<&Value> {
        self.0["edges"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["from"] == from && e["to"] == to)
    }

    fn knots(&self) -> &Vec<Value> {
        self.0["knots"].as_array().unwrap()
    }

    fn duration(&self) -> f64 {
        self.0["duration_ns"].as_f64().unwrap() / 1e9
    }

    /// The thread vertex a ranking by off-CPU time names first.
    fn longest_off_cpu(&self) -> u64 {
        self.0["longest_off_cpu"][0]["vertex"].as_u64().unwrap()
    }

    fn off_cpu(&self, v: u64) -> f64 {
        self.0["longest_off_cpu"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["vertex"] == v)
            .map_or(0.0, |o| o["off_cpu_ns"].as_f64().unwrap() / 1e9)
    }

    /// Every thread name in the report.
    fn all_comms(&self) -> Vec<String> {
        self.0["vertices"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|v| v["threads"].as_array().unwrap().clone())
            .map(|t| t["comm"].as_str().unwrap().to_string())
            .collect()
    }

    /// Checks every report must pass on a per-process recording: only the workload's
    /// own threads are vertices (no recorder, kworker or tokio thread), every edge
    /// weight is bounded by the waiting it redistributes, and no wait of the workload
    /// is left without a waker.
    fn check_common(&self, workload_threads: &[&str]) {
        let comms = self.all_comms();
        for c in &comms {
            assert!(
                workload_threads.iter().any(|w| w == c),
                "thread {c} is not the workload's: {comms:?}"
            );
        }
        assert!(self.0["processes"].is_array(), "per-process scope not seen");
        // Cascaded weights count a nested wait once per thread it holds up (wPerf
        // Figure 4), so an edge may exceed the recording, but an edge between two
        // threads never exceeds the waiting of all threads together (each root wait adds
        // at most its own length to any edge between two threads). An edge of merged
        // vertices (workers ×4) sums the edges between their members, each so bounded:
        // one root wait of a worker that waited on a second, which waited on a third,
        // adds its length to two of them (seen on a CI host: 11.3 s on the workers'
        // self-loop, 11.0 s of waiting in all).
        let vertices = self.0["vertices"].as_array().unwrap();
        let waiting: f64 = vertices
            .iter()
            .map(|v| v["waiting_ns"].as_f64().unwrap() / 1e9)
            .sum();
        let members = |i: &Value| -> f64 {
            let v = &vertices[i.as_u64().unwrap() as usize];
            v["threads"].as_array().map_or(1, |t| t.len().max(1)) as f64
        };
        for e in self.0["edges"].as_array().unwrap() {
            if e["kind"] == "wait" {
                let w = e["weight_ns"].as_f64().unwrap() / 1e9;
                let bound = waiting * members(&e["from"]) * members(&e["to"]);
                assert!(w <= bound + 1e-6, "edge {e} weighs more than all waits");
                assert!(e["direct_ns"].as_f64().unwrap() / 1e9 <= w + 1e-9);
            }
        }
        let q = &self.0["quality"];
        assert_eq!(q["lost_events"], 0, "events lost: {q}");
        // The kernel skips a recorder program that would nest in itself on one CPU (an
        // interrupt that wakes a thread while the wake-up program runs): such a wake-up
        // is missing. Allow a couple of those, sub-millisecond in all, not more.
        let unattributed = q["unattributed_waits"].as_u64().unwrap();
        let unattributed_s = q["unattributed_ns"].as_f64().unwrap() / 1e9;
        assert!(
            unattributed <= 2 && unattributed_s < 1e-3,
            "waits with no known waker: {q}"
        );
    }
}

fn has_frame(stacks: &Value, side: &str, names: &[&str]) -> bool {
    stacks.as_array().unwrap().iter().any(|s| {
        s[side]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| names.iter().any(|n| f.as_str().unwrap().contains(n)))
    })
}

#[test]
fn blocking_write_knot_is_consumer_and_disk_not_the_producer() {
    let Some(zoo) = Zoo::start() else { return };
    let _one = serial();
    let trace = zoo.record("blocking-write").seconds("1").run();
    let r = Report(bottleneck(&trace, &[]));
    r.check_common(&["blocking-write", "producer", "consumer"]);
    let consumer = r.find("consumer").expect("consumer vertex");
    let producer = r.find("producer").expect("producer vertex");
    let disk = r.vertex_of_kind("disk").expect("disk vertex");

    // The top knot is exactly {consumer, disk}: a cycle of the fsync and the disk
    // idling until the next request.
    let k = &r.knots()[0];
    let vs = sorted_vertices(k);
    let mut want = vec![consumer, disk];
    want.sort_unstable();
    assert_eq!(vs, want, "top knot {k}");
    assert_eq!(k["has_io"], true);
    let to_disk = r.edge(consumer, disk).expect("consumer -> disk");
    assert!(has_frame(&to_disk["wait_stacks"], "user", &["flush_log"]));
    assert!(has_frame(
        &to_disk["wait_stacks"],
        "kernel",
        &["fsync", "ext4_sync_file", "blkdev_issue_flush"]
    ));
    assert!(has_frame(
        &to_disk["waker_stacks"],
        "kernel",
        &[
            "blk_mq_end_request",
            "blk_update_request",
            "end_writeback",
            "bio_endio"
        ]
    ));
    let idle = r.edge(disk, consumer).expect("disk -> consumer (idle)");
    assert_eq!(idle["kind"], "device_idle");
    // The producer is in no knot although it waits for the consumer.
    assert!(
        r.knots()
            .iter()
            .all(|k| !k["vertices"].as_array().unwrap().contains(&producer.into()))
    );
    assert!(r.edge(producer, consumer).is_some());

    // A ranking by longest off-CPU time would name the main thread blocked in
    // pthread_join, then the producer (blocked on the full queue), which waits longer
    // than the consumer: never the consumer's fsync.
    let first = r.longest_off_cpu();
    assert_ne!(first, consumer, "off-CPU ranking named the consumer first");
    let waiting = |v: u64| r.vertex(&v.into())["waiting_ns"].as_f64().unwrap() / 1e9;
    assert!(
        waiting(producer) > waiting(consumer),
        "producer waits {} <= consumer {}",
        waiting(producer),
        waiting(consumer)
    );
    // The CI flake: with other processes saturating the disk (the other tests'
    // recorders, builds; reproduced with a `dd` beside the workload) the disk's
    // estimated utilization reached 100%, it had no idle edge back to the consumer and
    // became a sink: no knot. In a per-process recording its idle edges come from the
    // program's own requests in flight, so a fully busy disk keeps the knot. A disk
    // rated at one request per second is exactly that, on every run.
    let busy = Report(bottleneck(&trace, &["--disk-iops", "1"]));
    let dev = &busy.0["devices"][0];
    assert_eq!(dev["utilization"].as_f64().unwrap(), 1.0, "{dev}");
    assert!(dev["recorded_utilization"].as_f64().unwrap() < 1.0, "{dev}");
    let k = busy.knots().first().expect("a knot on a fully busy disk");
    assert_eq!(sorted_vertices(k), want, "top knot on a busy disk {k}");
    assert!(busy.edge(disk, consumer).is_some());
    eprintln!(
        "blocking-write: knot {{consumer, disk}}, consumer -> disk {:.3}s ({:.0}%), off-CPU first: {} ({:.3}s); waiting: producer {:.3}s, consumer {:.3}s",
        to_disk["weight_ns"].as_f64().unwrap() / 1e9,
        to_disk["share"].as_f64().unwrap() * 100.0,
        r.label(&first.into()),
        r.off_cpu(first),
        waiting(producer),
        waiting(consumer)
    );
}

#[test]
fn lock_contention_knot_is_the_workers_self_loop_on_the_mutex() {
    let Some(zoo) = Zoo::start() else { return };
    let _one = serial();
    // Library frames and kernel stacks on every wait, so pthread_mutex_lock's futex
    // shows (by default only the program's call sites and D-state kernel stacks).
    let trace = zoo
        .record("lock-contention")
        .flags(["--stack-mode", "libs", "--kernel-stacks", "all"])
        .seconds("1")
        .run();
    let r = Report(bottleneck(&trace, &[]));
    let names = [
        "lock-contention",
        "worker-0",
        "worker-1",
        "worker-2",
        "worker-3",
    ];
    r.check_common(&names);
    let w = r.find("worker-0").expect("workers");
    assert_eq!(r.kind(&w.into()), "similar_threads");
    let mut members = r.comms(&w.into());
    members.sort();
    assert_eq!(members, ["worker-0", "worker-1", "worker-2", "worker-3"]);

    let k = &r.knots()[0];
    assert_eq!(k["vertices"], serde_json::json!([w]), "top knot {k}");
    let self_loop = r.edge(w, w).expect("self-loop");
    assert!(self_loop["weight_ns"].as_f64().unwrap() / 1e9 > 0.2 * r.duration());
    // pthread_mutex_lock's slow path (glibc's __lll_lock_wait) into futex_wait, woken
    // from pthread_mutex_unlock (__lll_lock_wake) by futex_wake.
    assert!(has_frame(
        &self_loop["wait_stacks"],
        "user",
        &["pthread_mutex_lock", "lll_lock_wait"]
    ));
    assert!(has_frame(
        &self_loop["wait_stacks"],
        "kernel",
        &["futex_wait"]
    ));
    assert!(has_frame(
        &self_loop["waker_stacks"],
        "user",
        &["pthread_mutex_unlock", "lll_lock_wake"]
    ));
    assert!(has_frame(
        &self_loop["waker_stacks"],
        "kernel",
        &["futex_wake"]
    ));
    // Not mistaken for background threads (they run under one CPU together, but
    // queue for a CPU the rest of the time).
    assert!(r.0["background_knots"].as_array().unwrap().is_empty());

    // An off-CPU ranking names the workers too, but as four threads that each wait a
    // lot, not as one lock they wait on each other for; and next to them the main
    // thread blocked in pthread_join, which is no bottleneck. Without merging, the
    // top thread is a single worker.
    let main = r.find("lock-contention").expect("main thread");
    assert!(r.off_cpu(main) > 0.5 * r.duration());
    assert!(k["vertices"].as_array().unwrap().iter().all(|v| *v != main));
    let raw = Report(bottleneck(&trace, &["--no-merge"]));
    let first = raw.longest_off_cpu();
    let first_name = raw.label(&first.into());
    assert!(
        first_name.starts_with("worker-") || first_name.starts_with("lock-contention"),
        "{first_name}"
    );
    assert_eq!(raw.comms(&first.into()).len(), 1);
    eprintln!(
        "lock-contention: self-loop {:.3}s ({:.0}%), off-CPU first without merging: {first_name} ({:.3}s)",
        self_loop["weight_ns"].as_f64().unwrap() / 1e9,
        self_loop["share"].as_f64().unwrap() * 100.0,
        raw.off_cpu(first)
    );
}

#[test]
fn load_imbalance_knot_is_the_cycle_between_the_phase_threads() {
    let Some(zoo) = Zoo::start() else { return };
    let _one = serial();
    let trace = zoo.record("load-imbalance").seconds("1").run();
    // Raw threads: the cycle phase-0 <-> phase-1 (each waits for the other at the
    // barrier in the phases where the other has the heavy share).
    let raw = Report(bottleneck(&trace, &["--no-merge"]));
    raw.check_common(&["load-imbalance", "phase-0", "phase-1"]);
    let p0 = raw.find("phase-0").unwrap();
    let p1 = raw.find("phase-1").unwrap();
    let k = &raw.knots()[0];
    let vs = sorted_vertices(k);
    let mut want = vec![p0, p1];
    want.sort_unstable();
    assert_eq!(vs, want, "top knot {k}");
    assert_eq!(k["shape"], "cycle");
    let (a, b) = (raw.edge(p0, p1).unwrap(), raw.edge(p1, p0).unwrap());
    for e in [a, b] {
        // Both directions matter: the heavy role rotates.
        assert!(
            e["weight_ns"].as_f64().unwrap() / 1e9 > 0.1 * raw.duration(),
            "{e}"
        );
        assert!(has_frame(&e["wait_stacks"], "user", &["phase_main"]));
    }
    // Merged (the default), the phase threads are one vertex waiting on itself.
    let merged = Report(bottleneck(&trace, &[]));
    let v = merged.find("phase-0").unwrap();
    assert_eq!(merged.knots()[0]["vertices"], serde_json::json!([v]));
    assert!(merged.edge(v, v).is_some());
    // On-CPU samples (default 199 Hz per CPU) name where the phase threads burn their
    // CPU: the item work, not the barrier.
    // At 199 Hz per CPU a thread gets about 199 samples per second it runs; the tests
    // run side by side, so how long that is varies: expect a third of it at least.
    let vertex = merged.vertex(&v.into());
    let prof = &vertex["on_cpu"];
    let samples = prof["samples"].as_u64().unwrap_or(0) as f64;
    let expected = vertex["running_ns"].as_f64().unwrap() / 1e9
        * f64::from(causeway_record::sampling::DEFAULT_SAMPLE_HZ);
    assert!(
        samples >= (expected / 3.0).max(3.0),
        "phase threads sampled {samples} times, {expected:.0} expected: {prof}"
    );
    let hot = &prof["stacks"][0];
    assert!(
        hot["user"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "process_item"),
        "hottest stack {hot}"
    );
    assert!(hot["share"].as_f64().unwrap() > 0.5, "{prof}");
    let info: Value = serde_json::from_slice(
        &causeway()
            .args(["info", "--json", trace.as_str()])
            .output()
            .expect("run causeway info")
            .stdout,
    )
    .expect("info JSON");
    assert!(
        info["cpu_samples"].as_u64().unwrap() as f64 >= samples,
        "{info}"
    );

    // An off-CPU ranking names the main thread blocked in pthread_join (it waits the
    // whole run), which is not part of the problem.
    let main = raw.find("load-imbalance").unwrap();
    assert_eq!(raw.longest_off_cpu(), main);
    assert!(!vs.contains(&main));
    eprintln!(
        "load-imbalance: cycle phase-0 -> phase-1 {:.3}s, phase-1 -> phase-0 {:.3}s; off-CPU first: {} ({:.3}s)",
        a["weight_ns"].as_f64().unwrap() / 1e9,
        b["weight_ns"].as_f64().unwrap() / 1e9,
        raw.label(&main.into()),
        raw.off_cpu(main)
    );
}

#[test]
fn blocking_net_clients_loopback_server_and_the_backend_sleep() {
    let Some(zoo) = Zoo::start() else { return };
    let _one = serial();
    let trace = zoo.record("blocking-net").seconds("1").run();
    let r = Report(bottleneck(&trace, &[]));
    let names = [
        "blocking-net",
        "client-0",
        "client-1",
        "client-2",
        "client-3",
        "server-0",
    ];
    r.check_common(&names);
    let clients = r.find("client-0").unwrap();
    let server = r.find("server-0").unwrap();
    let timer = r.vertex_of_kind("timer").expect("timer vertex");
    assert_eq!(r.comms(&clients.into()).len(), 4);

    // The clients wait in recv for the server thread that wrote their replies (the
    // socket data names it), not for the loopback device that delivered them.
    let c_s = r.edge(clients, server).expect("clients -> server");
    assert!(c_s["weight_ns"].as_f64().unwrap() / 1e9 > 0.5 * r.duration());
    assert!(has_frame(
        &c_s["wait_stacks"],
        "user",
        &["recv", "__libc_recv"]
    ));
    if let Some(lo) = r.vertex_of_kind("nic") {
        let c_lo = r
            .edge(clients, lo)
            .map_or(0.0, |e| e["direct_ns"].as_f64().unwrap());
        assert!(
            c_lo < 0.01 * c_s["direct_ns"].as_f64().unwrap(),
            "clients still wait for the loopback: {c_lo} ns"
        );
    }
    // The server waits for its backend call (a sleep): the single server thread
    // serializes them.
    let s_t = r.edge(server, timer).expect("server -> timer");
    assert!(s_t["weight_ns"].as_f64().unwrap() / 1e9 > 0.3 * r.duration());
    assert!(has_frame(&s_t["wait_stacks"], "user", &["call_backend"]));
    // The server rarely waits for the clients (four clients keep it busy), so the
    // wait-for graph ends at the timer: it is the sink, fed by the server's sleep,
    // and the chain of waits into it runs clients -> server -> timer.
    let sink = &r.0["sinks"][0];
    assert_eq!(sink["vertex"], timer, "{sink}");
    let chain: Vec<u64> = sink["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert!(
        chain.ends_with(&[clients, server, timer]),
        "chain {chain:?}"
    );
    let summary = r.0["summary"].as_str().unwrap();
    assert!(
        summary.contains("server-0") && summary.contains("call_backend"),
        "{summary}"
    );
    assert!(
        r.knots()
            .iter()
            .all(|k| !k["vertices"].as_array().unwrap().contains(&clients.into()))
    );

    // An off-CPU ranking names the clients (four threads blocked in recv), which are
    // only waiting for the one server thread.
    assert_eq!(r.longest_off_cpu(), clients);
    assert!(r.off_cpu(clients) > r.off_cpu(server));
    eprintln!(
        "blocking-net: clients -> server {:.3}s, server -> timer {:.3}s; off-CPU first: clients ({:.3}s), server {:.3}s",
        c_s["weight_ns"].as_f64().unwrap() / 1e9,
        s_t["weight_ns"].as_f64().unwrap() / 1e9,
        r.off_cpu(clients),
        r.off_cpu(server)
    );
}

/// The thread vertices waiting directly on the background sinks.
fn background_waiters(r: &Report) -> Vec<u64> {
    r.0["background_sinks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["edges"].as_array().unwrap().clone())
        .map(|e| {
            r.0["edges"][e.as_u64().unwrap() as usize]["from"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

#[test]
fn prefork_lock_knot_is_the_merged_workers_and_the_disk() {
    let Some(zoo) = Zoo::on_disk() else { return };
    let _one = serial();
    let trace = zoo
        .record("prefork-lock")
        .flags(["--stack-mode", "libs", "--kernel-stacks", "all"])
        .seconds("1")
        .args(["--dir", zoo.dir().to_str().unwrap()])
        .run();
    let r = Report(bottleneck(&trace, &[]));
    let names = [
        "pl-main",
        "pl-worker",
        "pl-flusher",
        "pl-ckpt",
        "pl-client",
        "client-0",
        "client-1",
        "client-2",
        "client-3",
    ];
    r.check_common(&names);
    // The four worker processes are one vertex.
    let w = r.find("pl-worker").expect("workers");
    assert_eq!(r.kind(&w.into()), "similar_processes");
    assert_eq!(r.comms(&w.into()), ["pl-worker"; 4]);
    assert!(r.label(&w.into()).contains("×4 processes"));
    let disk = r.vertex_of_kind("disk").expect("disk vertex");

    // The top knot is {workers, disk}: the lock (a self-loop) and the sync under it.
    // When the disk's edges weigh under the refinement threshold (fast syncs on a
    // quiet disk), refinement leaves the lock's self-loop alone: still the workers'
    // knot, never the clients and the loopback that today's analysis named.
    let k = &r.knots()[0];
    let vs = sorted_vertices(k);
    assert!(vs == sorted(&[w, disk]) || vs == [w], "top knot {k}");
    let self_loop = r.edge(w, w).expect("workers wait for each other");
    assert!(has_frame(
        &self_loop["wait_stacks"],
        "user",
        &["handle_request"]
    ));
    assert!(has_frame(
        &self_loop["wait_stacks"],
        "user",
        &["pthread_mutex_lock", "lll_lock_wait"]
    ));
    let to_disk = r.edge(w, disk).expect("workers -> disk");
    assert!(has_frame(
        &to_disk["wait_stacks"],
        "user",
        &["commit_record"]
    ));
    assert!(has_frame(
        &to_disk["wait_stacks"],
        "user",
        &["fdatasync", "commit_record"]
    ));

    // The flusher and the checkpointer sleep on timers: background, not findings.
    // (The checkpointer's 1 s sleep may outlast the recording: then it has no edge.)
    let summary = r.0["summary"].as_str().unwrap();
    for bg in ["pl-flusher", "pl-ckpt"] {
        let Some(v) = r.find(bg) else { continue };
        assert!(!summary.contains(bg), "{summary}");
        assert!(
            r.knots()
                .iter()
                .all(|k| !k["vertices"].as_array().unwrap().contains(&v.into()))
        );
        let timer = r.vertex_of_kind("timer");
        if timer.is_some_and(|t| r.edge(v, t).is_some()) {
            assert!(background_waiters(&r).contains(&v), "{bg} not background");
        }
    }
    let flusher = r.find("pl-flusher").expect("flusher");
    assert!(background_waiters(&r).contains(&flusher));
    assert!(
        r.0["sinks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| r.kind(&s["vertex"]) != "timer"),
        "a timer sink among the findings"
    );
    eprintln!(
        "prefork-lock: knot {{{}, disk}}, self-loop {:.3}s, workers -> disk {:.3}s",
        r.label(&w.into()),
        self_loop["weight_ns"].as_f64().unwrap() / 1e9,
        to_disk["weight_ns"].as_f64().unwrap() / 1e9
    );
}

#[test]
fn group_commit_knot_is_the_sync_thread_and_the_disk_not_the_runtime() {
    let Some(zoo) = Zoo::on_disk() else { return };
    let _one = serial();
    let trace = zoo
        .record("group-commit")
        .flags(["--stack-mode", "libs", "--kernel-stacks", "all"])
        .seconds("2")
        .args(["--dir", zoo.dir().to_str().unwrap()])
        .run();
    let r = Report(bottleneck(&trace, &[]));
    let mut names: Vec<String> = ["gc-server", "gc-client", "sync", "runtime"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for i in 0..16 {
        names.push(format!("net-{i}"));
        names.push(format!("client-{i}"));
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    r.check_common(&names);
    let sync = r.find("sync").expect("sync thread");
    let runtime = r.find("runtime").expect("runtime thread");
    let disk = r.vertex_of_kind("disk").expect("disk vertex");

    // The top knot is {sync, disk}, with the fdatasync call site on its edge.
    let k = &r.knots()[0];
    assert_eq!(sorted_vertices(k), sorted(&[sync, disk]), "top knot {k}");
    let to_disk = r.edge(sync, disk).expect("sync -> disk");
    assert!(has_frame(
        &to_disk["wait_stacks"],
        "user",
        &["sync_request"]
    ));
    assert!(has_frame(
        &to_disk["wait_stacks"],
        "user",
        &["fdatasync", "sync_request"]
    ));
    // Not the runtime thread, not the timer: in no knot, not in the summary.
    let summary = r.0["summary"].as_str().unwrap();
    assert!(
        !summary.contains("runtime") && !summary.contains("timer"),
        "{summary}"
    );
    assert!(summary.contains("sync_request"), "{summary}");
    for k in r.knots() {
        assert!(!k["vertices"].as_array().unwrap().contains(&runtime.into()));
    }
    // When the sync thread's waits at the safepoint reach the noise floor, they are
    // set aside out of the knot: as waits on a brief stopper (the runtime thread), or
    // else as a small leak (without either: no knot at all).
    if let Some(e) = r.edge(sync, runtime)
        && e["weight_ns"].as_f64().unwrap() / 1e9
            >= r.0["quality"]["min_edge_ns"].as_f64().unwrap() / 1e9
    {
        let out: Vec<&Value> = ["leaks", "paused"]
            .iter()
            .flat_map(|f| k[*f].as_array().unwrap())
            .collect();
        assert!(out.contains(&&e["id"]), "{k}");
    }
    // Nor is it a sink or what leads to one: its timer, when it is one, is background.
    for s in r.0["sinks"].as_array().unwrap() {
        assert_ne!(s["vertex"].as_u64(), Some(runtime), "{s}");
        for e in s["edges"].as_array().unwrap() {
            let from = r.0["edges"][e.as_u64().unwrap() as usize]["from"].as_u64();
            assert_ne!(from, Some(runtime), "a sink waited on by the runtime: {s}");
        }
    }
    eprintln!(
        "group-commit: knot {{sync, disk}}, sync -> disk {:.3}s, sync -> runtime {:.3}s",
        to_disk["weight_ns"].as_f64().unwrap() / 1e9,
        r.edge(sync, runtime)
            .map_or(0.0, |e| e["weight_ns"].as_f64().unwrap() / 1e9)
    );
}

/// A running sink's advice names the function its samples ran (issue 47): in
/// spin-flag the waiter spins in `spin_until_done` while the helpers wait for it, so
/// "What to look at" must end at that function, not at "profile it on CPU".
#[test]
fn a_running_sinks_advice_names_the_function_it_ran() {
    let Some(zoo) = Zoo::start() else { return };
    let _one = serial();
    let trace = zoo.record("spin-flag").seconds("1").run();
    let r = Report(bottleneck(&trace, &[]));
    let waiter = r.find("waiter").expect("the waiter's vertex");
    let sink = r.0["sinks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["vertex"].as_u64() == Some(waiter))
        .unwrap_or_else(|| panic!("the waiter is no sink: {}", r.0["sinks"]));
    let advice = sink["advice"].as_str().unwrap();
    assert!(
        advice.contains("in spin_until_done ← waiter_main") && !advice.contains("profile it"),
        "{advice}"
    );
    let site = &r.0["vertices"][waiter as usize]["on_cpu"]["sites"][0];
    assert!(site["share"].as_f64().unwrap() > 0.5, "{site}");
}

/// `workload ARGS`'s own throughput line, ops/s (run unrecorded).
fn throughput(name: &str, args: &[&str]) -> f64 {
    let o = std::process::Command::new(common::workload(name))
        .args(args)
        .output()
        .expect("run the workload");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("throughput: ")?.strip_suffix(" ops/s"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no throughput line: {text}"))
}

/// The what-if replay checked as COZ checks a virtual speedup: blocking-write with
/// each flush replaced by a 1 ms sleep is recorded, the gain of halving those sleeps
/// is predicted from the recording, and the program is then run with 0.5 ms sleeps.
#[test]
fn halving_the_flush_predicts_the_gain_of_running_with_half_the_flush() {
    let Some(zoo) = Zoo::start() else { return };
    let _one = serial();
    let trace = zoo
        .record("blocking-write")
        .args(["--sync-us", "1000"])
        .seconds("2")
        .run();
    let p = analyse_json(
        &trace,
        &[
            "whatif",
            "--json",
            "--edge",
            "consumer->timer",
            "--factor",
            "2",
        ],
    );
    let predicted = p["gain"].as_f64().expect("a gain");
    assert_eq!(p["changes"][0]["factor"], 2.0, "{p}");
    assert!(p["waits"]["changed"].as_u64().unwrap() > 100, "{p}");
    // The same edge among bottleneck --what-if's gains, removing more than halving.
    let b = bottleneck(&trace, &["--what-if"]);
    let gains = b["what_if"]["edges"].as_array().expect("what_if.edges");
    let flush = gains
        .iter()
        .find(|g| {
            g["label"]
                .as_str()
                .is_some_and(|l| l.starts_with("consumer"))
        })
        .unwrap_or_else(|| panic!("no gain for the consumer's sleeps: {gains:?}"));
    let halved = flush["halved"]["gain"].as_f64().unwrap();
    assert!((halved - predicted).abs() < 1e-9, "{flush} vs {p}");
    assert!(flush["removed"]["gain"].as_f64().unwrap() > halved);
    let before = throughput("blocking-write", &["--seconds", "1.5", "--sync-us", "1000"]);
    let after = throughput("blocking-write", &["--seconds", "1.5", "--sync-us", "500"]);
    let measured = after / before - 1.0;
    // Goal of the issue: within 25 % of the measured throughput.
    let error = (1.0 + predicted) / (1.0 + measured) - 1.0;
    assert!(
        error.abs() < 0.25,
        "predicted {predicted:+.2}, measured {measured:+.2} ({before:.0} -> {after:.0} ops/s)"
    );
}

/// The fsync shapes of issue 48: a single-thread insert-fsync loop and an event loop
/// that fdatasyncs every round before replying to clients over loopback. Their disk
/// edge, the disk (`--waits-on`) and the call site select the same waits and must
/// predict the same gain, and removing them must predict most of what dropping the
/// flush (`--fixed`) gives, measured unrecorded right after. Before the model
/// followed only recorded threads, kept kernel I/O threads' waits as service time and
/// took the removed calls' CPU out, these predicted +0 % on a journaled disk and
/// 0.55 of the measured gain here.
#[test]
fn removing_an_fsync_predicts_the_gain_of_dropping_it() {
    let Some(zoo) = Zoo::on_disk() else { return };
    let _one = serial();
    let dir = zoo.dir().to_str().unwrap().to_string();
    for (name, waiter, site, call) in [
        ("commit-loop", "inserter", "commit_row", "fsync"),
        ("event-fsync", "ef-server", "flush_append_log", "fdatasync"),
    ] {
        let trace = zoo
            .record(name)
            .args(["--dir", dir.as_str()])
            .seconds("2")
            .run();
        let gain = |args: &[&str]| {
            let p = analyse_json(&trace, &[&["whatif", "--json"], args].concat());
            assert!(p["waits"]["changed"].as_u64().unwrap() > 1000, "{p}");
            p["gain"].as_f64().unwrap_or_else(|| panic!("no gain: {p}"))
        };
        let edge = format!("{waiter}->disk");
        let by_edge = gain(&["--edge", &edge]);
        let disk = bottleneck(&trace, &[])["vertices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["label"].as_str().is_some_and(|l| l.starts_with("disk")))
            .map(|v| v["label"].as_str().unwrap().to_string())
            .expect("a disk vertex");
        let by_disk = gain(&["--waits-on", &disk]);
        let by_site = gain(&["--site", site]);
        let by_call = gain(&["--site", call]);
        for g in [by_disk, by_site, by_call] {
            assert!(
                ((1.0 + g) / (1.0 + by_edge) - 1.0).abs() < 0.03,
                "{name}: edge {by_edge:+.2}, disk {by_disk:+.2}, site {by_site:+.2}, call {by_call:+.2}"
            );
        }
        let before = throughput(name, &["--seconds", "1.5", "--dir", &dir]);
        let after = throughput(name, &["--seconds", "1.5", "--dir", &dir, "--fixed"]);
        let ratio = (1.0 + by_edge) / (after / before);
        eprintln!(
            "{name}: predicted {:.2}x, measured {:.2}x ({before:.0} -> {after:.0} ops/s), ratio {ratio:.2}",
            1.0 + by_edge,
            after / before
        );
        // The goal is within 25 %: commit-loop meets it (0.92-0.93 on an idle
        // machine, with the recorder's measured work out of the replay), event-fsync
        // not yet (0.67-0.78); a shared virtual disk's fsync latency swings several-fold
        // between the recording and the measurement, and a busy machine moves both
        // (0.44-0.47 beside a build). The floor catches a model that predicts nothing
        // or little, as it did (0.03-0.14 on these shapes).
        assert!(
            (0.3..1.5).contains(&ratio),
            "{name}: predicted {by_edge:+.2}, measured {before:.0} -> {after:.0} ops/s"
        );
    }
}
