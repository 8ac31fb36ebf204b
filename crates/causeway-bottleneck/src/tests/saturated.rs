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
