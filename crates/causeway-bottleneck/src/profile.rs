//! On-CPU profiles of thread vertices, from the recorder's samples: where a sink's
//! threads burn their CPU, or what a knot's threads run when they are not waiting.
//!
//! wPerf reports a sink when a thread's own execution is the limit; the next question
//! is which code that execution is, which only samples answer. Samples are grouped by
//! function names (not addresses), so one hot loop is one line however many
//! instructions the samples landed on. A sink's advice names the program's own code
//! its samples ran (`causeway_model::sitename`'s wording, as the diagnosis does), since
//! "profile it on CPU" alone leaves the user the next step.

use crate::findings::{CpuProfile, SampledSite, SampledStack, Vertex};
use causeway_format::{StackId, Tables};
use causeway_model::sitename::SiteNames;
use causeway_model::{Facts, OwnCode};
use std::collections::HashMap;

/// Stacks shown per vertex.
const TOP_STACKS: usize = 3;
/// User functions kept per stack (innermost first).
const USER_DEPTH: usize = 6;
/// Kernel functions kept per stack.
const KERNEL_DEPTH: usize = 3;
/// Own functions that tell sites apart: the innermost and its caller, so one
/// function's samples are one site whichever library leaf they landed in.
const SITE_DEPTH: usize = 2;
/// Sites kept per vertex.
const TOP_SITES: usize = 3;

/// Give each thread vertex with samples its profile.
pub(crate) fn attach(vertices: &mut [Vertex], facts: &Facts, tables: &Tables) {
    if facts.sample_count() == 0 {
        return;
    }
    let mut names = Names::default();
    let mut sites = Sites::new(tables);
    for v in vertices.iter_mut().filter(|v| v.kind.is_thread()) {
        v.on_cpu = profile(v, facts, tables, &mut names, &mut sites);
    }
}

/// The own-code site of each user stack, named once per stack id.
struct Sites<'t> {
    code: OwnCode<'t>,
    memo: HashMap<StackId, SiteNames>,
}

impl<'t> Sites<'t> {
    fn new(tables: &'t Tables) -> Self {
        Sites {
            code: OwnCode::new(tables),
            memo: HashMap::new(),
        }
    }

    fn of(&mut self, id: StackId) -> &SiteNames {
        let code = &self.code;
        self.memo.entry(id).or_insert_with(|| {
            let t = code.tables();
            let frames = t.stack(id).map_or(&[][..], |s| &s.frames[..]);
            let mut n = SiteNames::of(t, frames, &code.own_frames(frames));
            n.own.truncate(SITE_DEPTH);
            n
        })
    }
}

/// Samples per site, keyed by its own functions; each site's context (the library
/// call and leaf) is the one most of its samples had.
#[derive(Default)]
struct SiteCounts(HashMap<Vec<String>, HashMap<Context, u64>>);

/// A site's library call and leaf.
type Context = (Option<String>, Option<String>);

impl SiteCounts {
    fn add(&mut self, n: &SiteNames) {
        *self
            .0
            .entry(n.own.clone())
            .or_default()
            .entry((n.entry.clone(), n.leaf.clone()))
            .or_default() += 1;
    }

    /// The most sampled sites, most first; ties by their words.
    fn top(self) -> Vec<SampledSite> {
        let mut v: Vec<SampledSite> = self
            .0
            .into_iter()
            .filter_map(|(own, ctx)| {
                let samples = ctx.values().sum();
                let ((entry, leaf), _) = ctx
                    .into_iter()
                    .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))?;
                // No frame of the program's own code: the function it ran, plain.
                let text = match own.is_empty() {
                    true => leaf.or(entry).unwrap_or_default(),
                    false => {
                        causeway_model::sitename::text(&own, entry.as_deref(), leaf.as_deref())
                    }
                };
                (!text.is_empty()).then_some(SampledSite { samples, text })
            })
            .collect();
        v.sort_by(|a, b| b.samples.cmp(&a.samples).then_with(|| a.text.cmp(&b.text)));
        v.truncate(TOP_SITES);
        v
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

fn profile(
    v: &Vertex,
    facts: &Facts,
    tables: &Tables,
    names: &mut Names,
    sites: &mut Sites,
) -> Option<CpuProfile> {
    let mut counts: HashMap<(Vec<String>, Vec<String>), u64> = HashMap::new();
    let mut site_counts = SiteCounts::default();
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
            if let Some(u) = s.user {
                site_counts.add(sites.of(u));
            }
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
        sites: site_counts.top(),
    })
}
