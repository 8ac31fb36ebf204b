//! Vertices of the wait-for graph: entities and pseudo threads numbered, similar threads
//! grouped into one vertex (`merge`), and each final vertex's kind, threads and times.

use crate::devices::IdleEdge;
use crate::entities::{Entity, EntityKind, strip_digits};
use crate::findings::Device;
use crate::findings::{ManagedRuntime, ThreadRef, Vertex, VertexId, VertexKind};
use crate::merge;
use crate::stacks::{self, StackWeights};
use crate::titles;
use crate::waker::{Pseudo, WakerKey};
use causeway_format::{DurationNs, Tables};
use causeway_model::{Facts, Model, Thread};
use std::collections::{BTreeMap, BTreeSet};

/// A vertex before merging: an entity or a pseudo thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Raw {
    Entity(u32),
    Pseudo(Pseudo),
}

/// Vertices before merging: entities first, then pseudo threads in a fixed order.
pub(crate) struct RawVertices {
    /// What each raw vertex number stands for.
    pub(crate) raw: Vec<Raw>,
    /// The raw vertex number of each pseudo thread.
    pub(crate) pseudo_vid: BTreeMap<Pseudo, u32>,
}

/// Number the entities and every pseudo thread that an edge or a device report names.
pub(crate) fn number<'a>(
    n_ent: u32,
    wakers: impl Iterator<Item = &'a WakerKey>,
    idle: &[IdleEdge],
    dev_reports: &[(Pseudo, Device)],
) -> RawVertices {
    let mut pseudo: BTreeSet<Pseudo> = BTreeSet::new();
    for k in wakers {
        if let WakerKey::Pseudo(p) = k {
            pseudo.insert(*p);
        }
    }
    pseudo.extend(idle.iter().map(|e| e.device));
    pseudo.extend(dev_reports.iter().map(|(p, _)| *p));
    let pseudo_vid: BTreeMap<Pseudo, u32> = pseudo
        .iter()
        .enumerate()
        .map(|(i, p)| (*p, n_ent + i as u32))
        .collect();
    let mut raw: Vec<Raw> = (0..n_ent).map(Raw::Entity).collect();
    raw.extend(pseudo.iter().map(|p| Raw::Pseudo(*p)));
    RawVertices { raw, pseudo_vid }
}

/// The final vertex of each raw vertex: similar threads grouped when `merge` is on,
/// else each alone.
pub(crate) fn groups(
    raw: &[Raw],
    ents: &[Entity],
    (model, tables): (&Model, &Tables),
    merge: bool,
    similarity: f64,
) -> Vec<u32> {
    let threads = model.threads().as_slice();
    if !merge {
        return (0..raw.len() as u32).collect();
    }
    let keys: Vec<Option<(u32, String)>> = raw
        .iter()
        .map(|r| match r {
            Raw::Entity(e) => match &ents[*e as usize].kind {
                EntityKind::Thread(i) => Some(merge_key(&threads[*i], model)),
                EntityKind::ShortTerm(_) => None,
            },
            Raw::Pseudo(_) => None,
        })
        .collect();
    // User stacks are interned per process (their frames are addresses in one address
    // space), so processes' waits are compared by the text of their user frames.
    let mut canon = stacks::Canonical::default();
    let dists: Vec<StackWeights> = raw
        .iter()
        .zip(&keys)
        .map(|(r, key)| {
            let mut d = StackWeights::new();
            let by_text = key.as_ref().is_some_and(|k| k.1.starts_with('\0'));
            if let Raw::Entity(e) = r {
                for w in &ents[*e as usize].waits {
                    let s = if by_text {
                        canon.of(tables, w.wait_stack)
                    } else {
                        w.wait_stack
                    };
                    stacks::add(&mut d, s, w.len());
                }
            }
            d
        })
        .collect();
    merge::group(&keys, &dists, similarity)
}

/// What a thread must share with others to merge with them: its process and its name
/// without digits; or, for the only thread of a process, its parent, executable and
/// name without digits, so that pre-forked worker processes merge as threads of a pool
/// do (a NUL byte, never in a name, keeps the two kinds of key apart).
fn merge_key(t: &Thread, model: &Model) -> (u32, String) {
    let tgid = t.tgid.map_or(0, |g| g.0);
    // Goroutines group by their start function, exactly: two closures of one function
    // (`f.func1`, `f.func2`) are different work.
    if model.goroutine(t.tid).is_some() {
        return (tgid, format!("\0goroutine\0{}", t.comm));
    }
    let single = t
        .tgid
        .and_then(|g| model.process(g))
        .filter(|p| t.tid.0 == tgid && p.threads.len() == 1);
    if let Some(p) = single
        && let Some(parent) = p.parent
    {
        let key = format!("\0process\0{}\0{}", p.exe(), strip_digits(&t.comm));
        return (parent.0, key);
    }
    (tgid, strip_digits(&t.comm))
}

/// The final vertices, from the group of each raw vertex.
pub(crate) fn build(
    groups: &[u32],
    raw: &[Raw],
    ents: &[Entity],
    (model, facts): (&Model, &Facts),
    tables: &Tables,
) -> Vec<Vertex> {
    let threads = model.threads().as_slice();
    let goids: Vec<Option<u64>> = threads
        .iter()
        .map(|t| model.goroutine(t.tid).map(|g| g.goid))
        .collect();
    let titles: Vec<Option<String>> = threads
        .iter()
        .map(|t| titles::of_thread(t, model, facts))
        .collect();
    let n_final = groups.iter().copied().max().map_or(0, |m| m as usize + 1);
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); n_final];
    for (old, &g) in groups.iter().enumerate() {
        members[g as usize].push(old as u32);
    }
    members
        .iter()
        .enumerate()
        .map(|(id, ms)| {
            make_vertex(
                VertexId(id),
                ms,
                raw,
                ents,
                (threads, &titles, &goids),
                tables,
            )
        })
        .collect()
}

fn member_threads(e: &EntityKind) -> Vec<usize> {
    match e {
        EntityKind::Thread(i) => vec![*i],
        EntityKind::ShortTerm(m) => m.clone(),
    }
}

fn make_vertex(
    id: VertexId,
    ms: &[u32],
    raw: &[Raw],
    ents: &[Entity],
    (threads, titles, goids): (&[Thread], &[Option<String>], &[Option<u64>]),
    tables: &Tables,
) -> Vertex {
    let mut trefs = Vec::new();
    let (mut running, mut runnable, mut waiting, mut held) = (0u64, 0u64, 0u64, 0u64);
    let mut kind = VertexKind::Thread;
    for &m in ms {
        match raw[m as usize] {
            Raw::Entity(e) => {
                let ent = &ents[e as usize];
                if matches!(ent.kind, EntityKind::ShortTerm(_)) {
                    kind = VertexKind::ShortTermThreads;
                }
                waiting += ent.waits.iter().map(|w| w.len()).sum::<u64>() + ent.exit_ns;
                // Runnable time held back by a CPU quota is a wait here (its waits
                // point to the quota), not time spent needing a CPU.
                held += ent
                    .waits
                    .iter()
                    .filter(|w| matches!(w.waker, WakerKey::Pseudo(Pseudo::Quota(_))))
                    .map(|w| w.len())
                    .sum::<u64>();
                for i in member_threads(&ent.kind) {
                    let t = &threads[i];
                    running += t.totals.running.0;
                    runnable += t.totals.runnable.0;
                    trefs.push(ThreadRef {
                        tid: t.tid,
                        tgid: t.tgid,
                        comm: t.comm.clone(),
                        title: titles[i].clone(),
                        goroutine: goids[i],
                    });
                }
            }
            Raw::Pseudo(p) => kind = pseudo_kind(p, tables),
        }
    }
    if ms.len() > 1 {
        let first = trefs.first().and_then(|t| t.tgid);
        kind = if trefs.iter().all(|t| t.tgid == first) {
            VertexKind::SimilarThreads
        } else {
            VertexKind::SimilarProcesses
        };
    }
    Vertex {
        id,
        kind,
        threads: trefs,
        running: DurationNs(running),
        runnable: DurationNs(runnable.saturating_sub(held)),
        waiting: DurationNs(waiting),
        on_cpu: None,
    }
}

fn pseudo_kind(p: Pseudo, tables: &Tables) -> VertexKind {
    match p {
        Pseudo::Disk(d) => VertexKind::Disk { device: Some(d) },
        Pseudo::DiskUnknown => VertexKind::Disk { device: None },
        Pseudo::Nic(n) => VertexKind::Nic {
            interface: Some(tables.string(n).to_string()),
        },
        Pseudo::NicUnknown => VertexKind::Nic { interface: None },
        Pseudo::Timer => VertexKind::Timer,
        Pseudo::Irq(n) => VertexKind::Interrupt {
            name: tables.string(n).to_string(),
        },
        Pseudo::Softirq(vec) => VertexKind::Softirq { vec },
        Pseudo::Runtime(tgid) => VertexKind::RuntimePauses {
            runtime: ManagedRuntime::Jvm,
            tgid,
            pauses: 0,
            longest: DurationNs(0),
            total: DurationNs(0),
        },
        Pseudo::Outside => VertexKind::OtherProcesses,
        // Filled in by `describe_quotas`.
        Pseudo::Quota(g) => VertexKind::CpuQuota {
            cgroup: format!("#{g}"),
            quota_us: 0,
            period_us: 0,
            periods: 0,
            throttled: 0,
            held: DurationNs(0),
        },
    }
}

/// Fill in each CPU quota vertex's figures from the trace's throttling (a group that
/// is a process's CPU affinity becomes a [`VertexKind::CpuAffinity`]).
pub(crate) fn describe_quotas(vertices: &mut [Vertex], quota: &causeway_model::quota::Throttling) {
    // A process's name: its main thread's, else any of its threads'.
    let name_of = |tgid: causeway_format::Tgid, vs: &[Vertex]| -> String {
        let threads = || {
            vs.iter()
                .flat_map(|v| &v.threads)
                .filter(|t| t.tgid == Some(tgid))
        };
        threads()
            .find(|t| t.tid.0 == tgid.0)
            .or_else(|| threads().next())
            .map_or_else(String::new, |t| t.comm.clone())
    };
    let names: Vec<String> = quota
        .groups
        .iter()
        .map(|g| {
            g.affinity
                .as_ref()
                .map_or_else(String::new, |a| name_of(a.tgid, vertices))
        })
        .collect();
    for v in vertices {
        if let VertexKind::CpuQuota {
            cgroup,
            quota_us,
            period_us,
            periods,
            throttled,
            held,
        } = &mut v.kind
            && let Some(gi) = cgroup
                .strip_prefix('#')
                .and_then(|i| i.parse::<usize>().ok())
            && let Some(g) = quota.groups.get(gi)
        {
            if let Some(a) = &g.affinity {
                v.kind = VertexKind::CpuAffinity {
                    tgid: a.tgid,
                    process: names[gi].clone(),
                    cpus: a.cpus.clone(),
                    online: a.online,
                    idle_outside: DurationNs(a.idle_outside_ns),
                    held: DurationNs(g.held_ns),
                };
                continue;
            }
            *cgroup = g.path.clone();
            (*quota_us, *period_us, *periods, *throttled) =
                (g.quota_us, g.period_us, g.periods, g.throttled);
            *held = DurationNs(g.held_ns);
        }
    }
}
