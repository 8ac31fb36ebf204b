//! Algorithm 1 on hand-built graphs (one test per branch), the similarity signature,
//! answers files, and the builder on synthetic traces (peer-set splits, timer and
//! interrupt wake-ups).

use crate::graph::{
    BlockType, Call, Edge, EdgeKind, EventGraph, Strength, Vertex, VertexId, VertexKind, WokenBy,
};
use crate::oracle::{
    Answer, AutoOracle, Choice, DecidedBy, QuestionKind, ReplayOracle, parse_answers,
};
use crate::result::{Case, HopRule, SliceEnd};
use crate::{Options, Signature, build, diagnose, find_similar};
use causeway_format::{DurationNs, Header, SoftirqVec, StackId, TaskState, Tid, Timestamp, Waker};
use causeway_model::{StackRef, TimeSpan, Trace};
use causeway_testkit::synth::Synth;

const MS: u64 = 1_000_000;

fn vx(thread: u32, start: u64, end: u64, kind: VertexKind, block: BlockType) -> Vertex {
    let d = end - start;
    Vertex {
        thread,
        tid: Tid(100 + thread),
        tgid: None,
        span: TimeSpan {
            start: Timestamp(start),
            end: Timestamp(end),
        },
        kind,
        block,
        running: DurationNs(if kind == VertexKind::Exec { d } else { 0 }),
        runnable: DurationNs(0),
        calls: Vec::new(),
        yields: 0,
        wait_call: None,
        stack: None,
        woken_by: None,
        waits_on: None,
        samples: Vec::new(),
        complete: true,
    }
}

fn exec(thread: u32, start: u64, end: u64) -> Vertex {
    vx(thread, start, end, VertexKind::Exec, BlockType::Running)
}

fn wait(thread: u32, start: u64, end: u64, by: WokenBy) -> Vertex {
    let mut v = vx(thread, start, end, VertexKind::Wait, BlockType::Wait);
    v.woken_by = Some(by);
    v.wait_call = Some(7);
    v
}

fn by(thread: u32) -> WokenBy {
    WokenBy::Thread {
        tid: Tid(100 + thread),
    }
}

fn e(from: u32, to: u32, kind: EdgeKind, strength: Strength, ts: u64) -> Edge {
    Edge {
        from: VertexId(from),
        to: VertexId(to),
        kind,
        strength,
        ts: Timestamp(ts),
    }
}

fn strong(from: u32, to: u32, kind: EdgeKind, ts: u64) -> Edge {
    e(from, to, kind, Strength::Strong, ts)
}

/// Vertices are given per thread in time order; ids are their positions.
fn graph(v: Vec<Vertex>, edges: Vec<Edge>) -> EventGraph {
    EventGraph::from_parts(v, edges)
}

#[test]
fn long_running_slices_back_to_the_input_through_strong_edges() {
    // Thread 0 (sender): runs, sleeps (timer), runs and sends. Thread 1 (loop): waits
    // for the input, then computes for 60 ms.
    let g = graph(
        vec![
            exec(0, 0, 10),                   // 0
            wait(0, 10, 100, WokenBy::Timer), // 1
            exec(0, 100, 110),                // 2: sends
            wait(1, 50, 105, by(0)),          // 3
            exec(1, 105, 105 + 60 * MS),      // 4: the long run
        ],
        vec![
            strong(0, 1, EdgeKind::Timer, 100),
            strong(1, 2, EdgeKind::Resume, 100),
            strong(2, 3, EdgeKind::Wakeup, 105),
            strong(3, 4, EdgeKind::Resume, 105),
        ],
    );
    let d = diagnose(&g, VertexId(4), &Options::default(), &mut AutoOracle);
    assert_eq!(d.findings.len(), 1);
    let f = &d.findings[0];
    assert_eq!(f.case, Case::LongRunning);
    let s = f.slice.as_ref().unwrap();
    let path: Vec<u32> = s.steps.iter().map(|x| x.vertex.0).collect();
    assert_eq!(path, vec![4, 3, 2, 1, 0]);
    assert_eq!(s.end, SliceEnd::Timer);
    assert!(
        d.decisions.is_empty(),
        "one strong edge each: nothing to ask"
    );
    assert_eq!(s.steps[2].kind, Some(EdgeKind::Wakeup));
    assert_eq!(s.steps[2].decided, Some(DecidedBy::Graph));
}

#[test]
fn a_weak_edge_is_asked_and_stop_ends_the_slice() {
    let g = graph(
        vec![exec(0, 0, 10), exec(0, 10, 20 * MS)],
        vec![e(0, 1, EdgeKind::PeerSplit, Strength::Weak, 10)],
    );
    let mut replay = ReplayOracle::new(vec![Answer::Stop]);
    let d = diagnose(&g, VertexId(1), &Options::default(), &mut replay);
    let s = d.findings[0].slice.as_ref().unwrap();
    assert_eq!(s.steps.len(), 1);
    assert_eq!(s.end, SliceEnd::Stopped);
    assert_eq!(d.decisions.len(), 1);
    assert_eq!(d.decisions[0].question.kind, QuestionKind::WeakEdge);
    assert_eq!(d.decisions[0].by, DecidedBy::Replayed);
    assert_eq!(d.queries(), 1);

    // The heuristic follows it, then finds no more edges.
    let d = diagnose(&g, VertexId(1), &Options::default(), &mut AutoOracle);
    let s = d.findings[0].slice.as_ref().unwrap();
    assert_eq!(s.steps.len(), 2);
    assert_eq!(s.steps[1].strength, Some(Strength::Weak));
    assert_eq!(s.steps[1].decided, Some(DecidedBy::Heuristic));
    assert_eq!(s.end, SliceEnd::NoIncoming);
}

#[test]
fn several_strong_edges_are_asked_and_the_heuristic_takes_the_most_recent() {
    let g = graph(
        vec![
            exec(0, 0, 5),           // 0: woke the wait early
            exec(1, 0, 9),           // 1: woke it last
            wait(2, 0, 9, by(1)),    // 2
            exec(2, 9, 9 + 30 * MS), // 3
        ],
        vec![
            strong(0, 2, EdgeKind::Wakeup, 5),
            strong(1, 2, EdgeKind::DataFlag, 9),
            strong(2, 3, EdgeKind::Resume, 9),
        ],
    );
    let d = diagnose(&g, VertexId(3), &Options::default(), &mut AutoOracle);
    let q = &d.decisions[0].question;
    assert_eq!(q.kind, QuestionKind::MultipleIncoming);
    assert_eq!(q.candidates.len(), 2);
    assert_eq!(q.candidates[q.suggested].vertex, VertexId(1));
    let s = d.findings[0].slice.as_ref().unwrap();
    assert_eq!(s.steps.last().unwrap().vertex, VertexId(1));

    // A replayed answer overrides it: candidate 1 is the first listed.
    let mut replay = ReplayOracle::new(vec![Answer::Number(1)]);
    let d = diagnose(&g, VertexId(3), &Options::default(), &mut replay);
    let s = d.findings[0].slice.as_ref().unwrap();
    assert_eq!(s.steps.last().unwrap().vertex, VertexId(0));
    assert_eq!(d.decisions[0].choice, Choice::Take { index: 0 });
}

#[test]
fn repeated_yield_without_a_data_flag_asks_for_one_and_stops() {
    let mut spin = exec(0, 0, 40 * MS);
    spin.block = BlockType::Yielding;
    spin.yields = 1000;
    let g = graph(vec![spin.clone(), exec(1, 0, 40 * MS)], vec![]);
    let d = diagnose(&g, VertexId(0), &Options::default(), &mut AutoOracle);
    assert_eq!(d.findings[0].case, Case::RepeatedYield);
    assert_eq!(d.needs_data_flag, Some(VertexId(0)));
    assert!(d.findings[0].compared.is_empty());
}

#[test]
fn repeated_yield_with_a_data_flag_names_the_late_writer() {
    let mut spin = exec(0, 0, 40 * MS);
    spin.block = BlockType::Yielding;
    spin.yields = 1000;
    let g = graph(
        vec![spin, exec(1, 0, 40 * MS)],
        vec![strong(1, 0, EdgeKind::DataFlag, 40 * MS)],
    );
    let d = diagnose(&g, VertexId(0), &Options::default(), &mut AutoOracle);
    assert_eq!(d.needs_data_flag, None);
    let f = &d.findings[0];
    assert_eq!(f.case, Case::RepeatedYield);
    assert_eq!(f.flag_writer, Some(VertexId(1)));
    assert_eq!(f.compared.len(), 1);
    assert_eq!(f.compared[0].thread, 1);
    // The data flag proves the link: not a mere peer.
    assert!(f.compared[0].from_normal_path);
    // The writer was busy the whole time: LongRunning, the culprit.
    assert_eq!(d.findings.len(), 2);
    assert_eq!(d.findings[1].case, Case::LongRunning);
    assert_eq!(d.findings[1].culprit_of, Some(VertexId(0)));
}

#[test]
fn the_late_writer_is_the_last_writer_and_is_compared_before_the_peers() {
    // Thread 0 spins; thread 1 wrote the flag early (an earlier round) and woke the
    // spinner last; thread 2 wrote it last, ending the loop.
    let mut spin = exec(0, 0, 40 * MS);
    spin.block = BlockType::Yielding;
    spin.yields = 500;
    let g = graph(
        vec![spin, exec(1, 0, 40 * MS), exec(2, 0, 40 * MS)],
        vec![
            strong(1, 0, EdgeKind::DataFlag, 2 * MS),
            strong(1, 0, EdgeKind::Wakeup, 3 * MS),
            strong(2, 0, EdgeKind::DataFlag, 40 * MS),
        ],
    );
    let d = diagnose(&g, VertexId(0), &Options::default(), &mut AutoOracle);
    let f = &d.findings[0];
    assert_eq!(f.flag_writer, Some(VertexId(2)));
    let order: Vec<(u32, bool)> = f
        .compared
        .iter()
        .map(|c| (c.thread, c.from_normal_path))
        .collect();
    assert_eq!(order, vec![(2, true), (1, false)]);
    assert_eq!(d.findings[1].vertex, VertexId(2));
}

#[test]
fn the_builder_turns_watchpoint_hits_into_a_data_flag_edge_from_the_write() {
    use causeway_format::{DataFlagAccess, Marker};
    let mut s = Synth::new();
    // Thread 1 spins on a CPU from 0 to 30 ms; thread 2 runs on the other CPU and
    // writes the flag at 25 ms; thread 1 reads it at 26 ms (and again at 27 ms).
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2);
    let hit = |access| Marker::DataFlag {
        addr: 0x4010,
        access,
        ip: 0x1234,
    };
    s.marker(25 * MS, 1, 2, hit(DataFlagAccess::Write));
    s.marker(26 * MS, 0, 1, hit(DataFlagAccess::Read));
    s.marker(27 * MS, 0, 1, hit(DataFlagAccess::Read));
    s.switch(30 * MS, 0, 1, TaskState::RUNNABLE, 0)
        .switch(30 * MS, 1, 2, TaskState::RUNNABLE, 0);
    let t = trace(&s);
    let g = build(&t, &[], &Options::default());
    let flags: Vec<_> = g
        .edges()
        .iter()
        .filter(|e| e.kind == EdgeKind::DataFlag)
        .collect();
    assert_eq!(flags.len(), 1, "one edge: the first read after the write");
    let e = flags[0];
    assert_eq!(e.strength, Strength::Strong);
    assert_eq!(e.ts, Timestamp(26 * MS));
    assert_eq!(g.vertex(e.from).unwrap().tid, Tid(2));
    assert_eq!(g.vertex(e.to).unwrap().tid, Tid(1));
}

#[test]
fn long_wait_compares_the_normal_path_and_recurses_into_the_culprit_of_the_culprit() {
    // A waits on B, B on C, C computes. Earlier, each wait ended quickly.
    let g = graph(
        vec![
            // thread 0 (A)
            wait(0, 0, 1_000, by(1)),       // 0: normal
            exec(0, 1_000, 2_000),          // 1
            wait(0, 2_000, 50 * MS, by(1)), // 2: the stall
            // thread 1 (B)
            wait(1, 0, 900, by(2)),         // 3: normal
            exec(1, 900, 1_000),            // 4: wakes A
            wait(1, 1_500, 49 * MS, by(2)), // 5: stalled too
            exec(1, 49 * MS, 50 * MS),      // 6
            // thread 2 (C)
            exec(2, 0, 900),         // 7: wakes B
            exec(2, 1_000, 49 * MS), // 8: long computation
        ],
        vec![
            strong(4, 0, EdgeKind::Wakeup, 1_000),
            strong(0, 1, EdgeKind::Resume, 1_000),
            strong(6, 2, EdgeKind::Wakeup, 50 * MS),
            strong(7, 3, EdgeKind::Wakeup, 900),
            strong(3, 4, EdgeKind::Resume, 900),
            strong(8, 5, EdgeKind::Wakeup, 49 * MS),
            strong(5, 6, EdgeKind::Resume, 49 * MS),
        ],
    );
    let opts = Options::default();
    assert_eq!(find_similar(&g, VertexId(2), &opts), Some(VertexId(0)));
    let d = diagnose(&g, VertexId(2), &opts, &mut AutoOracle);
    let cases: Vec<(u32, Case, u32)> = d
        .findings
        .iter()
        .map(|f| (f.vertex.0, f.case, f.depth))
        .collect();
    assert_eq!(
        cases,
        vec![
            (2, Case::LongWait, 0),
            (5, Case::LongWait, 1),
            (8, Case::LongRunning, 2)
        ]
    );
    // Each wait's waker is known: its own stall is the culprit, no similar wait needed.
    assert_eq!(d.findings[0].rule, Some(HopRule::Waker));
    assert_eq!(d.findings[0].similar, None);
    assert_eq!(d.findings[0].compared[0].thread, 1);
    assert_eq!(d.findings[1].rule, Some(HopRule::Waker));
    assert!(d.circles.is_empty());
    // Two culprits: two "go on?" questions, answered by the heuristic.
    assert_eq!(d.decisions.len(), 2);
    assert!(
        d.decisions
            .iter()
            .all(|x| x.question.kind == QuestionKind::Proceed)
    );

    // Stopping at each culprit (B, then C, also on A's normal path) leaves only the
    // problem.
    let mut replay = ReplayOracle::new(vec![Answer::Stop, Answer::Stop]);
    let d = diagnose(&g, VertexId(2), &opts, &mut replay);
    assert_eq!(d.findings.len(), 1);
}

#[test]
fn a_convoy_waiter_is_traced_to_the_holder_that_woke_it_not_its_normal_path() {
    // Two waiters (0, 1) queue on a lock held by an idle holder (2). Earlier, 1 woke 0
    // (the queue's hand-off): that is 0's normal path. This time the holder released
    // them both; the chain goes to the holder, not to the other waiter.
    let g = graph(
        vec![
            wait(0, 0, 1_000, by(1)),       // 0: a short, similar wait, woken by 1
            exec(0, 1_000, 2_000),          // 1
            wait(0, 2_000, 50 * MS, by(2)), // 2: the problem
            exec(1, 0, 1_000),              // 3: woke 0 earlier
            wait(1, 1_500, 50 * MS, by(2)), // 4: queued too
            wait(2, 500, 49 * MS, by(3)),   // 5: the holder, idle on its client
            exec(2, 49 * MS, 50 * MS),      // 6: commits, wakes both
            exec(3, 0, 49 * MS),            // 7: the holder's client, busy
        ],
        vec![
            strong(3, 0, EdgeKind::Wakeup, 1_000),
            strong(0, 1, EdgeKind::Resume, 1_000),
            strong(6, 2, EdgeKind::Wakeup, 50 * MS),
            strong(6, 4, EdgeKind::Wakeup, 50 * MS),
            strong(7, 5, EdgeKind::Wakeup, 49 * MS),
            strong(5, 6, EdgeKind::Resume, 49 * MS),
        ],
    );
    let opts = Options::default();
    assert_eq!(find_similar(&g, VertexId(2), &opts), Some(VertexId(0)));
    let d = diagnose(&g, VertexId(2), &opts, &mut AutoOracle);
    let chain: Vec<(u32, Option<HopRule>)> = d.chain.iter().map(|h| (h.vertex.0, h.rule)).collect();
    assert_eq!(
        chain,
        vec![
            (2, None),
            (5, Some(HopRule::Waker)),
            (7, Some(HopRule::Waker))
        ]
    );
    assert!(
        d.findings.iter().all(|f| f.vertex != VertexId(4)),
        "{:?}",
        d.findings
    );
}

#[test]
fn a_wait_its_timer_ended_follows_its_normal_path() {
    // The waker is unknown (a timeout ended the wait): Argus's normal path decides.
    let g = graph(
        vec![
            wait(0, 0, 1_000, by(1)),                // 0: similar, woken by 1
            exec(0, 1_000, 2_000),                   // 1
            wait(0, 2_000, 50 * MS, WokenBy::Timer), // 2: the problem
            exec(1, 0, 1_000),                       // 3: woke 0 earlier
            exec(1, 1_500, 50 * MS),                 // 4: busy through the wait
        ],
        vec![
            strong(3, 0, EdgeKind::Wakeup, 1_000),
            strong(0, 1, EdgeKind::Resume, 1_000),
            strong(1, 2, EdgeKind::Resume, 2_000),
        ],
    );
    let d = diagnose(&g, VertexId(2), &Options::default(), &mut AutoOracle);
    assert_eq!(d.findings[0].rule, Some(HopRule::NormalPath));
    assert_eq!(d.findings[0].similar, Some(VertexId(0)));
    assert_eq!(d.findings[1].vertex, VertexId(4));
    assert_eq!(d.chain[1].rule, Some(HopRule::NormalPath));
}

#[test]
fn a_wait_a_device_ended_ends_the_chain_at_the_device_not_at_a_peer() {
    // Thread 0 waits 20 ms on a disk read (ended by the block-completion softirq)
    // while thread 1, which woke it before, sleeps long at the same time: by the
    // peer rule thread 1's sleep would be a culprit, but the device ended the wait.
    let disk = WokenBy::Interrupt {
        number: 4,
        softirq: true,
    };
    let g = graph(
        vec![
            wait(0, 0, 50, by(1)),                     // 0: an earlier wait thread 1 ended
            exec(0, 50, 100),                          // 1
            wait(0, 100, 20 * MS, disk),               // 2: the long disk wait
            exec(1, 0, 50),                            // 3: woke thread 0
            wait(1, 60, 20 * MS + 10, WokenBy::Timer), // 4: sleeps meanwhile
        ],
        vec![
            strong(3, 0, EdgeKind::Wakeup, 50),
            strong(0, 1, EdgeKind::Resume, 50),
            strong(1, 2, EdgeKind::Resume, 100),
        ],
    );
    let d = diagnose(&g, VertexId(2), &Options::default(), &mut AutoOracle);
    assert_eq!(d.findings[0].case, Case::LongWait);
    assert_eq!(d.findings[0].rule, None, "{:?}", d.findings);
    assert!(
        d.findings[0].compared.is_empty(),
        "{:?}",
        d.findings[0].compared
    );
    assert_eq!(d.chain.len(), 1, "{:?}", d.chain);
    // The same wait ended by nothing known goes to the normal path (the similar wait
    // 0, which thread 1 ended), and thread 1's sleep is the culprit.
    let mut vs = g.vertices().to_vec();
    vs[2].woken_by = Some(WokenBy::Unknown);
    let g2 = graph(
        vs,
        vec![
            strong(3, 0, EdgeKind::Wakeup, 50),
            strong(0, 1, EdgeKind::Resume, 50),
            strong(1, 2, EdgeKind::Resume, 100),
        ],
    );
    let d2 = diagnose(&g2, VertexId(2), &Options::default(), &mut AutoOracle);
    assert_eq!(
        d2.findings[0].rule,
        Some(HopRule::NormalPath),
        "{:?}",
        d2.findings
    );
    assert_eq!(d2.chain.len(), 2, "{:?}", d2.chain);
}

#[test]
fn a_circular_wait_is_reported_with_the_timeout_that_breaks_it() {
    // Client (0) sends a request that wakes the server (1), then polls with a timeout;
    // the server waits for a token the client sends only after its poll times out.
    let mut reply = wait(0, 0, 50, by(1));
    reply.wait_call = Some(0); // read, not poll
    let g = graph(
        vec![
            // thread 0 (client)
            reply,                                 // 0: the previous reply
            exec(0, 50, 100),                      // 1: writes the request
            wait(0, 100, 20 * MS, WokenBy::Timer), // 2: poll times out
            exec(0, 20 * MS, 20 * MS + 50),        // 3: sends the token
            // thread 1 (server)
            exec(1, 0, 60),                    // 4: wrote the previous reply
            wait(1, 60, 90, by(0)),            // 5: an earlier read
            exec(1, 90, 95),                   // 6
            wait(1, 95, 100, by(0)),           // 7: request read, quick
            exec(1, 100, 150),                 // 8: serves
            wait(1, 150, 20 * MS + 40, by(0)), // 9: token read, long
        ],
        vec![
            strong(4, 0, EdgeKind::Wakeup, 50),
            strong(0, 1, EdgeKind::Resume, 50),
            strong(1, 2, EdgeKind::Timer, 20 * MS),
            strong(2, 3, EdgeKind::Resume, 20 * MS),
            strong(1, 5, EdgeKind::Wakeup, 90),
            strong(5, 6, EdgeKind::Resume, 90),
            strong(1, 7, EdgeKind::Wakeup, 100),
            strong(7, 8, EdgeKind::Resume, 100),
            strong(3, 9, EdgeKind::Wakeup, 20 * MS + 40),
        ],
    );
    let d = diagnose(&g, VertexId(2), &Options::default(), &mut AutoOracle);
    // No earlier poll of the client got its wake-up: the peers are compared (weak).
    assert_eq!(d.findings[0].case, Case::LongWait);
    assert_eq!(d.findings[0].similar, None);
    assert_eq!(d.findings[0].compared[0].thread, 1);
    assert!(!d.findings[0].compared[0].from_normal_path);
    assert_eq!(d.findings[0].rule, Some(HopRule::Peers));
    assert_eq!(d.findings[1].vertex, VertexId(9));
    // The token read was ended by the client: its poll is the culprit (the circle).
    assert_eq!(d.findings[1].rule, Some(HopRule::Waker));
    assert_eq!(d.circles.len(), 1);
    let c = &d.circles[0];
    assert_eq!(c.vertices, vec![VertexId(2), VertexId(9)]);
    assert_eq!(c.broken_by, Some((VertexId(2), WokenBy::Timer)));
}

#[test]
fn a_wait_with_no_normal_one_compares_the_thread_that_woke_it_first() {
    // The client (0) waits long in its first wait of the kind; the thread that ends it
    // (2) ran 40 % of the wait at a stretch (under the overlap test's half), slept,
    // ran again; the thread the client exchanged wake-ups with just before (1) had
    // finished.
    let mut earlier = wait(0, 0, 50, by(1));
    earlier.wait_call = Some(0); // another call: not a similar wait
    let g = graph(
        vec![
            earlier,                                  // 0
            exec(0, 50, 100),                         // 1
            wait(0, 100, 20 * MS, by(2)),             // 2: the problem
            exec(1, 0, 50),                           // 3: woke the earlier wait
            exec(2, 0, 8 * MS),                       // 4: busy 40 % of the wait
            wait(2, 8 * MS, 16 * MS, WokenBy::Timer), // 5: a short sleep
            exec(2, 16 * MS, 20 * MS),                // 6: then ends the problem
        ],
        vec![
            strong(3, 0, EdgeKind::Wakeup, 50),
            strong(0, 1, EdgeKind::Resume, 50),
            strong(1, 2, EdgeKind::Resume, 100),
            strong(6, 2, EdgeKind::Wakeup, 20 * MS),
        ],
    );
    let d = diagnose(&g, VertexId(2), &Options::default(), &mut AutoOracle);
    let f = &d.findings[0];
    assert_eq!((f.case, f.similar), (Case::LongWait, None));
    assert_eq!(f.compared[0].thread, 2, "{:?}", f.compared);
    assert!(f.compared[0].from_normal_path);
    assert_eq!(d.findings[1].vertex, VertexId(4));
    assert_eq!(d.findings[1].case, Case::LongRunning);
}

/// A request waits for a lock held by a holder that waits for a reply from a backend
/// that sleeps, its sleep ended as `woken` says (with the timer's edge when `timer`).
/// The holder also woke the request earlier (lock hand-off); the request waits for the
/// holder, not the other way round: no circle.
fn chain_to_a_sleep(woken: WokenBy, timer: bool) -> crate::Diagnosis {
    let mut sleep = wait(2, 100, 50 * MS, woken);
    sleep.wait_call = Some(230); // clock_nanosleep
    let mut edges = vec![
        strong(3, 0, EdgeKind::Wakeup, 40),
        strong(0, 1, EdgeKind::Resume, 40),
        strong(7, 2, EdgeKind::Wakeup, 50 * MS + 20),
        strong(8, 4, EdgeKind::Wakeup, 90),
        strong(4, 5, EdgeKind::Resume, 90),
        strong(10, 6, EdgeKind::Wakeup, 50 * MS + 10),
        strong(6, 7, EdgeKind::Resume, 50 * MS + 10),
        strong(9, 10, EdgeKind::Resume, 50 * MS),
    ];
    if timer {
        edges.push(strong(5, 9, EdgeKind::Timer, 50 * MS));
    }
    let g = graph(
        vec![
            // thread 0 (request)
            wait(0, 0, 40, by(1)),             // 0: earlier hand-off
            exec(0, 40, 150),                  // 1
            wait(0, 150, 50 * MS + 20, by(1)), // 2: the stall (futex)
            // thread 1 (holder)
            exec(1, 0, 50),                      // 3: hands the lock over at 40
            wait(1, 50, 90, by(2)),              // 4: an earlier reply
            exec(1, 90, 100),                    // 5: sends the query
            wait(1, 100, 50 * MS + 10, by(2)),   // 6: waits for the reply
            exec(1, 50 * MS + 10, 50 * MS + 30), // 7: unlocks
            // thread 2 (backend)
            exec(2, 0, 90),                 // 8: replied at 90
            sleep,                          // 9: the sleep
            exec(2, 50 * MS, 50 * MS + 15), // 10: replies
        ],
        edges,
    );
    diagnose(&g, VertexId(2), &Options::default(), &mut AutoOracle)
}

#[test]
fn a_chain_of_waits_is_not_a_circle_and_ends_at_a_sleep() {
    let d = chain_to_a_sleep(WokenBy::Timer, true);
    let chain: Vec<(u32, Case)> = d.findings.iter().map(|f| (f.vertex.0, f.case)).collect();
    assert_eq!(
        chain,
        vec![
            (2, Case::LongWait),
            (6, Case::LongWait),
            (9, Case::LongWait)
        ]
    );
    assert!(d.circles.is_empty(), "{:?}", d.circles);
    // The sleep is the end: nothing compared from there.
    assert!(d.findings[2].slept);
    assert!(d.findings[2].compared.is_empty());
    // Its timer's expiry missing from the trace, the sleep is still the end: only its
    // timer or a signal (a recorded wake-up) ends a sleep.
    let d = chain_to_a_sleep(WokenBy::Unknown, false);
    assert_eq!(d.findings.len(), 3);
    assert!(d.findings[2].slept);
}

fn call(nr: u32, ret: i64, repeats: u32, user: u32) -> Call {
    Call {
        nr,
        args: [0; 3],
        ret: Some(ret),
        repeats,
        stack: Some(StackRef {
            user: Some(StackId(user)),
            kernel: None,
        }),
    }
}

#[test]
fn the_signature_collapses_repeats_ignores_wait_returns_and_keeps_the_rest() {
    let mut a = exec(0, 0, 10);
    let mut b = exec(0, 20, 30);
    a.calls = vec![call(1, 8, 3, 1), call(7, 1, 1, 2)];
    b.calls = vec![call(1, 8, 1, 1), call(7, 0, 1, 2)];
    assert_eq!(
        Signature::of(&a),
        Signature::of(&b),
        "write x3 = write x1; poll's return ignored"
    );
    b.calls = vec![call(1, -11, 1, 1), call(7, 0, 1, 2)];
    assert_ne!(
        Signature::of(&a),
        Signature::of(&b),
        "a failed write differs"
    );
    b.calls = vec![call(1, 8, 1, 9), call(7, 0, 1, 2)];
    assert_ne!(
        Signature::of(&a),
        Signature::of(&b),
        "another call site differs"
    );
}

#[test]
fn the_most_recent_similar_normal_wait_is_chosen() {
    let mut other = wait(0, 0, 10, by(1));
    other.wait_call = Some(202);
    let g = graph(
        vec![
            wait(0, 0, 10, by(1)),           // 0: similar, older
            other,                           // 1: another call
            wait(0, 20, 30, WokenBy::Timer), // 2: similar but timed out
            wait(0, 40, 50, by(1)),          // 3: similar, latest normal
            wait(0, 60, 30 * MS, by(1)),     // 4: the stall
        ],
        vec![],
    );
    assert_eq!(
        find_similar(&g, VertexId(4), &Options::default()),
        Some(VertexId(3))
    );
    assert_eq!(find_similar(&g, VertexId(0), &Options::default()), None);
}

#[test]
fn answers_files_parse_numbers_stop_auto_and_comments() {
    let a = parse_answers("# replay\n2\n\nstop  # enough\nauto\n").unwrap();
    assert_eq!(a, vec![Answer::Number(2), Answer::Stop, Answer::Auto]);
    let err = parse_answers("1\nzero\n").unwrap_err();
    assert_eq!(err.line, 2);
    assert!(parse_answers("0").is_err());
}

/// A trace built from synthetic events.
fn trace(s: &Synth) -> Trace {
    let tables = causeway_testkit::synth::named_tables(&[]);
    Trace::from_events(tables, Header::synthetic(2), &s.events())
}

#[test]
fn the_builder_splits_where_peers_change_and_adds_weak_edges_across() {
    let mut s = Synth::new();
    // 2 and 3 block; 1 runs and wakes 2, then 3.
    s.switch(0, 0, 0, TaskState::RUNNABLE, 2)
        .switch(10, 0, 2, TaskState::INTERRUPTIBLE, 3)
        .switch(20, 0, 3, TaskState::INTERRUPTIBLE, 1)
        .wake_by(100, 0, 1, 2)
        .wake_by(200, 0, 1, 3)
        .switch(300, 0, 1, TaskState::INTERRUPTIBLE, 2)
        .switch(400, 0, 2, TaskState::INTERRUPTIBLE, 3)
        .switch(500, 0, 3, TaskState::INTERRUPTIBLE, 0);
    let t = trace(&s);
    let g = build(&t, &[], &Options::default());
    assert_eq!(g.counts().peer_splits, 1);
    let t1 = t.model().thread_index_at(Tid(1), Timestamp(100)).unwrap();
    let parts: Vec<&Vertex> = g
        .thread_vertices(t1)
        .iter()
        .filter_map(|&v| g.vertex(v))
        .filter(|v| v.kind == VertexKind::Exec)
        .collect();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0].span.end, Timestamp(101));
    // Each wakee's wait has a strong wake-up edge from the right part.
    let wake_from = |tid: u32| {
        let ti = t.model().thread_index_at(Tid(tid), Timestamp(0)).unwrap();
        g.thread_vertices(ti)
            .iter()
            .flat_map(|&v| g.incoming(v))
            .find(|(_, e)| e.kind == EdgeKind::Wakeup)
            .map(|(_, e)| g.vertex(e.from).unwrap().span)
            .unwrap()
    };
    assert_eq!(wake_from(2), parts[0].span);
    assert_eq!(wake_from(3), parts[1].span);
    assert_eq!(parts[1].span.start, Timestamp(101));
    assert!(
        g.edges()
            .iter()
            .any(|e| e.kind == EdgeKind::PeerSplit && e.strength == Strength::Weak)
    );

    let g = build(
        &t,
        &[],
        &Options {
            split_peers: false,
            ..Options::default()
        },
    );
    assert_eq!(g.counts().peer_splits, 0);
}

#[test]
fn timer_wakeups_link_to_the_waiter_and_device_interrupts_are_filtered() {
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(10, 0, 1, TaskState::INTERRUPTIBLE, 2)
        .switch(20, 0, 2, TaskState::INTERRUPTIBLE, 0)
        .wakeup(
            1000,
            0,
            1,
            0,
            Waker::Softirq {
                vec: SoftirqVec::HRTIMER,
            },
        )
        .wakeup(
            1000,
            1,
            2,
            1,
            Waker::Irq {
                irq: 11,
                name: causeway_format::StringId(0),
            },
        )
        .switch(1001, 0, 0, TaskState::RUNNABLE, 1)
        .switch(1002, 1, 0, TaskState::RUNNABLE, 2)
        .switch(2000, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .switch(2000, 1, 2, TaskState::INTERRUPTIBLE, 0);
    let t = trace(&s);
    let g = build(&t, &[], &Options::default());
    assert_eq!(g.counts().interrupt_wakeups, 1);
    let timer: Vec<&Edge> = g
        .edges()
        .iter()
        .filter(|e| e.kind == EdgeKind::Timer)
        .collect();
    assert_eq!(timer.len(), 1);
    let to = g.vertex(timer[0].to).unwrap();
    assert_eq!(to.tid, Tid(1));
    assert_eq!(to.woken_by, Some(WokenBy::Timer));
    assert_eq!(g.vertex(timer[0].from).unwrap().tid, Tid(1));
    // The interrupt-woken wait keeps only the weak edge from its own thread.
    let t2 = t.model().thread_index_at(Tid(2), Timestamp(0)).unwrap();
    let w = g
        .thread_vertices(t2)
        .iter()
        .copied()
        .find(|&v| g.vertex(v).unwrap().kind == VertexKind::Wait)
        .unwrap();
    let inc: Vec<_> = g.incoming(w).map(|(_, e)| (e.kind, e.strength)).collect();
    assert_eq!(inc, vec![(EdgeKind::SameThread, Strength::Weak)]);
}

#[test]
fn a_thread_that_waited_then_starved_has_both_stalls_reported() {
    // A waits 40 ms on B; B first waits 20 ms (on C's sleep), then waits 20 ms for a
    // CPU. Neither half alone covers half of A's wait; together they do.
    let mut sleep = wait(2, 0, 20 * MS, WokenBy::Timer);
    sleep.wait_call = Some(35); // nanosleep
    let mut starved = exec(1, 20 * MS, 40 * MS);
    starved.block = BlockType::Runnable;
    let g = graph(
        vec![
            wait(0, 0, 10, by(1)),            // 0: normal
            exec(0, 10, 20),                  // 1
            wait(0, 20, 40 * MS + 10, by(1)), // 2: the stall
            exec(1, 0, 10),                   // 3: woke A early
            wait(1, 10, 20 * MS, by(2)),      // 4: waits on C
            starved,                          // 5: then starves
            exec(2, 20 * MS, 20 * MS + 5),    // 6: wakes B
            sleep,                            // 7
        ],
        vec![
            strong(3, 0, EdgeKind::Wakeup, 10),
            strong(0, 1, EdgeKind::Resume, 10),
            strong(5, 2, EdgeKind::Wakeup, 40 * MS + 10),
            strong(6, 4, EdgeKind::Wakeup, 20 * MS),
            strong(4, 5, EdgeKind::Resume, 20 * MS),
        ],
    );
    let d = diagnose(&g, VertexId(2), &Options::default(), &mut AutoOracle);
    let found: Vec<(u32, Case, Option<u32>)> = d
        .findings
        .iter()
        .map(|f| (f.vertex.0, f.case, f.culprit_of.map(|v| v.0)))
        .collect();
    assert_eq!(found[0], (2, Case::LongWait, None));
    assert!(found.contains(&(4, Case::LongWait, Some(2))), "{found:?}");
    assert!(
        found.contains(&(5, Case::LongRunnable, Some(2))),
        "{found:?}"
    );
}

/// Thread 1 waits 10..1000 (woken by 3), runs to 1200 and waits again; thread 2 waits
/// 10..5000 (woken by an interrupt) and runs to 5100.
fn two_waits() -> Trace {
    let irq = Waker::Irq {
        irq: 11,
        name: causeway_format::StringId(0),
    };
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .switch(10, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .switch(10, 1, 2, TaskState::INTERRUPTIBLE, 3)
        .wake_by(1000, 1, 3, 1)
        .switch(1001, 0, 0, TaskState::RUNNABLE, 1)
        .switch(1100, 1, 3, TaskState::INTERRUPTIBLE, 0)
        .switch(1200, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .wakeup(5000, 1, 2, 1, irq)
        .switch(5001, 1, 0, TaskState::RUNNABLE, 2)
        .switch(5100, 1, 2, TaskState::INTERRUPTIBLE, 0);
    trace(&s)
}

#[test]
fn the_problem_vertex_is_the_longest_stall_the_named_thread_or_the_trigger() {
    use crate::{DiagnoseError, Problem, StallKind, ThreadSelector, problem_vertex};
    let t = two_waits();
    let g = build(&t, &[], &Options::default());
    let tid_of = |v: VertexId| g.vertex(v).unwrap().tid;
    let longest = problem_vertex(&t, &g, &Problem::Longest, StallKind::Any).unwrap();
    assert_eq!(tid_of(longest), Tid(2));
    assert_eq!(g.vertex(longest).unwrap().kind, VertexKind::Wait);
    let one = problem_vertex(
        &t,
        &g,
        &Problem::Thread(ThreadSelector::Tid(Tid(1))),
        StallKind::Any,
    )
    .unwrap();
    assert_eq!(tid_of(one), Tid(1));
    assert_eq!(g.vertex(one).unwrap().span.end, Timestamp(1000));
    let at = Problem::ThreadAt(ThreadSelector::Tid(Tid(1)), Timestamp(1100));
    let v = problem_vertex(&t, &g, &at, StallKind::Any).unwrap();
    assert_eq!(g.vertex(v).unwrap().kind, VertexKind::Exec);
    assert_eq!(
        problem_vertex(
            &t,
            &g,
            &Problem::Thread(ThreadSelector::Name("nobody".into())),
            StallKind::Any
        ),
        Err(DiagnoseError::NoSuchThread("`nobody`".into()))
    );

    // A dump's trigger names thread 1 at 500 ns: its wait is the default problem.
    let mut stats = t.stats().clone();
    stats.counters.insert("inproc.trigger_tid".into(), 1);
    stats.counters.insert("inproc.trigger_ts_ns".into(), 500);
    let t = Trace::from_parts(
        t.header().clone(),
        t.tables().clone(),
        stats,
        t.model().clone(),
        t.facts().clone(),
    );
    let v = problem_vertex(&t, &g, &Problem::Longest, StallKind::Any).unwrap();
    assert_eq!(tid_of(v), Tid(1));
    let run = problem_vertex(
        &t,
        &g,
        &Problem::Thread(ThreadSelector::Tid(Tid(2))),
        StallKind::Run,
    );
    assert_eq!(g.vertex(run.unwrap()).unwrap().kind, VertexKind::Exec);
    assert_eq!(g.vertex(v).unwrap().span.end, Timestamp(1000));
}

/// Server 1 (process 1) stopped at 110 by a SIGSTOP that stopper 2 (process 2) sent at
/// 100, continued at 20 ms by 2's SIGCONT wake-up. Without `signals`, no signal events.
fn stopped_server(signals: bool) -> Trace {
    use causeway_format::{EventKind, Signal, SignalResult, Tgid};
    let sig = |sig, result| EventKind::SignalGenerate {
        sender: Tid(2),
        target: Tid(1),
        target_tgid: Tgid(1),
        sig,
        group: true,
        result,
    };
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2);
    if signals {
        s.push(100, 1, sig(Signal::STOP, SignalResult::DELIVERED));
        s.push(
            105,
            0,
            EventKind::SignalDeliver {
                tid: Tid(1),
                sig: Signal::STOP,
            },
        );
    }
    s.switch(110, 0, 1, TaskState::STOPPED, 0)
        .switch(200, 1, 2, TaskState::INTERRUPTIBLE, 0)
        .wakeup(
            20 * MS - 10,
            1,
            2,
            1,
            Waker::Irq {
                irq: u32::MAX,
                name: causeway_format::StringId(0),
            },
        )
        .switch(20 * MS - 5, 1, 0, TaskState::RUNNABLE, 2);
    if signals {
        s.push(20 * MS - 2, 1, sig(Signal::CONT, SignalResult::IGNORED));
    }
    s.wake_by(20 * MS, 1, 2, 1)
        .switch(20 * MS + 1, 0, 0, TaskState::RUNNABLE, 1)
        .switch(20 * MS + 100, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .switch(20 * MS + 100, 1, 2, TaskState::INTERRUPTIBLE, 0);
    let tables = causeway_testkit::synth::named_tables(&[(1, 1, "server"), (2, 2, "stopper")]);
    Trace::from_events(tables, Header::synthetic(2), &s.events())
}

#[test]
fn a_stopped_thread_is_linked_to_its_stop_signals_sender() {
    use crate::{Problem, ThreadSelector, problem_vertex, stop_edge, stop_signal};
    let t = stopped_server(true);
    let g = build(&t, &[], &Options::default());
    let opts = Options {
        problem: Problem::ThreadAt(ThreadSelector::Tid(Tid(1)), Timestamp(MS)),
        ..Options::default()
    };
    let p = problem_vertex(&t, &g, &opts.problem, opts.stall).unwrap();
    let pv = g.vertex(p).unwrap();
    assert_eq!(pv.block, BlockType::Stopped);
    let sent = stop_signal(&t, pv).expect("the SIGSTOP is found");
    assert_eq!(
        (sent.sig.name(), sent.sender),
        ("SIGSTOP".into(), Some(Tid(2)))
    );
    // The edge comes from the stopper's run at 100 and is strong.
    let e = g.edge(stop_edge(&g, p).expect("a signal edge")).unwrap();
    assert_eq!(
        (e.kind, e.strength, e.ts),
        (EdgeKind::Signal, Strength::Strong, Timestamp(100))
    );
    let from = g.vertex(e.from).unwrap();
    assert_eq!((from.tid, from.kind), (Tid(2), VertexKind::Exec));
    // The diagnosis follows it without asking, though the SIGCONT wake-up is strong too.
    let d = diagnose(&g, p, &opts, &mut AutoOracle);
    let f = &d.findings[0];
    assert_eq!(f.case, Case::Stopped);
    assert_eq!(f.stopped_by, stop_edge(&g, p));
    let s = f.slice.as_ref().unwrap();
    assert_eq!(s.steps[1].vertex, e.from);
    assert_eq!(s.steps[1].kind, Some(EdgeKind::Signal));
    assert_eq!(s.steps[1].decided, Some(DecidedBy::Graph));
    // No question about the slice: only whether to go on into the sender's stall.
    assert!(
        d.decisions
            .iter()
            .all(|x| x.question.kind == QuestionKind::Proceed),
        "{:?}",
        d.decisions
    );

    // Without signal events the slice takes the SIGCONT wake-up, as before.
    let t = stopped_server(false);
    let g = build(&t, &[], &Options::default());
    let p = problem_vertex(&t, &g, &opts.problem, opts.stall).unwrap();
    assert!(stop_edge(&g, p).is_none());
    let d = diagnose(&g, p, &opts, &mut AutoOracle);
    let s = d.findings[0].slice.as_ref().unwrap();
    assert_eq!(s.steps[1].kind, Some(EdgeKind::Wakeup));
    assert_eq!(d.findings[0].stopped_by, None);
}

#[test]
fn a_sigcont_before_the_stop_hides_an_older_sigstop() {
    use causeway_format::{EventKind, Signal, SignalResult, Tgid};
    let mut s = Synth::new();
    let sig = |sig| EventKind::SignalGenerate {
        sender: Tid(2),
        target: Tid(1),
        target_tgid: Tgid(1),
        sig,
        group: true,
        result: SignalResult::DELIVERED,
    };
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .push(50, 1, sig(Signal::STOP))
        .push(60, 1, sig(Signal::CONT))
        // Stopped by a tracer or a signal the trace missed.
        .switch(110, 0, 1, TaskState::STOPPED, 0)
        .wake_by(10 * MS, 1, 2, 1)
        .switch(10 * MS + 1, 0, 0, TaskState::RUNNABLE, 1);
    let tables = causeway_testkit::synth::named_tables(&[(1, 1, "server"), (2, 2, "stopper")]);
    let t = Trace::from_events(tables, Header::synthetic(2), &s.events());
    let g = build(&t, &[], &Options::default());
    let stopped = g
        .vertices()
        .iter()
        .find(|v| v.block == BlockType::Stopped)
        .expect("a stopped vertex");
    assert!(crate::stop_signal(&t, stopped).is_none());
    assert!(!g.edges().iter().any(|e| e.kind == EdgeKind::Signal));
}

#[test]
fn a_signal_taken_is_linked_from_its_sender() {
    use causeway_format::{EventKind, Signal, SignalResult, Tgid};
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .switch(10, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .push(
            500,
            1,
            EventKind::SignalGenerate {
                sender: Tid(2),
                target: Tid(1),
                target_tgid: Tgid(1),
                sig: Signal(10),
                group: false,
                result: SignalResult::DELIVERED,
            },
        )
        .wake_by(501, 1, 2, 1)
        .switch(502, 0, 0, TaskState::RUNNABLE, 1)
        .push(
            510,
            0,
            EventKind::SignalDeliver {
                tid: Tid(1),
                sig: Signal(10),
            },
        )
        .switch(600, 0, 1, TaskState::INTERRUPTIBLE, 0);
    let tables = causeway_testkit::synth::named_tables(&[(1, 1, "a"), (2, 2, "b")]);
    let t = Trace::from_events(tables, Header::synthetic(2), &s.events());
    let g = build(&t, &[], &Options::default());
    let e = g
        .edges()
        .iter()
        .find(|e| e.kind == EdgeKind::Signal)
        .expect("a signal edge");
    let (from, to) = (g.vertex(e.from).unwrap(), g.vertex(e.to).unwrap());
    assert_eq!(
        (from.tid, to.tid, to.kind),
        (Tid(2), Tid(1), VertexKind::Exec)
    );
    assert_eq!(e.ts, Timestamp(500));
}

#[test]
fn a_timer_wakeup_is_linked_from_the_thread_that_armed_the_timer() {
    use causeway_format::EventKind;
    let mut s = Synth::new();
    let timer = Waker::Irq {
        irq: u32::MAX,
        name: causeway_format::StringId(0),
    };
    // Thread 2 arms a timer (a timerfd, say) at 5; thread 1 waits from 10 and is woken
    // by that timer's expiry at 8 ms.
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .push(
            5,
            1,
            EventKind::TimerArm {
                tid: Tid(2),
                timer: 77,
                expires: Some(Timestamp(8 * MS)),
            },
        )
        .switch(10, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .push(8 * MS, 0, EventKind::TimerExpire { timer: 77 })
        .wakeup(8 * MS + 3, 0, 1, 0, timer)
        .switch(8 * MS + 5, 0, 0, TaskState::RUNNABLE, 1);
    let tables = causeway_testkit::synth::named_tables(&[(1, 1, "waiter"), (2, 1, "armer")]);
    let t = Trace::from_events(tables, Header::synthetic(2), &s.events());
    let w = t
        .facts()
        .timer_wake(Tid(1), Timestamp(8 * MS + 3))
        .expect("claimed");
    assert_eq!((w.armed_by, w.armed_at), (Tid(2), Timestamp(5)));
    let g = build(&t, &[], &Options::default());
    let wait = g
        .vertices()
        .iter()
        .position(|v| v.tid == Tid(1) && v.kind == VertexKind::Wait)
        .expect("the wait") as u32;
    let into: Vec<_> = g
        .incoming(VertexId(wait))
        .filter(|(_, e)| e.kind == EdgeKind::Timer)
        .map(|(_, e)| *e)
        .collect();
    assert_eq!(into.len(), 1, "{into:?}");
    assert_eq!(g.vertex(into[0].from).unwrap().tid, Tid(2));
    assert_eq!(into[0].ts, Timestamp(5));
}

#[test]
fn a_flight_recorder_trigger_mark_picks_the_problem_vertex() {
    use crate::{Problem, StallKind, problem_vertex};
    use causeway_format::{TriggerMark, TriggerReason};
    let t = two_waits();
    let g = build(&t, &[], &Options::default());
    let with = |m: TriggerMark| {
        let mut stats = t.stats().clone();
        stats.trigger = Some(m);
        Trace::from_parts(
            t.header().clone(),
            t.tables().clone(),
            stats,
            t.model().clone(),
            t.facts().clone(),
        )
    };
    // A condition on thread 1 whose stall began at 10 and fired at 900.
    let cond = with(TriggerMark {
        reason: TriggerReason::Blocked,
        ts_ns: 900,
        tid: Some(1),
        stall_start_ns: Some(10),
    });
    let v = problem_vertex(&cond, &g, &Problem::Longest, StallKind::Any).unwrap();
    let x = g.vertex(v).unwrap();
    assert_eq!(
        (x.tid, x.kind, x.span.end),
        (Tid(1), VertexKind::Wait, Timestamp(1000))
    );
    // Asked at 3000: the longest wait going on then (thread 2's, 10..5000).
    let asked = with(TriggerMark {
        reason: TriggerReason::Asked,
        ts_ns: 3000,
        tid: None,
        stall_start_ns: None,
    });
    let v = problem_vertex(&asked, &g, &Problem::Longest, StallKind::Any).unwrap();
    let x = g.vertex(v).unwrap();
    assert_eq!((x.tid, x.span.end), (Tid(2), Timestamp(5000)));
}

/// Thread 1 (main) joins worker 3 for 10..9000 (woken by 3, which exits right after);
/// thread 2 waits 10..5000 (woken by an interrupt). The join is a hand-off at the
/// worker's exit: the default problem is thread 2's wait, although it is shorter.
#[test]
fn the_default_problem_passes_over_a_join_on_a_worker_that_exits() {
    use crate::{Problem, StallKind, problem_vertex};
    let irq = Waker::Irq {
        irq: 11,
        name: causeway_format::StringId(0),
    };
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .switch(10, 0, 1, TaskState::INTERRUPTIBLE, 3)
        .switch(10, 1, 2, TaskState::INTERRUPTIBLE, 0)
        .wakeup(5000, 1, 2, 1, irq)
        .switch(5001, 1, 0, TaskState::RUNNABLE, 2)
        .switch(5100, 1, 2, TaskState::INTERRUPTIBLE, 0)
        .wake_by(9000, 0, 3, 1)
        .exit(9001, 0, 3)
        .switch(9002, 0, 3, TaskState::DEAD, 1)
        .switch(9500, 0, 1, TaskState::RUNNABLE, 0);
    let t = trace(&s);
    let g = build(&t, &[], &Options::default());
    let v = problem_vertex(&t, &g, &Problem::Longest, StallKind::Any).unwrap();
    let x = g.vertex(v).unwrap();
    assert_eq!((x.tid, x.kind), (Tid(2), VertexKind::Wait), "{x:?}");
    // Asked for thread 1, its join is still its longest stall.
    let one = problem_vertex(
        &t,
        &g,
        &Problem::Thread(crate::ThreadSelector::Tid(Tid(1))),
        StallKind::Any,
    )
    .unwrap();
    assert_eq!(g.vertex(one).unwrap().span.end, Timestamp(9000));
}
