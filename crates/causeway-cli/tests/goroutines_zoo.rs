//! Goroutines as the things that wait, on real recordings of the Go workloads (real
//! eBPF, the default event groups):
//!
//! - `go-commit`: every Go process is followed; the committer goroutine is named by
//!   its start function and parks on its channel; `bottleneck`'s top finding is the
//!   knot {committer, disk} at `fdatasync`, and neither a runtime thread nor the timer
//!   is what it tells the user to look at; the same for `go-commit-stripped`, the
//!   same program built without symbol table and DWARF;
//! - `go-lock`: the knot is the worker goroutines, named by their start function, at
//!   the lock's call site.
//!
//! Needs root, Go and the built zoo; skipped without root unless
//! `CAUSEWAY_REQUIRE_ROOT=1` (then it fails, as in CI).

mod common;

use causeway_format::{EventKind, TraceReader};
use common::zoo::{Zoo, analyse_json};
use serde_json::Value;
use std::sync::Mutex;

/// One recording at a time (the workloads use both CPUs).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The labels of the top knot's vertices.
fn top_knot(r: &Value) -> Vec<String> {
    let knot = r["knots"][0]["vertices"]
        .as_array()
        .unwrap_or_else(|| panic!("no knot: {}", r["summary"]));
    knot.iter()
        .map(|v| {
            let i = v.as_u64().unwrap() as usize;
            r["vertices"][i]["label"].as_str().unwrap_or("").to_string()
        })
        .collect()
}

/// The committer and the disk as the top finding: the top knot's labels or, when there
/// is no knot and the top sink is a disk, the disk and the last waiter of its chain.
/// Reason: on a host whose fsync is slow the committer keeps a request in flight for
/// more than 99 % of the recording, the disk's idle edge to it falls under the noise
/// floor (1 % of the recording) and the same pair is reported as a saturated disk and
/// its waiter, with the same call site and the same fix (batch or cut the syncs).
fn knot_or_saturated_disk(r: &Value) -> Vec<String> {
    if r["knots"][0]["vertices"].is_array() {
        return top_knot(r);
    }
    let sink = &r["sinks"][0];
    let chain = sink["chain"]
        .as_array()
        .unwrap_or_else(|| panic!("no knot and no sink: {}", r["summary"]));
    let label = |v: &Value| {
        let i = v.as_u64().unwrap() as usize;
        r["vertices"][i]["label"].as_str().unwrap_or("").to_string()
    };
    let disk = label(&sink["vertex"]);
    assert!(disk.starts_with("disk"), "no knot: {}", r["summary"]);
    let waiter = chain
        .len()
        .checked_sub(2)
        .map(|i| label(&chain[i]))
        .unwrap_or_default();
    vec![disk, waiter]
}

#[test]
fn go_commit_knot_is_the_committer_goroutine_and_the_disk() {
    let Some(zoo) = Zoo::start() else { return };
    let out = zoo
        .record("go-commit")
        .out("gc.cwt")
        .seconds("2")
        .args(["--dir", zoo.dir().to_str().unwrap()])
        .one_at_a_time(&ONE_AT_A_TIME)
        .run();
    assert_go_commit_answer(&out);
}

/// The same server built as distributions ship Go (`-ldflags='-s -w'`: no symbol
/// table, no DWARF) gives the same answer: its goroutines are followed (functions from
/// `.gopclntab`, the version from `.go.buildinfo`, the layout by version) and its
/// stacks and goroutines are named from `.gopclntab`.
#[test]
fn stripped_go_commit_gives_the_same_answer() {
    let Some(zoo) = Zoo::start() else { return };
    let out = zoo
        .record("go-commit-stripped")
        .out("gcs.cwt")
        .seconds("2")
        .args(["--dir", zoo.dir().to_str().unwrap()])
        .one_at_a_time(&ONE_AT_A_TIME)
        .run();
    // Both processes followed. A child the Go runtime clones and that exits at once
    // (its check for pidfd support) may be gone before its probes are attached, as
    // with the unstripped build; nothing else may be left unfollowed.
    assert!(
        out.stderr.contains("goroutines followed in Go processes"),
        "{}",
        out.stderr
    );
    for line in out.stderr.lines() {
        assert!(
            !line.contains("recorded without goroutine events")
                || line.contains("failed to attach uprobe"),
            "{line}"
        );
    }
    assert_go_commit_answer(&out);
    // The knot's waits are named down to the system call, from the function table
    // alone.
    let text = analyse_json(&out, &["bottleneck", "--json"]).to_string();
    for name in [
        "syscall.Fdatasync",
        "main.(*server).syncLog",
        "main.(*server).commit",
        "internal/poll.(*FD).Read",
    ] {
        assert!(text.contains(name), "{name} not on the stacks");
    }
}

/// What both builds of go-commit must show: both processes followed, the committer
/// named and parked on its channel, network waits with their socket, no runtime thread
/// left in the goroutine view, and the knot {committer, disk} at `syncLog`.
fn assert_go_commit_answer(out: &common::zoo::Recording) {
    // The recording: both Go processes (server and client) followed, the committer
    // named and parked on its channel, network waits with their socket.
    let mut rd = TraceReader::open(out).unwrap();
    let stats = rd.stats().clone();
    let tables = rd.tables().clone();
    // At least the two; Go 1.23 and later also clone a child that exits at once (its
    // check for pidfd support), followed when the recorder sees it alive.
    let followed = stats.counters.get("go_processes_followed").copied();
    assert!(followed >= Some(2), "{:?}", stats.counters);
    let (mut runs, mut chan_parks, mut net_waits, mut readies) = (0, 0, 0, 0);
    let mut starts = Vec::new();
    for ev in rd.events() {
        match ev.unwrap().kind {
            EventKind::GoRun { start, .. } => {
                runs += 1;
                if let Some(s) = start.and_then(|s| tables.stack(s)) {
                    let f = tables.frame(s.frames[0]).unwrap();
                    starts.push(tables.string(f.symbol).to_string());
                }
            }
            EventKind::GoPark { reason, .. } => {
                chan_parks += usize::from(tables.string(reason) == "chan receive");
            }
            EventKind::GoNetWait { .. } => net_waits += 1,
            EventKind::GoReady { .. } => readies += 1,
            _ => {}
        }
    }
    assert!(
        runs > 1000 && readies > 500,
        "{runs} runs, {readies} readies"
    );
    assert!(chan_parks > 500, "{chan_parks} channel parks");
    assert!(net_waits > 100, "{net_waits} network waits");
    assert!(
        starts.iter().any(|s| s == "main.(*server).handle.func1"),
        "start functions: {starts:?}"
    );
    // In the goroutine view the committer stands as a thread named by the function
    // its `go` statement's wrapper calls, and parks on its channel.
    let (m, tables, _) = common::model(out);
    let view = m.goroutine_view(&tables);
    let committer = view
        .threads()
        .find(|t| t.comm == "main.(*server).commit")
        .unwrap_or_else(|| panic!("no committer goroutine"));
    assert!(view.goroutine(committer.tid).is_some());
    assert!(committer.totals.wakeups > 500, "{:?}", committer.totals);
    // No thread of a followed process is left: goroutines stand for them.
    let followed: std::collections::BTreeSet<_> = view
        .threads()
        .filter_map(|t| view.goroutine(t.tid).map(|g| g.tgid))
        .collect();
    assert_eq!(followed.len(), 2, "processes with goroutines: {followed:?}");
    let left: Vec<_> = view
        .threads()
        .filter(|t| {
            view.goroutine(t.tid).is_none() && t.tgid.is_some_and(|g| followed.contains(&g))
        })
        .map(|t| (t.tid, t.comm.clone()))
        .collect();
    assert!(
        left.is_empty(),
        "runtime threads left in the goroutine view: {left:?}"
    );

    let r = analyse_json(out, &["bottleneck", "--json"]);
    let mut members = knot_or_saturated_disk(&r);
    members.sort();
    assert_eq!(members.len(), 2, "top knot {members:?}");
    assert!(
        members[0].starts_with("disk"),
        "top knot {members:?}: {}",
        r["summary"]
    );
    assert!(
        members[1].starts_with("main.(*server).commit (goroutine "),
        "top knot {members:?}"
    );
    let summary = r["summary"].as_str().unwrap();
    assert!(summary.contains("main.(*server).syncLog"), "{summary}");
    assert!(
        !summary.contains("runtime.") && !summary.contains("timer"),
        "the runtime or the timer in what to look at: {summary}"
    );
    // The client goroutines reach the server's goroutines through the sockets.
    let text = r.to_string();
    assert!(
        text.contains("main.runClient.func1"),
        "no client goroutines"
    );
}

#[test]
fn go_lock_knot_is_the_workers_at_the_lock() {
    let Some(zoo) = Zoo::start() else { return };
    let out = zoo
        .record("go-lock")
        .out("gl.cwt")
        .seconds("2")
        .one_at_a_time(&ONE_AT_A_TIME)
        .run();
    let r = analyse_json(&out, &["bottleneck", "--json"]);
    let members = top_knot(&r);
    assert_eq!(members, ["main.worker ×8 goroutines"], "{}", r["summary"]);
    let summary = r["summary"].as_str().unwrap();
    assert!(summary.contains("main.(*table).update"), "{summary}");
    // The lock itself is on the stacks of the knot's waits.
    assert!(
        r.to_string().contains("sync.(*Mutex).Lock"),
        "no Mutex.Lock frame"
    );
}
