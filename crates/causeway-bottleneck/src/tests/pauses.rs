//! Brief stoppers (`pauses`): a runtime thread everyone waits for briefly is set aside,
//! on hand-built graphs shaped like the `group-commit` recording.

use crate::findings::{Edge, EdgeId, EdgeKind, ThreadRef, Vertex, VertexId, VertexKind};
use crate::knots::{Limits, Terminals, find};
use crate::pauses;
use causeway_format::{DurationNs, Tid};

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

/// Vertices: (kind, threads, waiting ns, running ns).
pub(super) fn vertices(list: &[(VertexKind, usize, u64, u64)]) -> Vec<Vertex> {
    list.iter()
        .enumerate()
        .map(|(i, (kind, n, waiting, running))| Vertex {
            id: VertexId(i),
            kind: kind.clone(),
            threads: (0..*n)
                .map(|t| ThreadRef {
                    tid: Tid((i * 100 + t) as u32),
                    tgid: None,
                    comm: format!("v{i}"),
                    title: None,
                    goroutine: None,
                })
                .collect(),
            running: DurationNs(*running),
            runnable: DurationNs(0),
            waiting: DurationNs(*waiting),
            on_cpu: None,
        })
        .collect()
}

/// Edges: (from, to, cascaded weight, direct waits, direct ns); idle edges have no
/// direct waits. Sorted heaviest first and numbered, as the analysis does.
pub(super) fn edges(list: &[(usize, usize, u64, u64, u64)]) -> Vec<Edge> {
    let mut es: Vec<Edge> = list
        .iter()
        .map(|&(from, to, weight, waits, direct)| Edge {
            id: EdgeId(0),
            from: VertexId(from),
            to: VertexId(to),
            kind: if waits == 0 {
                EdgeKind::DeviceIdle
            } else {
                EdgeKind::Wait
            },
            weight: DurationNs(weight),
            direct_waits: waits,
            direct: DurationNs(direct),
            wait_stacks: Vec::new(),
            waker_stacks: Vec::new(),
        })
        .collect();
    es.sort_by_key(|e| std::cmp::Reverse(e.weight.0));
    for (i, e) in es.iter_mut().enumerate() {
        e.id = EdgeId(i);
    }
    es
}

fn run(vs: &[Vertex], es: &[Edge]) -> Terminals {
    let limits = Limits {
        min_edge_ns: 20 * MS,
        threshold_ns: 400 * MS,
        leak_fraction: 0.05,
    };
    find(vs, es, &limits, DurationNs(2 * S))
}

const SYNC: usize = 0;
const NET: usize = 1;
const RUNTIME: usize = 2;
const DISK: usize = 3;
const TIMER: usize = 4;

/// sync ⇄ disk, 16 net threads waiting for sync, and a runtime thread that stops them
/// all for about a millisecond every 50 ms and otherwise sleeps on a timer. `stop`
/// is the direct waiting on the runtime thread of sync and of the net threads each.
fn group_commit(stop: u64, stops: u64) -> (Vec<Vertex>, Vec<Edge>) {
    let vs = vertices(&[
        (VertexKind::Thread, 1, S, S / 2),
        (VertexKind::SimilarThreads, 16, 30 * S, S / 2),
        (VertexKind::Thread, 1, 2 * S - stops * MS, stops * MS),
        (VertexKind::Disk { device: None }, 0, 0, 0),
        (VertexKind::Timer, 0, 0, 0),
    ]);
    let es = edges(&[
        (SYNC, DISK, 17 * S, 30_000, S),
        (DISK, SYNC, 1_300 * MS, 0, 0),
        (NET, SYNC, 30 * S, 11_000, 30 * S),
        // Cascaded: 16 net threads queued behind sync while it waits.
        (SYNC, RUNTIME, 16 * stop, stops, stop),
        (NET, RUNTIME, stop, stops, stop),
        (
            RUNTIME,
            TIMER,
            2 * S - stops * MS,
            stops,
            2 * S - stops * MS,
        ),
    ]);
    (vs, es)
}

fn edge_ids(es: &[Edge], pairs: &[(usize, usize)]) -> Vec<EdgeId> {
    let mut ids: Vec<EdgeId> = pairs
        .iter()
        .map(|&(f, t)| {
            es.iter()
                .find(|e| e.from.0 == f && e.to.0 == t)
                .expect("edge")
                .id
        })
        .collect();
    ids.sort_unstable();
    ids
}

#[test]
fn a_runtime_thread_everyone_waits_for_briefly_is_set_aside() {
    let (vs, es) = group_commit(40 * MS, 40);
    let stoppers = pauses::find(&vs, &es);
    assert_eq!(stoppers.len(), 1, "{stoppers:?}");
    assert_eq!(stoppers[0].vertex, RUNTIME as u32);
    assert_eq!(stoppers[0].waiter_threads, 17);
    let t = run(&vs, &es);
    // The knot is the sync thread and the disk; its wait on the runtime is listed.
    assert_eq!(t.knots.len(), 1);
    assert_eq!(t.knots[0].vertices, vec![VertexId(SYNC), VertexId(DISK)]);
    assert_eq!(t.knots[0].paused, edge_ids(&es, &[(SYNC, RUNTIME)]));
    // The runtime's timer is background, never a sink to look at.
    assert!(t.sinks.is_empty(), "{:?}", t.sinks);
    assert_eq!(t.background_sinks.len(), 1);
    assert_eq!(t.background_sinks[0].vertex, VertexId(TIMER));
    assert_eq!(t.pauses.len(), 1);
    assert_eq!(
        t.pauses[0].edges,
        edge_ids(&es, &[(SYNC, RUNTIME), (NET, RUNTIME)])
    );
}

#[test]
fn long_stops_or_a_large_share_keep_the_runtime_thread_in_the_graph() {
    // 40 stops of 30 ms: a stop longer than a time slice is no brief stop.
    let (vs, es) = group_commit(40 * 30 * MS, 40);
    assert!(pauses::find(&vs, &es).is_empty());
    // Short stops that are most of what the waiters wait on: the runtime thread is the
    // knot's business (a collector the workers keep waiting for).
    let vs2 = vertices(&[
        (VertexKind::SimilarThreads, 8, 4 * S, S),
        (VertexKind::Thread, 1, 0, 2 * S),
    ]);
    let es2 = edges(&[(0, 1, 3 * S, 3_000, 3 * S), (1, 0, 100 * MS, 50, 100 * MS)]);
    assert!(pauses::find(&vs2, &es2).is_empty());
    let t = run(&vs2, &es2);
    assert_eq!(t.knots.len(), 1);
    assert_eq!(t.knots[0].vertices, vec![VertexId(0), VertexId(1)]);
}

#[test]
fn one_or_two_waiters_make_no_brief_stopper() {
    // A consumer waiting briefly on a producer is a hand-off, not a safepoint.
    let vs = vertices(&[
        (VertexKind::Thread, 1, S, S),
        (VertexKind::Thread, 1, S, S),
        (VertexKind::Timer, 0, 0, 0),
    ]);
    let es = edges(&[(0, 1, 10 * MS, 10, 10 * MS), (1, 2, S, 100, S)]);
    assert!(pauses::find(&vs, &es).is_empty());
}

#[test]
fn with_no_knot_the_answer_is_not_the_runtime_thread_or_its_timer() {
    // Clients wait for one CPU-bound server; everyone also waits briefly for the
    // runtime thread, which sleeps on a timer in between.
    const CLIENTS: usize = 0;
    const SERVER: usize = 1;
    let vs = vertices(&[
        (VertexKind::SimilarThreads, 16, 30 * S, S / 4),
        (VertexKind::Thread, 1, 40 * MS, 19 * S / 10),
        (VertexKind::Thread, 1, 1_960 * MS, 40 * MS),
        (VertexKind::Disk { device: None }, 0, 0, 0),
        (VertexKind::Timer, 0, 0, 0),
    ]);
    let es = edges(&[
        (CLIENTS, SERVER, 28 * S, 20_000, 28 * S),
        (CLIENTS, RUNTIME, 600 * MS, 40, 40 * MS),
        (SERVER, RUNTIME, 40 * MS, 40, 40 * MS),
        (RUNTIME, TIMER, 1_960 * MS, 40, 1_960 * MS),
    ]);
    let t = run(&vs, &es);
    assert!(t.knots.is_empty());
    let tops: Vec<VertexId> = t.sinks.iter().map(|s| s.vertex).collect();
    assert_eq!(tops, vec![VertexId(SERVER)]);
    let bg: Vec<VertexId> = t.background_sinks.iter().map(|s| s.vertex).collect();
    assert_eq!(bg, vec![VertexId(TIMER)]);

    // Without the rule (the runtime waited on by only two threads) the timer, reached
    // through the runtime thread, is the top sink: what the rule prevents.
    let few = vertices(&[
        (VertexKind::Thread, 1, 30 * S, S / 4),
        (VertexKind::Thread, 1, 40 * MS, 19 * S / 10),
        (VertexKind::Thread, 1, 1_960 * MS, 40 * MS),
        (VertexKind::Disk { device: None }, 0, 0, 0),
        (VertexKind::Timer, 0, 0, 0),
    ]);
    let t = run(&few, &es);
    assert_eq!(t.sinks.first().map(|s| s.vertex), Some(VertexId(TIMER)));
}

#[test]
fn a_stage_fed_by_other_threads_is_no_brief_stopper() {
    // The JVM pipeline's shape: nine threads wait on the sync thread 0.48 ms at a time,
    // 2.7 % of their waiting, as a safepoint's waiters do; but the sync thread's own
    // waits end by the threads that queue requests for it (and by the disk), not by a
    // timer: every request passes through it.
    const WAITERS: usize = 0;
    const FEEDERS: usize = 2;
    let vs = vertices(&[
        (VertexKind::SimilarThreads, 9, 60 * S, S),
        (VertexKind::Thread, 1, 1_800 * MS, 200 * MS),
        (VertexKind::SimilarThreads, 4, 8 * S, S),
        (VertexKind::Disk { device: None }, 0, 0, 0),
    ]);
    let sync = 1;
    let es = edges(&[
        (WAITERS, sync, 1_600 * MS, 3_300, 1_600 * MS),
        (sync, FEEDERS, 1_200 * MS, 3_000, 1_200 * MS),
        (sync, 3, 600 * MS, 3_000, 600 * MS),
        (FEEDERS, WAITERS, 8 * S, 4_000, 8 * S),
    ]);
    assert!(pauses::find(&vs, &es).is_empty());
    // The same waits on a thread that sleeps on a timer in between: a stopper.
    let vs2 = vertices(&[
        (VertexKind::SimilarThreads, 9, 60 * S, S),
        (VertexKind::Thread, 1, 1_800 * MS, 200 * MS),
        (VertexKind::Timer, 0, 0, 0),
    ]);
    let es2 = edges(&[
        (WAITERS, sync, 1_600 * MS, 3_300, 1_600 * MS),
        (sync, 2, 1_800 * MS, 3_000, 1_800 * MS),
    ]);
    assert_eq!(pauses::find(&vs2, &es2).len(), 1);
}
