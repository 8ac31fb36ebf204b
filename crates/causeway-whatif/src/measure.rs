//! What is counted as the program's repeated work, and its rate in the recording and
//! in a replay.

use crate::replay::Replayed;
use causeway_bottleneck::{Findings, VertexId, WaitMap};
use causeway_model::{Model, SegmentId, SegmentState};

/// Fewest wake-ups a rate is computed from.
pub(crate) const MIN_CYCLES: u64 = 20;

/// The share of the recording left out at each end (start-up and wind-down are not
/// the steady state whose rate is predicted).
const EDGE_SHARE: f64 = 0.1;

/// What a prediction counts: the wake-ups of the throughput-bearing threads (each is
/// one round of their work: a request taken, a lock handed over, a flush completed)
/// inside a window of the recording.
#[derive(Clone, Debug, PartialEq)]
pub struct Counted {
    /// The vertices whose threads are counted.
    pub vertices: Vec<VertexId>,
    /// Why these: `knot`, `sink` or `all` (no knot or sink: every recorded thread).
    pub basis: &'static str,
    /// Their threads (model threads, several per merged vertex).
    pub threads: usize,
    /// Wake-ups counted.
    pub cycles: u64,
    /// The window of the recording they are counted in (recorded times, ns).
    pub window: (u64, u64),
    /// The wake-ups' rate in the recording, per second (first to last counted).
    pub recorded_per_s: f64,
}

/// The wake-ups counted, by segment (the blocked segment each ends).
#[derive(Clone, Debug)]
pub(crate) struct Cycles {
    pub(crate) counted: Counted,
    pub(crate) ends: Vec<SegmentId>,
}

/// The vertices whose rate is the program's: the first knot's thread vertices, else
/// the waiters on the way to the first sink, else every thread vertex.
fn bearing(f: &Findings) -> (Vec<VertexId>, &'static str) {
    let threads = |vs: &[VertexId]| -> Vec<VertexId> {
        vs.iter()
            .copied()
            .filter(|v| f.vertices.get(v.0).is_some_and(|x| x.kind.is_thread()))
            .collect()
    };
    if let Some(k) = f.knots.first() {
        let v = threads(&k.vertices);
        if !v.is_empty() {
            return (v, "knot");
        }
    }
    if let Some(s) = f.sinks.first() {
        let v = threads(&s.chain);
        if !v.is_empty() {
            return (v, "sink");
        }
    }
    let all: Vec<VertexId> = f.vertices.iter().map(|v| v.id).collect();
    (threads(&all), "all")
}

/// Find the counted wake-ups: blocked segments of the bearing vertices' threads that
/// a wake-up ended inside the middle of the recording.
pub(crate) fn cycles(model: &Model, f: &Findings, waits: &WaitMap) -> Option<Cycles> {
    let span = model.span()?;
    let len = span.end.0.saturating_sub(span.start.0);
    let cut = (len as f64 * EDGE_SHARE) as u64;
    let window = (span.start.0 + cut, span.end.0 - cut);
    let (vertices, basis) = bearing(f);
    let mut ends = Vec::new();
    let mut threads = 0;
    let mut times = Vec::new();
    for (ti, tw) in (0u32..).zip(&waits.threads) {
        if !tw.vertex.is_some_and(|v| vertices.contains(&v)) {
            continue;
        }
        threads += 1;
        let Some(t) = model.thread_by_index(ti) else {
            continue;
        };
        for (si, s) in (0u32..).zip(&t.segments) {
            let woken = matches!(s.state, SegmentState::Blocked { waker: Some(_), .. });
            if woken && s.end.0 >= window.0 && s.end.0 <= window.1 {
                ends.push(SegmentId {
                    thread: ti,
                    index: si,
                });
                times.push(s.end.0);
            }
        }
    }
    let cycles = ends.len() as u64;
    let (lo, hi) = (times.iter().min()?, times.iter().max()?);
    let recorded_per_s = rate(cycles, hi - lo)?;
    Some(Cycles {
        counted: Counted {
            vertices,
            basis,
            threads,
            cycles,
            window,
            recorded_per_s,
        },
        ends,
    })
}

/// `cycles` wake-ups from the first to the last over `ns`: `cycles - 1` intervals.
fn rate(cycles: u64, ns: u64) -> Option<f64> {
    (cycles >= MIN_CYCLES && ns > 0).then(|| (cycles - 1) as f64 * 1e9 / ns as f64)
}

/// The counted wake-ups' rate in a replay, and the replayed window's length.
pub(crate) fn replayed_rate(c: &Cycles, r: &Replayed) -> Option<(f64, u64)> {
    let mut lo = u64::MAX;
    let mut hi = 0;
    for &id in &c.ends {
        let t = r.end(id)?;
        lo = lo.min(t);
        hi = hi.max(t);
    }
    let ns = hi.checked_sub(lo)?;
    Some((rate(c.counted.cycles, ns)?, ns))
}
