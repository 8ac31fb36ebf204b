//! Small leaks out of a knot (trimmed before knots are identified) and timer sinks of
//! background sleepers (set apart from the findings).

use super::{no_merge, run, v};
use crate::{Findings, VertexId, VertexKind};
use causeway_format::{SoftirqVec, Tables, TaskState, Waker};
use causeway_testkit::synth::Synth;

fn ids(r: &Findings, tids: &[u32]) -> Vec<VertexId> {
    let mut v: Vec<VertexId> = tids.iter().map(|&t| v(r, t)).collect();
    v.sort_unstable();
    v
}

/// Threads 1 and 2 hand work back and forth for 20 periods of 100 ns (each waits 40 of
/// every 100 for the other); thread 1 also waits `leak` ns per period for thread 3,
/// which never waits.
fn pair_with_leak(leak: u64) -> Synth {
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .switch(0, 2, 0, TaskState::RUNNABLE, 3);
    for k in 0..20u64 {
        let t = k * 100;
        s.wait_for((1, 0), t + 5, (2, 1), t + 45);
        s.wait_for((2, 1), t + 50, (1, 0), t + 90);
        if leak > 0 {
            s.wait_for((1, 0), t + 91, (3, 2), t + 91 + leak);
        }
    }
    s.switch(2_100, 2, 3, TaskState::RUNNABLE, 0);
    s
}

/// A light edge out of a heavy loop (over the 1% noise floor, under 5% of the loop's
/// weight and under the threshold) is trimmed: the loop is the knot, and the edge is
/// listed with it. Without trimming the same graph has no knot at all.
#[test]
fn small_leak_is_trimmed_and_listed() {
    let s = pair_with_leak(2);
    let r = run(&s, &Tables::default(), 3, &no_merge());
    let (a, c) = (v(&r, 1), v(&r, 3));
    let leak = r
        .edges
        .iter()
        .find(|e| e.from == a && e.to == c)
        .expect("1 -> 3");
    assert!(
        leak.weight >= r.quality.min_edge,
        "the leak is above the floor"
    );
    assert_eq!(r.knots.len(), 1, "{:#?}", r.knots);
    assert_eq!(r.knots[0].vertices, ids(&r, &[1, 2]));
    assert_eq!(r.knots[0].leaks, vec![leak.id]);

    let untrimmed = crate::Options {
        leak_fraction: 0.0,
        ..no_merge()
    };
    let r = run(&s, &Tables::default(), 3, &untrimmed);
    assert!(r.knots.is_empty(), "{:#?}", r.knots);
    assert_eq!(r.sinks[0].vertex, v(&r, 3));
}

/// A way out that weighs more than the leak fraction of the loop is kept, and so is
/// one over the refinement threshold, however large the fraction allowed: the loop
/// really waits on something outside it.
#[test]
fn heavy_exit_is_kept() {
    // 8 ns per period: 160 ns, 10% of the loop's 1,600 ns.
    let r = run(&pair_with_leak(8), &Tables::default(), 3, &no_merge());
    let c = v(&r, 3);
    assert!(r.knots.is_empty(), "{:#?}", r.knots);
    assert_eq!(r.sinks[0].vertex, c);
    let opts = crate::Options {
        leak_fraction: 1.0,
        threshold_fraction: 0.05,
        ..no_merge()
    };
    let r = run(&pair_with_leak(8), &Tables::default(), 3, &opts);
    assert!(r.knots.is_empty(), "over the threshold: {:#?}", r.knots);
}

/// Thread `tid` on `cpu` sleeps `from..to` and is woken by the timer softirq.
fn timer_sleep(s: &mut Synth, (tid, cpu): (u32, u32), from: u64, to: u64) {
    s.switch(from, cpu, tid, TaskState::INTERRUPTIBLE, 0)
        .wakeup(
            to,
            cpu,
            tid,
            0,
            Waker::Softirq {
                vec: SoftirqVec::TIMER,
            },
        )
        .switch(to + 1, cpu, 0, TaskState::RUNNABLE, tid);
}

/// A thread that only sleeps on a timer while a loop of workers does the work is a
/// background sleeper: its timer sink goes to `background_sinks`, and the knot stays
/// the finding. A worker's own sleep (others wait for it) keeps the timer a sink.
#[test]
fn background_timer_sleeper_is_set_apart() {
    let mut s = pair_with_leak(0);
    s.switch(0, 3, 0, TaskState::RUNNABLE, 4);
    for k in 0..20u64 {
        timer_sleep(&mut s, (4, 3), k * 100 + 2, k * 100 + 99);
    }
    let r = run(&s, &Tables::default(), 4, &no_merge());
    assert_eq!(r.knots[0].vertices, ids(&r, &[1, 2]));
    let timer = r
        .vertices
        .iter()
        .find(|x| x.kind == VertexKind::Timer)
        .expect("timer")
        .id;
    assert!(r.sinks.iter().all(|x| x.vertex != timer), "{:#?}", r.sinks);
    assert_eq!(r.background_sinks.len(), 1);
    assert_eq!(r.background_sinks[0].vertex, timer);

    // Thread 5 waits for sleeper 4 (it wakes 5 after each sleep): 4 is a worker now.
    let mut s = pair_with_leak(0);
    s.switch(0, 3, 0, TaskState::RUNNABLE, 4)
        .switch(0, 4, 0, TaskState::RUNNABLE, 5);
    for k in 0..20u64 {
        timer_sleep(&mut s, (4, 3), k * 100 + 2, k * 100 + 90);
        s.wait_for((5, 4), k * 100 + 3, (4, 3), k * 100 + 95);
    }
    let r = run(&s, &Tables::default(), 5, &no_merge());
    let timer = r
        .vertices
        .iter()
        .find(|x| x.kind == VertexKind::Timer)
        .expect("timer")
        .id;
    assert!(r.background_sinks.is_empty(), "{:#?}", r.background_sinks);
    assert!(r.sinks.iter().any(|x| x.vertex == timer));
}

/// The threshold a leak's direct waiting is held against is a share of one timeline:
/// a merged vertex's waiting is taken per thread. Sixteen connection handlers that each
/// wait 75 ms for `nic lo` (1.2 s together, over the 0.86 s threshold) leave a small
/// leak, trimmed, and the loop is a knot; one thread waiting 1.2 s is a real exit.
#[test]
fn a_merged_vertex_s_leak_is_judged_per_thread() {
    use super::hand::{STORE_LOOP_EDGES, edges, limits, store_loop_vertices, vertex, with_threads};
    use crate::findings::EdgeKind;
    use crate::knots::find;
    use causeway_format::DurationNs;
    let graph = |handlers: u32| {
        let mut vs = store_loop_vertices(1.0);
        vs[1] = with_threads(vs[1].clone(), handlers);
        vs.push(vertex(
            4,
            VertexKind::Nic { interface: None },
            0.0,
            0.0,
            0.0,
        ));
        let mut list = STORE_LOOP_EDGES.to_vec();
        list.push((1, 4, EdgeKind::Wait, 1.3, 1.2));
        find(&vs, &edges(&list), &limits(), DurationNs(4_300_000_000))
    };
    let t = graph(16);
    assert_eq!(t.knots.len(), 1, "{:#?}", t.sinks);
    assert_eq!(t.knots[0].vertices, vec![VertexId(0), VertexId(3)]);
    let t = graph(1);
    assert!(t.knots.is_empty(), "{:#?}", t.knots);
}
