//! The builder's write → read edges on kernel objects and per-item splits of batching
//! loops, on synthetic traces with hand-made system calls (descriptor, object
//! identity and kind as the recorder writes them).

use crate::graph::{EdgeKind, EventGraph, Strength, Vertex, VertexId, VertexKind};
use crate::oracle::{AutoOracle, DecidedBy};
use crate::result::Case;
use crate::{Options, build, diagnose};
use causeway_format::{Header, SoftirqVec, TaskState, Tid, Timestamp, Waker};
use causeway_model::Trace;
use causeway_stacks::SyscallSpan;
use causeway_testkit::synth::Synth;

const MS: u64 = 1_000_000;
const SOCKET: u64 = 2;
const PIPE: u64 = 1;
const ANON: u64 = 3;
const READ: u32 = 0;
const WRITE: u32 = 1;
const EPOLL_WAIT: u32 = 232;

/// A finished system call of `tid` on descriptor `fd` of object `obj`.
fn call(
    tid: u32,
    nr: u32,
    (start, end): (u64, u64),
    ret: i64,
    fd_obj_kind: [u64; 3],
) -> SyscallSpan {
    SyscallSpan {
        tid: Tid(tid),
        nr,
        args: fd_obj_kind,
        start: Timestamp(start),
        end: Some(Timestamp(end)),
        ret: Some(ret),
        stack: None,
        stack_from_switch: false,
    }
}

/// Threads `(tid, tgid, name)`.
fn trace(s: &Synth, names: &[(u32, u32, &str)]) -> Trace {
    let tables = causeway_testkit::synth::named_tables(names);
    Trace::from_events(tables, Header::synthetic(2), &s.events())
}

/// The vertex of thread `tid` at `ts`.
fn at(t: &Trace, g: &EventGraph, tid: u32, ts: u64) -> VertexId {
    let ti = t.model().thread_index_at(Tid(tid), Timestamp(ts)).unwrap();
    g.vertex_at(ti, Timestamp(ts)).unwrap()
}

/// Data edges as `(from, to, strength)`.
fn data_edges(g: &EventGraph) -> Vec<(VertexId, VertexId, Strength)> {
    g.edges()
        .iter()
        .filter(|e| e.kind == EdgeKind::Data)
        .map(|e| (e.from, e.to, e.strength))
        .collect()
}

/// Writer 1 (process 10) and reader 2 (process 20) both run from 0; 1 blocks at 500,
/// 2 at 900.
fn two_runners() -> Trace {
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .switch(500, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .switch(900, 1, 2, TaskState::INTERRUPTIBLE, 0);
    trace(&s, &[(1, 10, "writer"), (2, 20, "reader")])
}

#[test]
fn a_read_that_found_the_data_queued_is_linked_to_the_write_strongly() {
    let t = two_runners();
    let calls = [
        call(1, WRITE, (100, 110), 16, [3, 77, PIPE]),
        call(2, READ, (200, 210), 16, [4, 77, PIPE]),
    ];
    let g = build(&t, &calls, &Options::default());
    assert_eq!(
        data_edges(&g),
        vec![(at(&t, &g, 1, 100), at(&t, &g, 2, 200), Strength::Strong)]
    );
    assert_eq!(g.counts().data_edges, 1);
    // The edge is dated when the read took the data.
    let e = g.edges().iter().find(|e| e.kind == EdgeKind::Data).unwrap();
    assert_eq!(e.ts, Timestamp(200));

    // A read of another object, a regular file, a failed read or a read before the
    // write get nothing.
    for calls in [
        [
            call(1, WRITE, (100, 110), 16, [3, 77, PIPE]),
            call(2, READ, (200, 210), 16, [4, 78, PIPE]),
        ],
        [
            call(1, WRITE, (100, 110), 16, [3, 77, 4]),
            call(2, READ, (200, 210), 16, [4, 77, 4]),
        ],
        [
            call(1, WRITE, (100, 110), 16, [3, 77, PIPE]),
            call(2, READ, (200, 210), -11, [4, 77, PIPE]),
        ],
        [
            call(1, WRITE, (300, 310), 16, [3, 77, PIPE]),
            call(2, READ, (200, 210), 16, [4, 77, PIPE]),
        ],
    ] {
        let g = build(&t, &calls, &Options::default());
        assert!(data_edges(&g).is_empty(), "{calls:?}");
    }
}

#[test]
fn a_socket_read_takes_the_other_ends_writes_not_its_own() {
    let t = two_runners();
    // One identity for both ends of the connection. The reader's own send on its end
    // is for the writer; the read takes what the writer sent.
    let calls = [
        call(2, WRITE, (100, 110), 16, [4, 55, SOCKET]),
        call(1, WRITE, (150, 160), 16, [3, 55, SOCKET]),
        call(2, READ, (200, 210), 16, [4, 55, SOCKET]),
    ];
    let g = build(&t, &calls, &Options::default());
    assert_eq!(
        data_edges(&g),
        vec![(at(&t, &g, 1, 150), at(&t, &g, 2, 200), Strength::Strong)]
    );
    // Only its own send queued: nothing to link (it stays queued for the writer).
    let g = build(
        &t,
        &[
            call(2, WRITE, (100, 110), 16, [4, 55, SOCKET]),
            call(2, READ, (200, 210), 16, [4, 55, SOCKET]),
        ],
        &Options::default(),
    );
    assert!(data_edges(&g).is_empty());
    // An eventfd is one counter for every holder: the same descriptor both ways.
    let g = build(
        &t,
        &[
            call(1, WRITE, (100, 110), 8, [5, 66, ANON]),
            call(2, READ, (200, 210), 8, [5, 66, ANON]),
        ],
        &Options::default(),
    );
    assert_eq!(data_edges(&g).len(), 1);
}

#[test]
fn one_read_of_two_threads_data_gets_a_weak_edge_from_each() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .switch(300, 0, 1, TaskState::INTERRUPTIBLE, 3)
        .switch(600, 0, 3, TaskState::INTERRUPTIBLE, 0)
        .switch(900, 1, 2, TaskState::INTERRUPTIBLE, 0);
    let t = trace(&s, &[(1, 10, "w1"), (3, 10, "w3"), (2, 20, "reader")]);
    let calls = [
        call(1, WRITE, (100, 110), 8, [3, 77, PIPE]),
        call(3, WRITE, (400, 410), 8, [3, 77, PIPE]),
        call(2, READ, (700, 710), 16, [4, 77, PIPE]),
    ];
    let g = build(&t, &calls, &Options::default());
    let mut got = data_edges(&g);
    got.sort_by_key(|x| x.0);
    let to = at(&t, &g, 2, 700);
    assert_eq!(
        got,
        vec![
            (at(&t, &g, 1, 100), to, Strength::Weak),
            (at(&t, &g, 3, 400), to, Strength::Weak)
        ]
    );
    // A read of 8 bytes takes only the oldest write: strong, from thread 1.
    let calls = [
        call(1, WRITE, (100, 110), 8, [3, 77, PIPE]),
        call(3, WRITE, (400, 410), 8, [3, 77, PIPE]),
        call(2, READ, (700, 710), 8, [4, 77, PIPE]),
    ];
    let g = build(&t, &calls, &Options::default());
    assert_eq!(
        data_edges(&g),
        vec![(at(&t, &g, 1, 100), to, Strength::Strong)]
    );
}

/// Reader 2 blocks in a read from 50 to 260; writer 1 writes at 240..250 and the wait
/// ends at 245 by `waker`.
fn blocked_read(waker: Waker) -> Trace {
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .switch(50, 1, 2, TaskState::INTERRUPTIBLE, 0)
        .wakeup(245, 0, 2, 1, waker)
        .switch(255, 1, 0, TaskState::RUNNABLE, 2)
        .switch(500, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .switch(900, 1, 2, TaskState::INTERRUPTIBLE, 0);
    trace(&s, &[(1, 10, "writer"), (2, 20, "reader")])
}

#[test]
fn a_read_woken_by_the_writer_keeps_only_the_wakeup_and_one_woken_by_an_interrupt_gets_data() {
    let calls = [
        call(1, WRITE, (240, 250), 16, [3, 55, SOCKET]),
        call(2, READ, (40, 260), 16, [4, 55, SOCKET]),
    ];
    let t = blocked_read(Waker::Thread { tid: Tid(1) });
    let g = build(&t, &calls, &Options::default());
    assert!(data_edges(&g).is_empty());
    assert!(g.edges().iter().any(|e| e.kind == EdgeKind::Wakeup));

    // A TCP receive is woken from the network softirq, which the graph leaves out: the
    // data edge links the write to the wait it ended.
    let t = blocked_read(Waker::Softirq {
        vec: SoftirqVec::NET_RX,
    });
    let g = build(&t, &calls, &Options::default());
    let got = data_edges(&g);
    assert_eq!(got.len(), 1, "{got:?}");
    let (from, to, strength) = got[0];
    assert_eq!(strength, Strength::Strong);
    assert_eq!(from, at(&t, &g, 1, 240));
    let w = g.vertex(to).unwrap();
    assert_eq!(w.kind, VertexKind::Wait);
    assert_eq!(w.span.end, Timestamp(245));
}

/// Event loop 5 (process 50) waits in `epoll_wait` from 50 until client A (1) wakes
/// it at 1000; clients A, B (2) and C (3) (process 10) have each sent a request on
/// their own connection (objects 101..103). The loop reads A, then B, whose request
/// takes 30 ms, then C, and waits again.
fn event_loop() -> (Trace, Vec<SyscallSpan>, u64) {
    let c_read = 1510 + 30 * MS;
    let end = c_read + 1000;
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 5)
        .switch(0, 1, 0, TaskState::RUNNABLE, 1)
        .switch(50, 0, 5, TaskState::INTERRUPTIBLE, 0)
        .wakeup(1000, 1, 5, 0, Waker::Thread { tid: Tid(1) })
        .switch(1006, 1, 1, TaskState::INTERRUPTIBLE, 2)
        .switch(1010, 0, 0, TaskState::RUNNABLE, 5)
        .switch(1010, 1, 2, TaskState::INTERRUPTIBLE, 3)
        .switch(1020, 1, 3, TaskState::INTERRUPTIBLE, 0)
        .switch(end, 0, 5, TaskState::INTERRUPTIBLE, 0);
    let t = trace(
        &s,
        &[(5, 50, "loop"), (1, 10, "a"), (2, 10, "b"), (3, 10, "c")],
    );
    let calls = vec![
        call(5, EPOLL_WAIT, (40, 1010), 3, [4, 0, 0]),
        call(1, WRITE, (995, 1005), 16, [3, 101, SOCKET]),
        call(2, WRITE, (1007, 1009), 16, [4, 102, SOCKET]),
        call(3, WRITE, (1011, 1013), 16, [5, 103, SOCKET]),
        call(5, READ, (1100, 1110), 16, [7, 101, SOCKET]),
        call(5, READ, (1500, 1510), 16, [8, 102, SOCKET]),
        call(5, READ, (c_read, c_read + 10), 16, [9, 103, SOCKET]),
    ];
    (t, calls, c_read)
}

#[test]
fn an_event_loops_batch_is_split_per_item_and_each_item_keeps_its_input() {
    let (t, calls, c_read) = event_loop();
    let g = build(&t, &calls, &Options::default());
    assert_eq!(g.counts().batch_splits, 3);
    let loop_ti = t.model().thread_index_at(Tid(5), Timestamp(1100)).unwrap();
    let parts: Vec<&Vertex> = g
        .thread_vertices(loop_ti)
        .iter()
        .filter_map(|&v| g.vertex(v))
        .filter(|v| v.kind == VertexKind::Exec && v.span.start >= Timestamp(1000))
        .collect();
    let starts: Vec<u64> = parts.iter().map(|v| v.span.start.0).collect();
    assert_eq!(starts, vec![1000, 1100, 1500, c_read]);
    // Each item has the strong data edge of its client's request; the item before it
    // only a weak edge.
    let item_b = at(&t, &g, 5, 1500);
    let into_b: Vec<(EdgeKind, Strength, u32)> = g
        .incoming(item_b)
        .map(|(_, e)| (e.kind, e.strength, g.vertex(e.from).unwrap().tid.0))
        .collect();
    assert_eq!(into_b.len(), 2, "{into_b:?}");
    assert!(into_b.contains(&(EdgeKind::Data, Strength::Strong, 2)));
    assert!(into_b.contains(&(EdgeKind::BatchItem, Strength::Weak, 5)));

    // B's item is the long run: its slice goes to B's request, by the graph.
    let d = diagnose(&g, item_b, &Options::default(), &mut AutoOracle);
    let f = &d.findings[0];
    assert_eq!(f.case, Case::LongRunning);
    let step = &f.slice.as_ref().unwrap().steps[1];
    assert_eq!(g.vertex(step.vertex).unwrap().tid, Tid(2));
    assert_eq!(step.kind, Some(EdgeKind::Data));
    assert_eq!(step.decided, Some(DecidedBy::Graph));
    assert_eq!(d.queries(), 0);

    // Without the split the long run is the whole batch: it took A's, B's and C's
    // requests, the question is ambiguous and the heuristic's latest input is C's,
    // which came after the work.
    let opts = Options {
        split_batches: false,
        ..Options::default()
    };
    let g = build(&t, &calls, &opts);
    assert_eq!(g.counts().batch_splits, 0);
    let whole = at(&t, &g, 5, 1500);
    assert_eq!(g.vertex(whole).unwrap().span.start, Timestamp(1000));
    let d = diagnose(&g, whole, &opts, &mut AutoOracle);
    let step = &d.findings[0].slice.as_ref().unwrap().steps[1];
    assert_eq!(g.vertex(step.vertex).unwrap().tid, Tid(3));
    assert_eq!(d.queries(), 1);
}

#[test]
fn a_receive_loop_is_split_at_each_new_message_and_a_blocking_wait_ends_it() {
    // Thread 2 reads a message (blocking: thread 1's write wakes it at 245), computes,
    // then reads two more that thread 3 and thread 1 queued meanwhile, and the rest of
    // the second one (no new data: no cut).
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .switch(50, 1, 2, TaskState::INTERRUPTIBLE, 3)
        .wakeup(245, 0, 2, 1, Waker::Thread { tid: Tid(1) })
        .switch(300, 1, 3, TaskState::INTERRUPTIBLE, 2)
        .switch(500, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .switch(5000, 1, 2, TaskState::INTERRUPTIBLE, 0);
    let t = trace(&s, &[(1, 10, "w1"), (3, 30, "w3"), (2, 20, "reader")]);
    let calls = [
        call(1, WRITE, (240, 250), 16, [3, 9, PIPE]),
        call(2, READ, (40, 310), 16, [4, 9, PIPE]),
        call(3, WRITE, (280, 290), 16, [5, 9, PIPE]),
        call(1, WRITE, (400, 410), 32, [3, 9, PIPE]),
        call(2, READ, (1000, 1010), 16, [4, 9, PIPE]),
        call(2, READ, (2000, 2010), 16, [4, 9, PIPE]),
        call(2, READ, (2100, 2110), 16, [4, 9, PIPE]),
    ];
    let g = build(&t, &calls, &Options::default());
    assert_eq!(g.counts().batch_splits, 2);
    let reader = t.model().thread_index_at(Tid(2), Timestamp(1000)).unwrap();
    let starts: Vec<u64> = g
        .thread_vertices(reader)
        .iter()
        .filter_map(|&v| g.vertex(v))
        .filter(|v| v.kind == VertexKind::Exec && v.span.start.0 >= 245)
        .map(|v| v.span.start.0)
        .collect();
    assert_eq!(starts, vec![245, 1000, 2000]);
    let from = |ts: u64| {
        let (_, e) = g
            .incoming(at(&t, &g, 2, ts))
            .find(|(_, e)| e.kind == EdgeKind::Data)
            .unwrap();
        g.vertex(e.from).unwrap().tid.0
    };
    assert_eq!(from(1000), 3);
    assert_eq!(from(2000), 1);
}

#[test]
fn a_wait_ended_by_another_threads_data_is_a_normal_case_for_the_similar_vertex() {
    use crate::find_similar;
    use crate::graph::{BlockType, Edge, WokenBy};
    use causeway_format::DurationNs;
    use causeway_model::TimeSpan;
    let wait = |thread: u32, start: u64, end: u64, by: WokenBy| Vertex {
        thread,
        tid: Tid(100 + thread),
        tgid: None,
        span: TimeSpan {
            start: Timestamp(start),
            end: Timestamp(end),
        },
        kind: VertexKind::Wait,
        block: BlockType::Wait,
        running: DurationNs(0),
        runnable: DurationNs(0),
        calls: Vec::new(),
        yields: 0,
        wait_call: Some(45),
        stack: None,
        woken_by: Some(by),
        waits_on: None,
        samples: Vec::new(),
        complete: true,
    };
    let mut writer = wait(1, 0, 5, WokenBy::Timer);
    writer.kind = VertexKind::Exec;
    writer.block = BlockType::Running;
    writer.wait_call = None;
    writer.woken_by = None;
    let net = WokenBy::Interrupt {
        number: 3,
        softirq: true,
    };
    // Thread 0 receives twice, both waits ended by the network softirq; thread 1's
    // write ended the first one.
    let vs = vec![wait(0, 0, 10, net), wait(0, 20, 30 * MS, net), writer];
    let data = |strength| Edge {
        from: VertexId(2),
        to: VertexId(0),
        kind: EdgeKind::Data,
        strength,
        ts: Timestamp(10),
    };
    let g = EventGraph::from_parts(vs.clone(), vec![data(Strength::Strong)]);
    assert_eq!(
        find_similar(&g, VertexId(1), &Options::default()),
        Some(VertexId(0))
    );
    // Without the data edge (or with only a weak one) nothing says its wait ended
    // normally.
    let g = EventGraph::from_parts(vs.clone(), vec![data(Strength::Weak)]);
    assert_eq!(find_similar(&g, VertexId(1), &Options::default()), None);
    let g = EventGraph::from_parts(vs, Vec::new());
    assert_eq!(find_similar(&g, VertexId(1), &Options::default()), None);
}
