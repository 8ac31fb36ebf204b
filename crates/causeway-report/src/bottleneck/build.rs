//! Builds the shown document ([`Doc`]) from the findings: labels, seconds, shares and
//! the sentences of advice.
//!
//! Seconds are nanoseconds divided by 1e9, and sums of seconds (a knot's weight, a
//! sink's incoming time) are added edge by edge in floating point, in id order: the
//! figures are the ones the analysis ranked by.

use super::advice;
use super::doc::{
    ClosedLoopDoc, CpuProfileDoc, DeviceDoc, Doc, EdgeDoc, KnotDoc, MemoryLimitDoc, OffCpuDoc,
    PauseDoc, QualityDoc, SampledSiteDoc, SampledStackDoc, SinkDoc, StackDoc, ThreadDoc, VertexDoc,
};
use super::labels::{DiskNames, disk_name, kind_doc, label};
use causeway_bottleneck::{
    CapacitySource, CpuProfile, Device, DeviceKind, Edge, EdgeStack, Findings, Knot, OffCpu, Pause,
    Quality, Sink, ThreadRef, Vertex,
};
use causeway_format::DurationNs;

fn secs(d: DurationNs) -> f64 {
    d.0 as f64 / 1e9
}

/// The document for `f`.
pub(crate) fn doc(f: &Findings) -> Doc {
    let mut vertices: Vec<VertexDoc> = f
        .vertices
        .iter()
        .map(|v| vertex(v, f.duration, &f.disk_names, &f.cgroups))
        .collect();
    let all_waits: u64 = f.edges.iter().map(|e| e.weight.0).sum();
    let edges: Vec<EdgeDoc> = f
        .edges
        .iter()
        .map(|e| edge(e, f.duration, all_waits))
        .collect();
    super::labels::tell_apart(&mut vertices, &edges);
    let mut knots: Vec<KnotDoc> = f.knots.iter().map(|k| knot(k, &vertices, &edges)).collect();
    for (i, k) in knots.iter_mut().enumerate() {
        k.rank = i + 1;
        k.advice = advice::knot(k, &vertices, &edges);
    }
    let background_knots: Vec<KnotDoc> = f
        .background_knots
        .iter()
        .map(|k| {
            let mut d = knot(k, &vertices, &edges);
            d.advice = advice::background_knot(&d, &vertices);
            d
        })
        .collect();
    let mut sinks: Vec<SinkDoc> = f
        .sinks
        .iter()
        .map(|s| {
            let mut d = sink(s, &edges);
            d.advice = advice::sink(&d, &vertices, &edges);
            d
        })
        .collect();
    let background_sinks: Vec<SinkDoc> = f
        .background_sinks
        .iter()
        .map(|s| {
            let mut d = sink(s, &edges);
            d.advice = advice::background_sink(&d, &vertices, &edges);
            d
        })
        .collect();
    let memory_limits: Vec<MemoryLimitDoc> = f.memory_limits.iter().map(memory_limit).collect();
    // A knot or sink whose threads' processes hit a memory limit: the limit is named
    // beside the advice (the disk waits may be re-reads of what it evicted).
    for k in &mut knots {
        advice::note_memory_limit(&mut k.advice, &k.vertices, &vertices, &memory_limits);
    }
    for s in &mut sinks {
        advice::note_memory_limit(&mut s.advice, &s.chain, &vertices, &memory_limits);
    }
    let summary = advice::summary(&knots, &sinks, !background_sinks.is_empty());
    let pauses = f
        .pauses
        .iter()
        .map(|p| pause(p, &f.edges, &vertices))
        .collect();
    Doc {
        recorded_at: f.started_unix_s.map(crate::wallclock::format_utc),
        waker_stack_sampling: f.waker_stack_sampling,
        duration_s: secs(f.duration),
        threshold_s: secs(f.threshold),
        merged: f.merged,
        processes: f
            .processes
            .as_ref()
            .map(|p| p.iter().map(|g| g.0).collect()),
        devices: f.devices.iter().map(|d| device(d, &f.disk_names)).collect(),
        longest_off_cpu: f
            .longest_off_cpu
            .iter()
            .map(|o| off_cpu(o, &vertices))
            .collect(),
        quality: quality(&f.quality),
        what_if: None,
        vertices,
        edges,
        knots,
        background_knots,
        sinks,
        background_sinks,
        pauses,
        summary,
        memory_limits,
    }
}

fn memory_limit(g: &causeway_model::MemoryGroup) -> MemoryLimitDoc {
    MemoryLimitDoc {
        cgroup: g.path.clone(),
        owner: causeway_format::cgroups::owner(&g.path).map(|o| o.short()),
        limit_bytes: g.limit,
        peak_usage_bytes: g.peak_usage,
        hits: g.hits,
        major_faults: g.major_faults,
        refaults: g.refaults,
        read_bytes: g.pressure.read_bytes,
        refault_share: g.refault_share(),
        reclaim_share: g.reclaim_share(),
        reclaim_ns: g.pressure.reclaim_ns,
        reclaims: g.pressure.reclaims,
        memory_pressure: g.stall.map(|s| super::doc::StallDoc {
            some: f64::from(s.some_permille) / 1e3,
            full: f64::from(s.full_permille) / 1e3,
            of: if s.system { "system" } else { "cgroup" },
        }),
        pids: g.members.iter().map(|t| t.0).collect(),
    }
}

fn pause(p: &Pause, edges: &[Edge], vertices: &[VertexDoc]) -> PauseDoc {
    let into: Vec<&Edge> = p.edges.iter().map(|e| &edges[e.0]).collect();
    let direct: u64 = into.iter().map(|e| e.direct.0).sum();
    let mut waiters: Vec<usize> = into.iter().map(|e| e.from.0).collect();
    waiters.sort_unstable();
    waiters.dedup();
    let waiting: f64 = waiters.iter().map(|&w| vertices[w].waiting_s).sum();
    PauseDoc {
        vertex: p.vertex.0,
        edges: p.edges.iter().map(|e| e.0).collect(),
        waiter_threads: p.waiter_threads,
        waits: into.iter().map(|e| e.direct_waits).sum(),
        direct_s: secs(DurationNs(direct)),
        share_of_waiting: if waiting > 0.0 {
            secs(DurationNs(direct)) / waiting
        } else {
            0.0
        },
    }
}

fn thread(t: &ThreadRef) -> ThreadDoc {
    ThreadDoc {
        tid: t.tid.0,
        pid: t.tgid.map_or(0, |g| g.0),
        comm: t.comm.clone(),
        title: t.title.clone(),
        goroutine: t.goroutine,
        cgroup: None,
    }
}

fn vertex(
    v: &Vertex,
    duration: DurationNs,
    disks: &DiskNames,
    cgroups: &std::collections::BTreeMap<causeway_format::Tgid, String>,
) -> VertexDoc {
    let kind = kind_doc(&v.kind, disks);
    let threads: Vec<ThreadDoc> = v
        .threads
        .iter()
        .map(|t| {
            let mut d = thread(t);
            d.cgroup = t
                .tgid
                .and_then(|g| cgroups.get(&g))
                .filter(|p| p.as_str() != "/")
                .cloned();
            d
        })
        .collect();
    VertexDoc {
        id: v.id.0,
        label: super::labels::with_container(label(&kind, &threads), &threads),
        kind,
        threads,
        running_s: secs(v.running),
        runnable_s: secs(v.runnable),
        waiting_s: secs(v.waiting),
        cpu_fraction: v.running.0 as f64 / duration.0 as f64,
        on_cpu: v.on_cpu.as_ref().map(profile),
    }
}

fn profile(p: &CpuProfile) -> CpuProfileDoc {
    let of = |n: u64| n as f64 / p.samples.max(1) as f64;
    CpuProfileDoc {
        samples: p.samples,
        kernel_share: of(p.in_kernel),
        stacks: p
            .top
            .iter()
            .map(|s| SampledStackDoc {
                samples: s.samples,
                share: of(s.samples),
                user: s.user.clone(),
                kernel: s.kernel.clone(),
            })
            .collect(),
        sites: p
            .sites
            .iter()
            .map(|s| SampledSiteDoc {
                samples: s.samples,
                share: of(s.samples),
                text: s.text.clone(),
            })
            .collect(),
    }
}

fn stack(s: &EdgeStack) -> StackDoc {
    StackDoc {
        weight_s: secs(s.weight),
        user: s.user.clone(),
        call_site: s.call_site,
        kernel: s.kernel.clone(),
    }
}

fn edge(e: &Edge, duration: DurationNs, all_waits: u64) -> EdgeDoc {
    EdgeDoc {
        id: e.id.0,
        from: e.from.0,
        to: e.to.0,
        kind: e.kind,
        weight_s: secs(e.weight),
        share: e.weight.0 as f64 / duration.0 as f64,
        share_of_waits: e.weight.0 as f64 / all_waits.max(1) as f64,
        direct_waits: e.direct_waits,
        direct_s: secs(e.direct),
        wait_stacks: e.wait_stacks.iter().map(stack).collect(),
        waker_stacks: e.waker_stacks.iter().map(stack).collect(),
    }
}

/// A knot without rank or advice.
fn knot(k: &Knot, vertices: &[VertexDoc], edges: &[EdgeDoc]) -> KnotDoc {
    let es: Vec<usize> = k.edges.iter().map(|e| e.0).collect();
    let vs: Vec<usize> = k.vertices.iter().map(|v| v.0).collect();
    KnotDoc {
        rank: 0,
        weight_s: es.iter().map(|&e| edges[e].weight_s).sum(),
        cpu_fraction: vs.iter().map(|&v| vertices[v].cpu_fraction).sum(),
        has_io: k.has_io,
        needs_cpu_s: vs.iter().map(|&v| vertices[v].runnable_s).sum(),
        vertices: vs,
        edges: es,
        shape: k.shape,
        removed_edges: k.removed_edges.iter().map(|e| e.0).collect(),
        leaks: k.leaks.iter().map(|e| e.0).collect(),
        paused: k.paused.iter().map(|e| e.0).collect(),
        closed_loop: k.closed_loop.as_ref().map(|c| ClosedLoopDoc {
            vertices: c.vertices.iter().map(|v| v.0).collect(),
            edges: c.edges.iter().map(|e| e.0).collect(),
            busy: c.busy,
            others_busy: c.others_busy,
        }),
        advice: String::new(),
    }
}

/// A sink without advice.
fn sink(s: &Sink, edges: &[EdgeDoc]) -> SinkDoc {
    let v = s.vertex.0;
    SinkDoc {
        vertex: v,
        incoming_s: edges.iter().filter(|e| e.to == v).map(|e| e.weight_s).sum(),
        edges: s.edges.iter().map(|e| e.0).collect(),
        chain: s.chain.iter().map(|v| v.0).collect(),
        upstream_cycles: s
            .upstream_cycles
            .iter()
            .map(|c| c.iter().map(|v| v.0).collect())
            .collect(),
        advice: String::new(),
    }
}

/// Waiting plus runnable time, each in seconds, as the analysis ranked them.
fn off_cpu(o: &OffCpu, vertices: &[VertexDoc]) -> OffCpuDoc {
    let v = &vertices[o.vertex.0];
    OffCpuDoc {
        vertex: o.vertex.0,
        off_cpu_s: v.waiting_s + v.runnable_s,
    }
}

fn device(d: &Device, disks: &DiskNames) -> DeviceDoc {
    let (kind, name) = match &d.kind {
        DeviceKind::Disk(dev) => ("disk", disk_name(*dev, disks)),
        DeviceKind::Nic(name) => ("nic", name.clone()),
    };
    let source = match d.capacity.source {
        CapacitySource::Given => "given",
        CapacitySource::Estimated => "estimated from request latencies",
        CapacitySource::LinkSpeed => "link speed",
        CapacitySource::Default => "default 10 Gbit/s",
    };
    let bw = d.capacity.bandwidth;
    let capacity = match d.capacity.iops {
        Some(iops) => format!(
            "{:.0} IOPS, {:.1} MB/s ({source})",
            iops.min(1e12),
            bw.min(1e15) / 1e6
        ),
        None => format!("{:.1} MB/s ({source})", bw / 1e6),
    };
    DeviceDoc {
        vertex: d.vertex.0,
        kind,
        name,
        requests: d.requests,
        bytes: d.bytes,
        utilization: d.utilization,
        recorded_utilization: d.recorded_utilization,
        idle_s: secs(d.idle),
        capacity,
    }
}

fn quality(q: &Quality) -> QualityDoc {
    QualityDoc {
        lost_events: q.lost_events,
        model_anomalies: q.model_anomalies,
        unattributed_waits: q.unattributed_waits,
        unattributed_s: secs(q.unattributed),
        unended_waits: q.unended_waits,
        unended_s: secs(q.unended),
        before_exec_waits: q.before_exec_waits,
        before_exec_s: secs(q.before_exec),
        exit_waits: q.exit_waits,
        exit_s: secs(q.exit),
        idle_polls: q.idle_polls,
        idle_poll_s: secs(q.idle_poll),
        data_wakes: q.data_wakes,
        data_wakes_from_outside: q.data_wakes_from_outside,
        min_edge_s: secs(q.min_edge),
        false_wakeups_removed: q.false_wakeups_removed,
        false_wakeups_unmatched: q.false_wakeups_unmatched,
        spins: q.spins,
        spins_unreleased: q.spins_unreleased,
        cascade_steps: q.cascade_steps,
        cascade_cycles_cut: q.cascade_cycles_cut,
        cascade_budget_cut: q.cascade_budget_cut,
    }
}
