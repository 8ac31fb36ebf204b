//! The bottleneck verdict as tracks: one per knot, its edges as slices over the
//! recording, with weight, share and the heaviest stacks attached.

use super::states::{arg_s, arg_u};
use super::tracks::ANALYSIS;
use super::types::{Category, Slice, Timeline, Track, TrackKind};
use crate::bottleneck::BottleneckView;
use causeway_model::Trace;
use std::collections::BTreeMap;

pub(super) fn add(trace: &Trace, b: &BottleneckView, tl: &mut Timeline) {
    let Some(span) = trace.model().span() else {
        return;
    };
    let mut by_knot: BTreeMap<usize, Vec<_>> = BTreeMap::new();
    for e in b.knot_edges() {
        by_knot.entry(e.knot_rank).or_default().push(e);
    }
    for (rank, edges) in by_knot {
        let uuid = ANALYSIS | rank as u64;
        tl.tracks.push(Track {
            uuid,
            parent: None,
            kind: TrackKind::Analysis,
            name: format!("bottleneck knot {rank}"),
        });
        // Edges are drawn one after another across the recording, heaviest first, each
        // as long as its part of the knot's weight, so their lengths compare at a
        // glance; the figures are in the arguments.
        let total: u64 = edges.iter().map(|e| e.weight_ns).sum::<u64>().max(1);
        let mut at = span.start.0;
        for e in edges {
            let len = (span.duration().0 as f64 * e.weight_ns as f64 / total as f64) as u64;
            let mut args = vec![
                arg_u("weight_ns", e.weight_ns),
                arg_s("share", format!("{:.1}%", e.share * 100.0)),
                arg_s("advice", e.advice.clone()),
            ];
            if !e.wait_stack.is_empty() {
                args.push(arg_s("wait_stack", e.wait_stack.join("\n")));
            }
            if !e.waker_stack.is_empty() {
                args.push(arg_s("waker_stack", e.waker_stack.join("\n")));
            }
            tl.slices.push(Slice {
                track: uuid,
                start_ns: at,
                end_ns: at + len.max(1),
                name: format!("{} waits for {}", e.from, e.to),
                category: Category::Bottleneck,
                args,
                flows_in: Vec::new(),
            });
            at += len.max(1);
        }
    }
}
