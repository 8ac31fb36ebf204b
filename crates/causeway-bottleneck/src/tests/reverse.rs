//! Rare reverse arcs: inside a component with exits, an arc lighter than 5% of the arc
//! back is left out of knot finding, so that a pipeline's own cycle shows as a knot
//! although its network thread waits a little for the clients.

use super::pauses::{edges, vertices};
use crate::findings::{VertexId, VertexKind};
use crate::knots::{Limits, find};
use causeway_format::DurationNs;

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

const NET: usize = 0;
const HANDLERS: usize = 1;
const DISK: usize = 2;
const CLIENT: usize = 3;
const RUNTIME: usize = 4;
const TIMER: usize = 5;

/// net ⇄ handlers ⇄ disk; the client waits on net (8 s) and net on the client
/// (`back`); the client's runtime thread waits on the client and sleeps on a timer.
fn pipeline(back: u64) -> crate::knots::Terminals {
    let vs = vertices(&[
        (VertexKind::Thread, 1, 4 * S, S),
        (VertexKind::SimilarThreads, 8, 30 * S, S),
        (VertexKind::Disk { device: None }, 0, 0, 0),
        (VertexKind::Thread, 1, 4 * S, S / 2),
        (VertexKind::Thread, 1, 4 * S, S / 10),
        (VertexKind::Timer, 0, 0, 0),
    ]);
    let es = edges(&[
        (NET, HANDLERS, 32 * S, 5_000, 3 * S),
        (HANDLERS, NET, 28 * S, 3_500, 28 * S),
        (HANDLERS, DISK, 17 * S, 28_000, 1_500 * MS),
        (DISK, HANDLERS, 2_800 * MS, 0, 0),
        (CLIENT, NET, 8 * S, 3_000, 2_800 * MS),
        (NET, CLIENT, back, 40, back),
        (RUNTIME, CLIENT, 2_700 * MS, 500, 500 * MS),
        (CLIENT, RUNTIME, 84 * MS, 20, 20 * MS),
        (RUNTIME, TIMER, 3 * S, 40, 3 * S),
    ]);
    let limits = Limits {
        min_edge_ns: 40 * MS,
        threshold_ns: 800 * MS,
        leak_fraction: 0.05,
    };
    find(&vs, &es, &limits, DurationNs(4 * S))
}

#[test]
fn a_rare_wait_for_the_clients_does_not_hide_the_pipelines_knot() {
    let t = pipeline(68 * MS);
    assert_eq!(t.knots.len(), 1, "{:?}", t.knots);
    assert_eq!(
        t.knots[0].vertices,
        vec![VertexId(NET), VertexId(HANDLERS), VertexId(DISK)]
    );
    // Waiting on the clients nearly as much as they wait on it: the clients are part
    // of the closed loop and stay in the knot (their runtime's rare stop is left out).
    let t = pipeline(6 * S);
    assert_eq!(t.knots.len(), 1, "{:?}", t.knots);
    assert_eq!(
        t.knots[0].vertices,
        vec![
            VertexId(NET),
            VertexId(HANDLERS),
            VertexId(DISK),
            VertexId(CLIENT)
        ]
    );
}
