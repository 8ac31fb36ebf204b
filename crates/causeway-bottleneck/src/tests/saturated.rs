//! The saturated stage of a closed loop (`saturated`), on hand-built graphs shaped
//! like a recorded server and the load generator that drives it.

use super::hand::{STORE_LOOP_EDGES, edges, limits, store_loop_vertices, vertex};
use crate::findings::{Edge, EdgeKind, Vertex, VertexId, VertexKind};
use crate::knots::find;
use crate::refine::Shape;
use causeway_format::DurationNs;

fn store_loop(stage_running: f64) -> (Vec<Vertex>, Vec<Edge>) {
    (store_loop_vertices(stage_running), edges(STORE_LOOP_EDGES))
}

#[test]
fn the_saturated_stage_and_its_disk_stand_out_of_the_loop() {
    let (vertices, es) = store_loop(1.0);
    let t = find(&vertices, &es, &limits(), DurationNs(4_300_000_000));
    assert_eq!(t.knots.len(), 1, "{:#?}", t.knots);
    let k = &t.knots[0];
    assert_eq!(k.vertices, vec![VertexId(0), VertexId(3)]);
    assert_eq!(k.shape, Shape::Cycle);
    let c = k.closed_loop.as_ref().expect("a closed loop");
    assert_eq!(c.vertices, vec![VertexId(1), VertexId(2)]);
    assert_eq!(c.edges.len(), 3, "{:?}", c.edges);
    assert!(c.busy > 0.9 && c.others_busy < 0.06, "{c:?}");
}

/// A loop whose stages are evenly loaded has no saturated stage: it stays one knot.
#[test]
fn an_evenly_loaded_loop_stays_whole() {
    let vertices = vec![
        vertex(0, VertexKind::Thread, 1.5, 0.5, 2.3),
        vertex(1, VertexKind::Thread, 1.8, 0.4, 2.1),
        vertex(2, VertexKind::Thread, 1.0, 0.2, 3.1),
    ];
    let es = edges(&[
        (0, 1, EdgeKind::Wait, 2.0, 1.2),
        (1, 2, EdgeKind::Wait, 2.5, 1.1),
        (2, 0, EdgeKind::Wait, 3.0, 1.5),
        (1, 0, EdgeKind::Wait, 1.9, 1.0),
        (2, 1, EdgeKind::Wait, 1.8, 1.6),
    ]);
    let t = find(&vertices, &es, &limits(), DurationNs(4_300_000_000));
    assert_eq!(t.knots.len(), 1);
    assert_eq!(t.knots[0].vertices.len(), 3);
    assert!(t.knots[0].closed_loop.is_none());
}

/// A stage that is busy but not much busier than the rest (here under twice as busy as
/// the handlers) does not stand out: the margin keeps balanced loops whole.
#[test]
fn a_stage_without_margin_does_not_stand_out() {
    let (mut vertices, es) = store_loop(1.0);
    // Handlers busy 45% of their time.
    vertices[1] = vertex(1, VertexKind::SimilarThreads, 20.0, 9.0, 35.0);
    let t = find(&vertices, &es, &limits(), DurationNs(4_300_000_000));
    assert_eq!(t.knots.len(), 1);
    assert_eq!(t.knots[0].vertices.len(), 4);
    assert!(t.knots[0].closed_loop.is_none());
}

/// `v` standing for `n` threads of process `pid`.
fn in_process(mut v: Vertex, pid: u32, n: u32) -> Vertex {
    v = super::hand::with_threads(v, n);
    for t in &mut v.threads {
        t.tgid = Some(causeway_format::Tgid(pid));
    }
    v
}

/// A database whose connection threads (two vertices, process 10) wait on each other
/// at the log flush one of them makes for all, and 16 client threads (process 20) that
/// wait on them and are waited on for the next request: Apache Derby's shape. No vertex
/// stands out, the server as a program does.
fn group_commit_loop() -> (Vec<Vertex>, Vec<Edge>) {
    let vertices = vec![
        in_process(
            vertex(0, VertexKind::SimilarThreads, 6.0, 2.0, 40.0),
            10,
            12,
        ),
        in_process(
            vertex(1, VertexKind::SimilarThreads, 0.5, 0.6, 63.0),
            20,
            16,
        ),
        in_process(vertex(2, VertexKind::SimilarThreads, 2.0, 0.7, 13.3), 10, 4),
        vertex(3, VertexKind::Disk { device: None }, 0.0, 0.0, 0.0),
    ];
    let es = edges(&[
        (0, 0, EdgeKind::Wait, 240.0, 24.0),
        (0, 2, EdgeKind::Wait, 87.0, 8.7),
        (2, 0, EdgeKind::Wait, 85.0, 8.6),
        (1, 0, EdgeKind::Wait, 43.0, 43.0),
        (2, 2, EdgeKind::Wait, 22.0, 2.2),
        (1, 2, EdgeKind::Wait, 14.0, 14.0),
        (0, 3, EdgeKind::Wait, 12.0, 3.0),
        (2, 3, EdgeKind::Wait, 4.0, 1.0),
        (0, 1, EdgeKind::Wait, 30.0, 3.0),
        (2, 1, EdgeKind::Wait, 10.0, 1.0),
        (3, 0, EdgeKind::DeviceIdle, 2.0, 0.0),
    ]);
    (vertices, es)
}

#[test]
fn a_server_program_stands_out_of_the_loop_its_clients_close() {
    let (vertices, es) = group_commit_loop();
    let t = find(&vertices, &es, &limits(), DurationNs(4_000_000_000));
    assert_eq!(t.knots.len(), 1, "{:#?}", t.knots);
    let k = &t.knots[0];
    assert_eq!(k.vertices, vec![VertexId(0), VertexId(2), VertexId(3)]);
    let c = k.closed_loop.as_ref().expect("a closed loop");
    assert_eq!(c.vertices, vec![VertexId(1)]);
    assert!(c.busy > 0.6 && c.others_busy < 0.1, "{c:?}");
}

/// Two programs that drive each other evenly: no program stands out.
#[test]
fn two_evenly_loaded_programs_stay_one_knot() {
    let (mut vertices, es) = group_commit_loop();
    // The clients now work as long as the server does.
    vertices[1] = in_process(
        vertex(1, VertexKind::SimilarThreads, 20.0, 5.0, 39.0),
        20,
        16,
    );
    let t = find(&vertices, &es, &limits(), DurationNs(4_000_000_000));
    assert_eq!(t.knots.len(), 1);
    assert!(t.knots[0].vertices.contains(&VertexId(1)));
    assert!(t.knots[0].closed_loop.is_none());
}
