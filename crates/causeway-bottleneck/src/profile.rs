//! On-CPU profiles of thread vertices, from the recorder's samples: where a sink's
//! threads burn their CPU, or what a knot's threads run when they are not waiting.
//!
//! wPerf reports a sink when a thread's own execution is the limit; the next question
//! is which code that execution is, which only samples answer. Samples are grouped by
//! function names (not addresses), so one hot loop is one line however many
//! instructions the samples landed on.

use crate::findings::{CpuProfile, SampledStack, Vertex};
use causeway_format::{StackId, Tables};
use causeway_model::Facts;
use std::collections::HashMap;

/// Stacks shown per vertex.
const TOP_STACKS: usize = 3;
/// User functions kept per stack (innermost first).
const USER_DEPTH: usize = 6;
/// Kernel functions kept per stack.
const KERNEL_DEPTH: usize = 3;

/// Give each thread vertex with samples its profile.
pub(crate) fn attach(vertices: &mut [Vertex], facts: &Facts, tables: &Tables) {
    if facts.sample_count() == 0 {
        return;
    }
    let mut names = Names::default();
    for v in vertices.iter_mut().filter(|v| v.kind.is_thread()) {
        v.on_cpu = profile(v, facts, tables, &mut names);
    }
}

/// Function names of stacks, computed once per stack id.
#[derive(Default)]
struct Names(HashMap<(StackId, usize), Vec<String>>);

impl Names {
    fn of(&mut self, tables: &Tables, id: Option<StackId>, depth: usize) -> Vec<String> {
        let Some(id) = id else {
            return Vec::new();
        };
        self.0
            .entry((id, depth))
            .or_insert_with(|| {
                let Some(stack) = tables.stack(id) else {
                    return Vec::new();
                };
                let mut out = Vec::new();
                for &f in &stack.frames {
                    if out.len() >= depth {
                        break;
                    }
                    out.extend(tables.frame_functions(f));
                }
                out.truncate(depth);
                out
            })
            .clone()
    }
}

fn profile(v: &Vertex, facts: &Facts, tables: &Tables, names: &mut Names) -> Option<CpuProfile> {
    let mut counts: HashMap<(Vec<String>, Vec<String>), u64> = HashMap::new();
    let (mut samples, mut in_kernel) = (0u64, 0u64);
    for t in &v.threads {
        for s in facts.samples(t.tid) {
            samples += 1;
            in_kernel += u64::from(s.kernel.is_some());
            let key = (
                names.of(tables, s.user, USER_DEPTH),
                names.of(tables, s.kernel, KERNEL_DEPTH),
            );
            *counts.entry(key).or_default() += 1;
        }
    }
    if samples == 0 {
        return None;
    }
    let mut ranked: Vec<_> = counts.into_iter().collect();
    // Most samples first; ties by the frames, so the order does not depend on hashing.
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let top = ranked
        .into_iter()
        .take(TOP_STACKS)
        .map(|((user, kernel), n)| SampledStack {
            samples: n,
            user,
            kernel,
        })
        .collect();
    Some(CpuProfile {
        samples,
        in_kernel,
        top,
    })
}
