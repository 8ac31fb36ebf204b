//! Where each wait-for edge's waits blocked in the program's own code, for the
//! `wait_site` column: the census of a fleet groups edges by it, and the innermost
//! frames of a wait stack (`__futex_abstimed_wait_common64`, `__schedule`) are the same
//! for every program, so they cannot tell programs apart.
//!
//! Each wait the bottleneck analysis attributed ([`WaitMap`]) adds its length to the
//! site of the stack its thread blocked in (`causeway-model`'s rule of the program's
//! own frames, worded by `causeway-report`); an edge's site is the heaviest one of
//! the waits from its source to its target. Cascaded weight has no stack of its own,
//! so an edge none of whose direct waits reached the program's frames has none.

use causeway_bottleneck::{Findings, VertexId, WaitMap};
use causeway_format::StackId;
use causeway_model::{OwnCode, SegmentState, Trace};
use causeway_report::site::SiteNames;
use std::collections::HashMap;

/// The site of each edge of `f`, by edge id; `None` where no direct wait's stack holds
/// a frame of the program's.
pub fn wait_sites(trace: &Trace, f: &Findings, waits: &WaitMap) -> Vec<Option<String>> {
    let code = OwnCode::new(trace.tables());
    let mut names: HashMap<StackId, Option<String>> = HashMap::new();
    let mut weight: HashMap<(VertexId, VertexId), HashMap<String, u64>> = HashMap::new();
    for (index, tw) in waits.threads.iter().enumerate() {
        let Some(from) = tw.vertex else { continue };
        let Some(thread) = trace.model().thread_by_index(index as u32) else {
            continue;
        };
        for w in &tw.waits {
            let stack = thread.segment_at(w.start).and_then(|s| match s.state {
                SegmentState::Blocked {
                    switch_out_stack, ..
                } => switch_out_stack.and_then(|st| st.user),
                _ => None,
            });
            let Some(stack) = stack else { continue };
            let site = names.entry(stack).or_insert_with(|| site_of(&code, stack));
            if let Some(site) = site {
                *weight
                    .entry((from, w.to))
                    .or_default()
                    .entry(site.clone())
                    .or_default() += w.end.saturating_since(w.start).0;
            }
        }
    }
    f.edges
        .iter()
        .map(|e| {
            weight.get(&(e.from, e.to)).and_then(|m| {
                // Heaviest, then by text: the same tables on every conversion.
                m.iter()
                    .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                    .map(|(s, _)| s.clone())
            })
        })
        .collect()
}

fn site_of(code: &OwnCode<'_>, stack: StackId) -> Option<String> {
    let own = code.of_stack(stack).filter(|o| !o.is_empty())?;
    let frames = &code.tables().stack(stack)?.frames;
    Some(SiteNames::of(code.tables(), frames, &own).text())
}
