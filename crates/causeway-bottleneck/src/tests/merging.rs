//! Merging similar threads and short-term threads, and determinism.

use super::{no_merge, run, tables, v};
use crate::{EdgeKind, Options, Shape, VertexKind, similar_name};
use causeway_format::TaskState;
use causeway_testkit::synth::Synth;

/// Four workers pass one lock around: worker k is woken by worker k−1, runs 20 ns and
/// wakes the next after 10 ns, so two run at any time.
fn lock_ring(steps: u64) -> Synth {
    let mut s = Synth::new();
    lock_ring_into(&mut s, steps);
    s
}

/// [`lock_ring`] appended to `s`.
fn lock_ring_into(s: &mut Synth, steps: u64) {
    s.switch(0, 0, 0, TaskState::RUNNABLE, 100);
    s.switch(20, 0, 100, TaskState::INTERRUPTIBLE, 0);
    for k in 1..=steps {
        let (w, p) = ((k % 4) as u32, ((k - 1) % 4) as u32);
        let t = 10 * k;
        s.wake_by(t, p, 100 + p, 100 + w)
            .switch(t + 1, w, 0, TaskState::RUNNABLE, 100 + w)
            .switch(t + 20, w, 100 + w, TaskState::INTERRUPTIBLE, 0);
    }
}

fn worker_tables() -> causeway_format::Tables {
    tables(&[
        (100, 100, "worker-0"),
        (101, 100, "worker-1"),
        (102, 100, "worker-2"),
        (103, 100, "worker-3"),
    ])
}

#[test]
fn similar_threads_merge_into_a_self_loop_knot() {
    let r = run(&lock_ring(200), &worker_tables(), 4, &Options::default());
    let id = v(&r, 100);
    let vx = &r.vertices[id];
    assert_eq!(vx.kind, VertexKind::SimilarThreads);
    assert_eq!(vx.threads.len(), 4);
    // Labelled `worker-* ×4 threads` by the report layer.
    assert_eq!(similar_name(&vx.threads[0].comm), "worker-");
    assert_eq!(r.knots.len(), 1, "{:#?}", r.knots);
    let k = &r.knots[0];
    assert_eq!(k.vertices, vec![id]);
    assert_eq!(k.shape, Shape::Single);
    let e = &r.edges[k.edges[0]];
    assert_eq!((e.from, e.to), (id, id), "self-loop kept");
    // Its advice says the threads wait for each other: the knot's heaviest thread wait
    // is that self-loop (the sentence is the report layer's, tested there).
    assert_eq!(e.kind, EdgeKind::Wait);
}

#[test]
fn no_merge_keeps_the_raw_cycle() {
    let r = run(&lock_ring(200), &worker_tables(), 4, &no_merge());
    assert_eq!(r.vertices.iter().filter(|v| v.kind.is_thread()).count(), 4);
    assert_eq!(r.knots.len(), 1);
    assert_eq!(r.knots[0].vertices.len(), 4);
    assert_eq!(r.knots[0].shape, Shape::Cycle);
    assert!(r.edges.iter().all(|e| e.from != e.to));
}

/// Different names do not merge.
#[test]
fn different_names_stay_apart() {
    let t = tables(&[
        (100, 100, "reader"),
        (101, 100, "writer"),
        (102, 100, "worker-2"),
        (103, 100, "worker-3"),
    ]);
    let r = run(&lock_ring(200), &t, 4, &Options::default());
    assert_eq!(r.vertices.iter().filter(|v| v.kind.is_thread()).count(), 3);
    assert_eq!(r.vertices[v(&r, 102)].threads.len(), 2);
}

/// Short-lived threads spawned one after another by a dispatcher become one virtual
/// thread that waits for the dispatcher between them.
#[test]
fn short_term_threads_become_one_virtual_thread() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 10);
    // Dispatcher 10 spawns tasks 200.. every 100 ns; each runs 30 ns and exits.
    for k in 0..10u32 {
        let t = 100 * u64::from(k) + 50;
        let child = 200 + k;
        s.fork(t, 0, (10, 10), (child, 10))
            .wakeup_new(t, 0, 10, child)
            .switch(t + 1, 1, 0, TaskState::RUNNABLE, child)
            .exit(t + 30, 1, child)
            .switch(t + 31, 1, child, TaskState::DEAD, 0);
    }
    s.switch(1_100, 0, 10, TaskState::RUNNABLE, 0);
    let mut names: Vec<(u32, u32, &str)> = vec![(10, 10, "dispatcher")];
    let task_names: Vec<String> = (0..10).map(|k| format!("task-{k}")).collect();
    for (k, n) in task_names.iter().enumerate() {
        names.push((200 + k as u32, 10, n.as_str()));
    }
    let r = run(&s, &tables(&names), 2, &Options::default());
    let id = v(&r, 200);
    assert_eq!(r.vertices[id].kind, VertexKind::ShortTermThreads);
    assert_eq!(r.vertices[id].threads.len(), 10);
    assert_eq!(v(&r, 209), id);
    // Each task lives from its fork to its final switch-out (31 ns), so nine gaps of
    // 69 ns, each ended by the dispatcher spawning the next.
    let e = r
        .edges
        .iter()
        .find(|e| e.from == id && e.to == v(&r, 10))
        .expect("virtual thread waits for the dispatcher");
    assert_eq!(e.weight.0, 9 * 69);
    let raw = run(&s, &tables(&names), 2, &no_merge());
    assert_eq!(
        raw.vertices.iter().filter(|v| v.kind.is_thread()).count(),
        11
    );
}

/// The report is the same with one worker thread or two.
#[test]
fn output_does_not_depend_on_thread_count() {
    let s = lock_ring(400);
    let t = worker_tables();
    let once = |n: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap();
        pool.install(|| run(&s, &t, 4, &no_merge()))
    };
    let one = once(1);
    assert_eq!(one, once(2));
    assert_eq!(one, once(3));
}

/// The lock ring again, each worker now a single-threaded process forked by one
/// parent (a pre-forked server): the processes merge as threads of a pool do, into a
/// self-loop knot. Forked by different parents they stay apart.
#[test]
fn similar_processes_of_one_parent_merge() {
    let named = |parent_of: &dyn Fn(u32) -> u32| {
        // The forks come first, so each worker's first incarnation is the forked one.
        let mut s = Synth::new();
        for w in 100..104 {
            let p = parent_of(w);
            s.fork(0, 0, (p, p), (w, w));
        }
        lock_ring_into(&mut s, 200);
        let t = tables(&[
            (90, 90, "pl-main"),
            (91, 91, "other-main"),
            (100, 100, "pl-worker"),
            (101, 101, "pl-worker"),
            (102, 102, "pl-worker"),
            (103, 103, "pl-worker"),
        ]);
        run(&s, &t, 4, &Options::default())
    };
    let r = named(&|_| 90);
    let id = v(&r, 100);
    assert_eq!(r.vertices[id].kind, VertexKind::SimilarProcesses);
    assert_eq!(
        r.vertices[id].threads.len(),
        4,
        "{:?}",
        r.vertices[id].threads
    );
    assert_eq!(r.knots[0].vertices, vec![id]);
    // Two parents: two pairs, never one vertex of four.
    let r = named(&|w| if w < 102 { 90 } else { 91 });
    assert_ne!(v(&r, 100), v(&r, 102));
    assert_eq!(v(&r, 100), v(&r, 101));
    assert_eq!(r.vertices[v(&r, 102)].threads.len(), 2);
}
