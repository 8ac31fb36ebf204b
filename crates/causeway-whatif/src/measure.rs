//! What is counted as the program's repeated work, and its rate in the recording and
//! in a replay.

use crate::contention::{CpuWaits, cpu_waits};
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
    /// The vertices whose threads are counted: the throughput-bearing ones that wake
    /// at least a tenth as often as the busiest of them.
    pub vertices: Vec<VertexId>,
    /// Why these: `knot`, `sink` or `all` (no knot or sink: every recorded thread).
    pub basis: &'static str,
    /// Their threads counted (model threads, several per merged vertex; a thread
    /// needs two wake-ups in the window to be counted).
    pub threads: usize,
    /// Wake-ups counted.
    pub cycles: u64,
    /// The window of the recording they are counted in (recorded times, ns).
    pub window: (u64, u64),
    /// The wake-ups' rate in the recording, per second (first to last counted).
    pub recorded_per_s: f64,
    /// How long the counted threads waited for a CPU in the window.
    pub cpu_waits: CpuWaits,
}

/// The wake-ups counted, thread by thread (the blocked segments they end).
#[derive(Clone, Debug)]
pub(crate) struct Cycles {
    pub(crate) counted: Counted,
    /// Per counted thread, its wake-ups in time order (at least two each).
    pub(crate) threads: Vec<Vec<SegmentId>>,
    /// The threads' spans from first to last counted wake-up, summed (recorded).
    pub(crate) recorded_spans: u64,
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

/// A vertex whose wake-ups are fewer than this share of the busiest counted vertex's
/// is not counted: a main thread waiting in `join` is in the chain to a sink but does
/// not repeat the work (and one late wake-up of it would stand for the whole window).
const MIN_SHARE_OF_BUSIEST: f64 = 0.1;

/// Find the counted wake-ups: blocked segments of the bearing vertices' threads that
/// a wake-up ended inside the middle of the recording.
pub(crate) fn cycles(model: &Model, f: &Findings, waits: &WaitMap) -> Option<Cycles> {
    let span = model.span()?;
    let len = span.end.0.saturating_sub(span.start.0);
    let cut = (len as f64 * EDGE_SHARE) as u64;
    let window = (span.start.0 + cut, span.end.0 - cut);
    let (bearing, basis) = bearing(f);
    // Each bearing thread's wake-ups in the window, in time order.
    let mut per_thread: Vec<(VertexId, Vec<SegmentId>)> = Vec::new();
    for (ti, tw) in (0u32..).zip(&waits.threads) {
        let Some(v) = tw.vertex.filter(|v| bearing.contains(v)) else {
            continue;
        };
        let Some(t) = model.thread_by_index(ti) else {
            continue;
        };
        let ends: Vec<SegmentId> = (0u32..)
            .zip(&t.segments)
            .filter(|(_, s)| {
                matches!(s.state, SegmentState::Blocked { waker: Some(_), .. })
                    && s.end.0 >= window.0
                    && s.end.0 <= window.1
            })
            .map(|(si, _)| SegmentId {
                thread: ti,
                index: si,
            })
            .collect();
        per_thread.push((v, ends));
    }
    let by_vertex = |v: VertexId| -> usize {
        per_thread
            .iter()
            .filter(|(x, _)| *x == v)
            .map(|(_, e)| e.len())
            .sum()
    };
    let busiest = bearing.iter().map(|&v| by_vertex(v)).max()?;
    let vertices: Vec<VertexId> = bearing
        .iter()
        .copied()
        .filter(|&v| by_vertex(v) as f64 >= busiest as f64 * MIN_SHARE_OF_BUSIEST)
        .collect();
    let threads: Vec<Vec<SegmentId>> = per_thread
        .into_iter()
        .filter(|(v, e)| vertices.contains(v) && e.len() >= 2)
        .map(|(_, e)| e)
        .collect();
    let cycles: u64 = threads.iter().map(|e| e.len() as u64).sum();
    let time = |id: &SegmentId| model.segment(*id).map_or(0, |s| s.end.0);
    let lo = threads.iter().filter_map(|e| e.first()).map(time).min()?;
    let hi = threads.iter().filter_map(|e| e.last()).map(time).max()?;
    let recorded_per_s = rate(cycles, hi - lo)?;
    let recorded_spans = threads
        .iter()
        .map(|e| time(&e[e.len() - 1]) - time(&e[0]))
        .sum();
    Some(Cycles {
        counted: Counted {
            vertices,
            basis,
            threads: threads.len(),
            cycles,
            window,
            recorded_per_s,
            cpu_waits: cpu_waits(
                model,
                &threads.iter().map(|e| e[0].thread).collect::<Vec<_>>(),
                window,
            ),
        },
        threads,
        recorded_spans,
    })
}

/// `cycles` wake-ups from the first to the last over `ns`: `cycles - 1` intervals.
fn rate(cycles: u64, ns: u64) -> Option<f64> {
    (cycles >= MIN_CYCLES && ns > 0).then(|| (cycles - 1) as f64 * 1e9 / ns as f64)
}

/// How much faster the counted threads go in a replay: their summed recorded spans
/// (first to last counted wake-up, thread by thread) over their summed replayed spans
/// (each thread on its own, so that one thread held back by something outside does
/// not stand for the others), and the replayed window (first to last, all threads).
pub(crate) fn replayed_speedup(c: &Cycles, r: &Replayed) -> Option<(f64, u64)> {
    let mut spans = 0u64;
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for e in &c.threads {
        let (a, b) = (r.end(*e.first()?)?, r.end(*e.last()?)?);
        spans += b.saturating_sub(a);
        lo = lo.min(a);
        hi = hi.max(b);
    }
    let speedup = if spans == 0 {
        f64::INFINITY
    } else {
        c.recorded_spans as f64 / spans as f64
    };
    Some((speedup, hi.saturating_sub(lo)))
}
