//! The pipeline: waits → cascade → device idle edges → vertices (merged) → knots and
//! sinks → report.

use crate::advice;
use crate::cascade::{self, EdgeAcc};
use crate::devices::{self, disk_name};
use crate::entities::{self, EntityKind, strip_digits};
use crate::error::BottleneckError;
use crate::graph::{Arc, Terminal, terminals};
use crate::input::Input;
use crate::merge;
use crate::options::Options;
use crate::refine::{Refined, refine};
use crate::report::{
    Edge, EdgeKind, Knot, OffCpu, Quality, Report, Sink, ThreadRef, Vertex, VertexKind,
};
use crate::stacks::{self, StackWeights};
use crate::upstream;
use crate::waits::Resolver;
use crate::waker::{DeviceSet, Pseudo, WakerKey};
use causeway_format::Tables;
use causeway_model::Thread;
use causeway_model::Trace;
use std::collections::{BTreeMap, BTreeSet};

/// A vertex before merging: an entity or a pseudo thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Raw {
    Entity(u32),
    Pseudo(Pseudo),
}

fn check(opts: &Options) -> Result<(), BottleneckError> {
    let bad = |name, reason: &str| {
        Err(BottleneckError::InvalidOption {
            name,
            reason: reason.to_string(),
        })
    };
    if !opts.threshold_fraction.is_finite() || opts.threshold_fraction < 0.0 {
        return bad(
            "threshold",
            "must be a non-negative fraction of the recording",
        );
    }
    if !(0.0..=1.0).contains(&opts.min_edge_fraction) {
        return bad(
            "min-edge",
            "must be a fraction of the recording between 0 and 1",
        );
    }
    if !(0.0..=1.0).contains(&opts.similarity) {
        return bad("similarity", "must be between 0 and 1");
    }
    if !(0.0..=1.0).contains(&opts.short_term_fraction) {
        return bad("short-term fraction", "must be between 0 and 1");
    }
    for (name, v) in [
        ("nic-capacity", opts.nic_capacity),
        ("disk-bandwidth", opts.disk_bandwidth),
        ("disk-iops", opts.disk_iops),
    ] {
        if v.is_some_and(|c| !c.is_finite() || c <= 0.0) {
            return bad(name, "must be a positive number");
        }
    }
    Ok(())
}

/// Run the whole analysis.
pub fn analyze(trace: &Trace, opts: &Options) -> Result<Report, BottleneckError> {
    check(opts)?;
    let input = &Input::new(trace);
    let model = input.model;
    let threads = model.threads().as_slice();
    let span = model.span().ok_or(BottleneckError::Empty)?;
    if threads.iter().all(|t| t.segments.is_empty()) {
        return Err(BottleneckError::Empty);
    }
    let duration = span.duration().0.max(1);
    let threshold_ns = (duration as f64 * opts.threshold_fraction) as u64;
    let min_edge_ns = (duration as f64 * opts.min_edge_fraction) as u64;

    let recorded = input.facts.recorded();
    let inside = |t: &Thread| recorded.is_none_or(|r| t.tgid.is_some_and(|g| r.contains(&g)));
    let (kinds, entity_of) = entities::assign(model, opts.merge, opts.short_term_fraction, &inside);
    let disks: BTreeSet<_> = model.block_requests().iter().map(|r| r.dev).collect();
    let device_set = DeviceSet {
        sole_disk: (disks.len() == 1).then(|| disks.first().copied()).flatten(),
        sole_nic: (input.facts.net_devices().len() == 1)
            .then(|| input.facts.net_devices().keys().next().copied())
            .flatten(),
    };
    let resolver = Resolver {
        model,
        tables: input.tables,
        facts: input.facts,
        devices: device_set,
        threads,
        entity_of: &entity_of,
    };
    let (ents, wstats) = entities::build(kinds, &resolver);
    let (edge_map, cstats) = cascade::run(&ents);
    let (idle, dev_reports) =
        devices::idle_edges(model, input.tables, input.facts, &resolver, opts);

    // Number vertices: entities first, then pseudo threads in a fixed order.
    let mut pseudo: BTreeSet<Pseudo> = BTreeSet::new();
    for (_, k) in edge_map.keys() {
        if let WakerKey::Pseudo(p) = k {
            pseudo.insert(*p);
        }
    }
    pseudo.extend(idle.iter().map(|e| e.device));
    pseudo.extend(dev_reports.iter().map(|(p, _)| *p));
    let n_ent = ents.len() as u32;
    let pseudo_vid: BTreeMap<Pseudo, u32> = pseudo
        .iter()
        .enumerate()
        .map(|(i, p)| (*p, n_ent + i as u32))
        .collect();
    let mut raw: Vec<Raw> = (0..n_ent).map(Raw::Entity).collect();
    raw.extend(pseudo.iter().map(|p| Raw::Pseudo(*p)));

    let mut raw_edges: BTreeMap<(u32, u32), (EdgeKind, EdgeAcc)> = BTreeMap::new();
    let mut sorted_edges: Vec<_> = edge_map.into_iter().collect();
    sorted_edges.sort_by_key(|a| a.0);
    for ((from, to), acc) in sorted_edges {
        let to = match to {
            WakerKey::Entity(e) => e,
            WakerKey::Pseudo(p) => pseudo_vid[&p],
            WakerKey::None => continue,
        };
        raw_edges
            .entry((from, to))
            .or_insert_with(|| (EdgeKind::Wait, EdgeAcc::default()))
            .1
            .merge(acc);
    }
    for e in &idle {
        let slot = raw_edges
            .entry((pseudo_vid[&e.device], e.entity))
            .or_insert_with(|| (EdgeKind::DeviceIdle, EdgeAcc::default()));
        slot.1.ns += e.ns;
    }

    // Per raw vertex: running, runnable, waiting time and wait-stack distribution.
    let member_threads = |e: &EntityKind| -> Vec<usize> {
        match e {
            EntityKind::Thread(i) => vec![*i],
            EntityKind::ShortTerm(m) => m.clone(),
        }
    };
    let mut groups: Vec<u32> = (0..raw.len() as u32).collect();
    if opts.merge {
        let keys: Vec<Option<(u32, String)>> = raw
            .iter()
            .map(|r| match r {
                Raw::Entity(e) => match &ents[*e as usize].kind {
                    EntityKind::Thread(i) => {
                        let t = &threads[*i];
                        Some((t.tgid.map_or(0, |g| g.0), strip_digits(&t.comm)))
                    }
                    EntityKind::ShortTerm(_) => None,
                },
                Raw::Pseudo(_) => None,
            })
            .collect();
        let dists: Vec<StackWeights> = raw
            .iter()
            .map(|r| {
                let mut d = StackWeights::new();
                if let Raw::Entity(e) = r {
                    for w in &ents[*e as usize].waits {
                        stacks::add(&mut d, w.wait_stack, w.len());
                    }
                }
                d
            })
            .collect();
        groups = merge::group(&keys, &dists, opts.similarity);
    }
    let n_final = groups.iter().copied().max().map_or(0, |m| m as usize + 1);
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); n_final];
    for (old, &g) in groups.iter().enumerate() {
        members[g as usize].push(old as u32);
    }

    let mut vertices: Vec<Vertex> = Vec::with_capacity(n_final);
    for (id, ms) in members.iter().enumerate() {
        vertices.push(make_vertex(
            id,
            ms,
            &raw,
            &ents,
            threads,
            input.tables,
            duration,
            &member_threads,
        ));
    }

    // Final edges, heaviest first.
    let mut fin: BTreeMap<(u32, u32), (EdgeKind, EdgeAcc)> = BTreeMap::new();
    for ((f, t), (kind, acc)) in raw_edges {
        let key = (groups[f as usize], groups[t as usize]);
        let slot = fin.entry(key).or_insert_with(|| (kind, EdgeAcc::default()));
        slot.1.merge(acc);
    }
    let mut fin: Vec<((u32, u32), (EdgeKind, EdgeAcc))> =
        fin.into_iter().filter(|(_, (_, a))| a.ns > 0).collect();
    fin.sort_by(|a, b| b.1.1.ns.cmp(&a.1.1.ns).then(a.0.cmp(&b.0)));
    let dur_s = duration as f64 / 1e9;
    let edges: Vec<Edge> = fin
        .iter()
        .enumerate()
        .map(|(id, ((f, t), (kind, acc)))| Edge {
            id,
            from: *f as usize,
            to: *t as usize,
            kind: *kind,
            weight_s: acc.ns as f64 / 1e9,
            share: acc.ns as f64 / duration as f64,
            direct_waits: acc.direct_waits,
            direct_s: acc.direct_ns as f64 / 1e9,
            wait_stacks: stacks::top(
                input.tables,
                &acc.wait_stacks,
                opts.top_stacks,
                opts.stack_depth,
            ),
            waker_stacks: stacks::top(
                input.tables,
                &acc.waker_stacks,
                opts.top_stacks,
                opts.stack_depth,
            ),
        })
        .collect();
    let weights: Vec<u64> = fin.iter().map(|(_, (_, a))| a.ns).collect();
    // Knots and sinks are found among edges of at least the noise floor: a few
    // milliseconds of waiting on something outside a cycle must not hide the cycle.
    let arcs: Vec<Arc> = edges
        .iter()
        .filter(|e| weights[e.id] >= min_edge_ns.max(1))
        .map(|e| Arc {
            id: e.id,
            from: e.from as u32,
            to: e.to as u32,
        })
        .collect();

    // Knots and sinks; background knots removed until none is left.
    let mut alive: BTreeSet<u32> = arcs.iter().flat_map(|a| [a.from, a.to]).collect();
    let mut background: Vec<Refined> = Vec::new();
    let live_arcs = |alive: &BTreeSet<u32>| -> Vec<Arc> {
        arcs.iter()
            .filter(|a| alive.contains(&a.from) && alive.contains(&a.to))
            .copied()
            .collect()
    };
    let final_terms = loop {
        let vs: Vec<u32> = alive.iter().copied().collect();
        let terms = terminals(&vs, &live_arcs(&alive));
        let mut found = false;
        for t in &terms {
            if let Terminal::Knot {
                vertices: kv,
                arcs: ka,
            } = t
                && is_background(kv, &vertices, duration as f64 / 1e9)
            {
                found = true;
                for v in kv {
                    alive.remove(v);
                }
                background.push(Refined {
                    vertices: kv.clone(),
                    arcs: ka.clone(),
                    shape: crate::refine::Shape::Complex,
                    removed: Vec::new(),
                });
            }
        }
        if !found {
            break terms;
        }
    };
    let weight = |id: usize| weights.get(id).copied().unwrap_or(0);
    // The graph left after background knots are removed: sinks' chains stay in it.
    let live_vs: Vec<u32> = alive.iter().copied().collect();
    let live = live_arcs(&alive);
    let mut refined: Vec<Refined> = Vec::new();
    let mut sinks: Vec<Sink> = Vec::new();
    for t in final_terms {
        match t {
            Terminal::Knot {
                vertices: kv,
                arcs: ka,
            } => {
                refined.extend(refine(kv, ka, &weight, threshold_ns));
            }
            Terminal::Sink(v) => {
                let incoming: f64 = edges
                    .iter()
                    .filter(|e| e.to == v as usize)
                    .map(|e| e.weight_s)
                    .sum();
                let mut into: Vec<usize> =
                    live.iter().filter(|a| a.to == v).map(|a| a.id).collect();
                into.sort_unstable();
                let mut sink = Sink {
                    vertex: v as usize,
                    incoming_s: incoming,
                    edges: into,
                    chain: upstream::chain(v, &live, &weight)
                        .into_iter()
                        .map(|x| x as usize)
                        .collect(),
                    upstream_cycles: upstream::cycles_into(v, &live_vs, &live, &weight)
                        .into_iter()
                        .map(|c| c.into_iter().map(|x| x as usize).collect())
                        .collect(),
                    advice: String::new(),
                };
                sink.advice = advice::sink(&sink, &vertices, &edges);
                sinks.push(sink);
            }
        }
    }
    sinks.sort_by(|a, b| {
        b.incoming_s
            .total_cmp(&a.incoming_s)
            .then(a.vertex.cmp(&b.vertex))
    });
    let mut knots = to_knots(refined, &vertices, &edges);
    let mut background_knots = to_knots(background, &vertices, &edges);
    for k in background_knots.iter_mut() {
        let names: Vec<&str> = k
            .vertices
            .iter()
            .map(|&v| vertices[v].label.as_str())
            .collect();
        k.advice = format!(
            "{} wait for each other but use under one CPU together and touch no device: background threads; optimizing them is optional.",
            names.join(", ")
        );
    }
    for (i, k) in knots.iter_mut().enumerate() {
        k.rank = i + 1;
    }

    let mut off: Vec<OffCpu> = vertices
        .iter()
        .filter(|v| v.kind.is_thread())
        .map(|v| OffCpu {
            vertex: v.id,
            off_cpu_s: v.waiting_s + v.runnable_s,
        })
        .filter(|o| o.off_cpu_s > 0.0)
        .collect();
    off.sort_by(|a, b| {
        b.off_cpu_s
            .total_cmp(&a.off_cpu_s)
            .then(a.vertex.cmp(&b.vertex))
    });
    off.truncate(5);

    let mut devices_out = Vec::new();
    for (p, mut d) in dev_reports {
        d.vertex = groups[pseudo_vid[&p] as usize] as usize;
        devices_out.push(d);
    }
    let summary = knots
        .first()
        .map(|k| k.advice.clone())
        .or_else(|| sinks.first().map(|s| s.advice.clone()))
        .unwrap_or_else(|| {
            "No knot or sink found: no thread waits on anything the trace can attribute.".into()
        });
    let stats = model.stats();
    Ok(Report {
        duration_s: dur_s,
        threshold_s: threshold_ns as f64 / 1e9,
        merged: opts.merge,
        processes: recorded.map(|r| r.iter().map(|g| g.0).collect()),
        vertices,
        edges,
        knots,
        background_knots,
        sinks,
        devices: devices_out,
        longest_off_cpu: off,
        summary,
        quality: Quality {
            lost_events: stats.lost_events,
            model_anomalies: stats.anomalies(),
            unattributed_waits: wstats.unattributed_waits,
            unattributed_s: wstats.unattributed_ns as f64 / 1e9,
            unended_waits: wstats.unended_waits,
            unended_s: wstats.unended_ns as f64 / 1e9,
            before_exec_waits: wstats.before_exec_waits,
            before_exec_s: wstats.before_exec_ns as f64 / 1e9,
            min_edge_s: min_edge_ns as f64 / 1e9,
            false_wakeups_removed: wstats.false_wakeups_removed,
            false_wakeups_unmatched: wstats.false_wakeups_unmatched,
            spins: wstats.spins,
            spins_unreleased: wstats.spins_unreleased,
            cascade_steps: cstats.steps,
            cascade_cycles_cut: cstats.cycles_cut,
            cascade_budget_cut: cstats.budget_cut,
        },
    })
}

/// wPerf's background heuristic: no I/O pseudo thread and under one CPU in total, with
/// one guard: the knot's threads were runnable (queued for a CPU) under a quarter of the
/// recording. In a closed knot some member is always running or runnable (every wait
/// is ended by a member), so running under one CPU there means either threads that
/// mostly idle between short hand-offs (background work) or threads starved of CPU;
/// workers serialized by one lock on a machine with few cores run under one CPU
/// together and are runnable much of the rest, and are not background.
fn is_background(kv: &[u32], vertices: &[Vertex], duration_s: f64) -> bool {
    let io = kv.iter().any(|&v| vertices[v as usize].kind.is_io());
    let cpu: f64 = kv.iter().map(|&v| vertices[v as usize].cpu_fraction).sum();
    let runnable: f64 = kv.iter().map(|&v| vertices[v as usize].runnable_s).sum();
    !io && cpu < 1.0
        && runnable < 0.25 * duration_s
        && kv.iter().all(|&v| vertices[v as usize].kind.is_thread())
}

fn to_knots(refined: Vec<Refined>, vertices: &[Vertex], edges: &[Edge]) -> Vec<Knot> {
    let mut knots: Vec<Knot> = refined
        .into_iter()
        .map(|r| {
            let mut es: Vec<usize> = r.arcs.iter().map(|a| a.id).collect();
            es.sort_unstable();
            let vs: Vec<usize> = r.vertices.iter().map(|&v| v as usize).collect();
            let mut k = Knot {
                rank: 0,
                weight_s: es.iter().map(|&e| edges[e].weight_s).sum(),
                cpu_fraction: vs.iter().map(|&v| vertices[v].cpu_fraction).sum(),
                has_io: vs.iter().any(|&v| vertices[v].kind.is_io()),
                needs_cpu_s: vs.iter().map(|&v| vertices[v].runnable_s).sum(),
                vertices: vs,
                edges: es,
                shape: r.shape,
                removed_edges: r.removed,
                advice: String::new(),
            };
            k.advice = advice::knot(&k, vertices, edges);
            k
        })
        .collect();
    knots.sort_by(|a, b| {
        b.weight_s
            .total_cmp(&a.weight_s)
            .then(a.vertices.cmp(&b.vertices))
    });
    knots
}

#[allow(clippy::too_many_arguments)]
fn make_vertex(
    id: usize,
    ms: &[u32],
    raw: &[Raw],
    ents: &[entities::Entity],
    threads: &[Thread],
    tables: &Tables,
    duration: u64,
    member_threads: &dyn Fn(&EntityKind) -> Vec<usize>,
) -> Vertex {
    let mut trefs = Vec::new();
    let (mut running, mut runnable, mut waiting) = (0u64, 0u64, 0u64);
    let mut kind = VertexKind::Thread;
    for &m in ms {
        match raw[m as usize] {
            Raw::Entity(e) => {
                let ent = &ents[e as usize];
                if matches!(ent.kind, EntityKind::ShortTerm(_)) {
                    kind = VertexKind::ShortTermThreads;
                }
                waiting += ent.waits.iter().map(|w| w.len()).sum::<u64>();
                for i in member_threads(&ent.kind) {
                    let t = &threads[i];
                    running += t.totals.running.0;
                    runnable += t.totals.runnable.0;
                    trefs.push(ThreadRef {
                        tid: t.tid.0,
                        pid: t.tgid.map_or(0, |g| g.0),
                        comm: t.comm.clone(),
                    });
                }
            }
            Raw::Pseudo(p) => {
                kind = match p {
                    Pseudo::Disk(d) => VertexKind::Disk {
                        device: disk_name(d),
                    },
                    Pseudo::DiskUnknown => VertexKind::Disk { device: "?".into() },
                    Pseudo::Nic(n) => VertexKind::Nic {
                        interface: tables.string(n).to_string(),
                    },
                    Pseudo::NicUnknown => VertexKind::Nic {
                        interface: "?".into(),
                    },
                    Pseudo::Timer => VertexKind::Timer,
                    Pseudo::Irq(n) => VertexKind::Interrupt {
                        name: tables.string(n).to_string(),
                    },
                    Pseudo::Softirq(v) => VertexKind::Interrupt {
                        name: format!("softirq {}", v.name()),
                    },
                    Pseudo::Outside => VertexKind::OtherProcesses,
                };
            }
        }
    }
    if ms.len() > 1 {
        kind = VertexKind::SimilarThreads;
    }
    let label = label(&kind, &trefs);
    Vertex {
        id,
        label,
        kind,
        threads: trefs,
        running_s: running as f64 / 1e9,
        runnable_s: runnable as f64 / 1e9,
        waiting_s: waiting as f64 / 1e9,
        cpu_fraction: running as f64 / duration as f64,
    }
}

fn label(kind: &VertexKind, trefs: &[ThreadRef]) -> String {
    match kind {
        VertexKind::Thread => trefs
            .first()
            .map_or_else(|| "?".into(), |t| format!("{} ({})", name_or_tid(t), t.tid)),
        VertexKind::ShortTermThreads | VertexKind::SimilarThreads => {
            let first = trefs.first().map_or_else(|| "?".into(), name_or_tid);
            let base = strip_digits(&first);
            let what = if *kind == VertexKind::ShortTermThreads {
                "short-term"
            } else {
                "threads"
            };
            format!("{}* ×{} {what}", base, trefs.len())
        }
        VertexKind::Disk { device } => format!("disk {device}"),
        VertexKind::Nic { interface } => format!("nic {interface}"),
        VertexKind::Timer => "timer".into(),
        VertexKind::Interrupt { name } => format!("irq {name}"),
        VertexKind::OtherProcesses => "other processes".into(),
    }
}

fn name_or_tid(t: &ThreadRef) -> String {
    if t.comm.is_empty() {
        format!("tid {}", t.tid)
    } else {
        t.comm.clone()
    }
}
