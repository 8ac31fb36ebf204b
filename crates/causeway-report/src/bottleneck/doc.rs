//! The bottleneck findings as shown: labels, seconds, shares and sentences, in the
//! shape of the `--json` document. The text and DOT forms are drawn from it too, so all
//! three agree.
//!
//! Seconds are nanoseconds divided by 1e9, and sums of seconds (a knot's weight, a
//! sink's incoming time) are added edge by edge in floating point, in id order: the
//! figures are the ones the analysis ranked by.

use super::advice;
use super::labels::{kind_doc, label};
use causeway_bottleneck::{
    CapacitySource, Device, DeviceKind, Edge, EdgeKind, EdgeStack, Findings, Knot, OffCpu, Quality,
    Shape, Sink, ThreadRef, Vertex,
};
use causeway_format::DurationNs;
use serde::{Serialize, Serializer};

fn secs(d: DurationNs) -> f64 {
    d.0 as f64 / 1e9
}

/// A thread behind a vertex.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ThreadDoc {
    pub(crate) tid: u32,
    /// 0 if unknown.
    pub(crate) pid: u32,
    pub(crate) comm: String,
}

/// What a vertex stands for, with device and interrupt names spelled out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum KindDoc {
    Thread,
    ShortTermThreads,
    SimilarThreads,
    /// `major:minor`, or `?`.
    Disk {
        device: String,
    },
    /// Interface name, or `?`.
    Nic {
        interface: String,
    },
    Timer,
    /// Handler name, or `softirq NAME`.
    Interrupt {
        name: String,
    },
    OtherProcesses,
}

impl KindDoc {
    /// True for disks and NICs.
    pub(crate) fn is_io(&self) -> bool {
        matches!(self, KindDoc::Disk { .. } | KindDoc::Nic { .. })
    }

    /// True for vertices standing for threads.
    pub(crate) fn is_thread(&self) -> bool {
        matches!(
            self,
            KindDoc::Thread | KindDoc::ShortTermThreads | KindDoc::SimilarThreads
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct VertexDoc {
    pub(crate) id: usize,
    /// Short human name (`consumer (1234)`, `worker-* ×4 threads`, `disk 8:0`).
    pub(crate) label: String,
    pub(crate) kind: KindDoc,
    pub(crate) threads: Vec<ThreadDoc>,
    pub(crate) running_s: f64,
    pub(crate) runnable_s: f64,
    pub(crate) waiting_s: f64,
    /// Running time over the recording: 1.0 is one CPU busy all the time.
    pub(crate) cpu_fraction: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct StackDoc {
    pub(crate) weight_s: f64,
    pub(crate) user: Vec<String>,
    pub(crate) call_site: Option<usize>,
    pub(crate) kernel: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct EdgeDoc {
    pub(crate) id: usize,
    pub(crate) from: usize,
    pub(crate) to: usize,
    #[serde(serialize_with = "edge_kind")]
    pub(crate) kind: EdgeKind,
    pub(crate) weight_s: f64,
    /// Weight over the recording's duration.
    pub(crate) share: f64,
    pub(crate) direct_waits: u64,
    pub(crate) direct_s: f64,
    pub(crate) wait_stacks: Vec<StackDoc>,
    pub(crate) waker_stacks: Vec<StackDoc>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct KnotDoc {
    /// 1 for the most important; 0 for background knots.
    pub(crate) rank: usize,
    pub(crate) vertices: Vec<usize>,
    pub(crate) edges: Vec<usize>,
    #[serde(serialize_with = "shape")]
    pub(crate) shape: Shape,
    pub(crate) weight_s: f64,
    pub(crate) cpu_fraction: f64,
    pub(crate) has_io: bool,
    pub(crate) needs_cpu_s: f64,
    pub(crate) removed_edges: Vec<usize>,
    /// One plain sentence saying what to look at.
    pub(crate) advice: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SinkDoc {
    pub(crate) vertex: usize,
    pub(crate) incoming_s: f64,
    pub(crate) edges: Vec<usize>,
    pub(crate) chain: Vec<usize>,
    pub(crate) upstream_cycles: Vec<Vec<usize>>,
    pub(crate) advice: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct OffCpuDoc {
    pub(crate) vertex: usize,
    pub(crate) off_cpu_s: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct DeviceDoc {
    pub(crate) vertex: usize,
    /// `disk` or `nic`.
    pub(crate) kind: &'static str,
    pub(crate) name: String,
    pub(crate) requests: u64,
    pub(crate) bytes: u64,
    pub(crate) utilization: f64,
    pub(crate) idle_s: f64,
    /// Capacity used for the estimate and where it came from.
    pub(crate) capacity: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct QualityDoc {
    pub(crate) lost_events: u64,
    pub(crate) model_anomalies: u64,
    pub(crate) unattributed_waits: u64,
    pub(crate) unattributed_s: f64,
    pub(crate) unended_waits: u64,
    pub(crate) unended_s: f64,
    pub(crate) before_exec_waits: u64,
    pub(crate) before_exec_s: f64,
    pub(crate) min_edge_s: f64,
    pub(crate) false_wakeups_removed: u64,
    pub(crate) false_wakeups_unmatched: u64,
    pub(crate) spins: u64,
    pub(crate) spins_unreleased: u64,
    pub(crate) cascade_steps: u64,
    pub(crate) cascade_cycles_cut: u64,
    pub(crate) cascade_budget_cut: u64,
}

/// Everything `causeway bottleneck` shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Doc {
    pub(crate) duration_s: f64,
    pub(crate) threshold_s: f64,
    pub(crate) merged: bool,
    pub(crate) processes: Option<Vec<u32>>,
    pub(crate) vertices: Vec<VertexDoc>,
    pub(crate) edges: Vec<EdgeDoc>,
    pub(crate) knots: Vec<KnotDoc>,
    pub(crate) background_knots: Vec<KnotDoc>,
    pub(crate) sinks: Vec<SinkDoc>,
    pub(crate) devices: Vec<DeviceDoc>,
    pub(crate) longest_off_cpu: Vec<OffCpuDoc>,
    /// One sentence: what to look at first.
    pub(crate) summary: String,
    pub(crate) quality: QualityDoc,
}

fn edge_kind<S: Serializer>(k: &EdgeKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match k {
        EdgeKind::Wait => "wait",
        EdgeKind::DeviceIdle => "device_idle",
    })
}

fn shape<S: Serializer>(k: &Shape, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match k {
        Shape::Single => "single",
        Shape::Cycle => "cycle",
        Shape::Complex => "complex",
    })
}

/// The document for `f`.
pub(crate) fn build(f: &Findings) -> Doc {
    let vertices: Vec<VertexDoc> = f.vertices.iter().map(|v| vertex(v, f.duration)).collect();
    let edges: Vec<EdgeDoc> = f.edges.iter().map(|e| edge(e, f.duration)).collect();
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
    let sinks: Vec<SinkDoc> = f
        .sinks
        .iter()
        .map(|s| {
            let mut d = sink(s, &edges);
            d.advice = advice::sink(&d, &vertices, &edges);
            d
        })
        .collect();
    let summary = advice::summary(&knots, &sinks);
    Doc {
        duration_s: secs(f.duration),
        threshold_s: secs(f.threshold),
        merged: f.merged,
        processes: f
            .processes
            .as_ref()
            .map(|p| p.iter().map(|g| g.0).collect()),
        devices: f.devices.iter().map(device).collect(),
        longest_off_cpu: f
            .longest_off_cpu
            .iter()
            .map(|o| off_cpu(o, &vertices))
            .collect(),
        quality: quality(&f.quality),
        vertices,
        edges,
        knots,
        background_knots,
        sinks,
        summary,
    }
}

fn thread(t: &ThreadRef) -> ThreadDoc {
    ThreadDoc {
        tid: t.tid.0,
        pid: t.tgid.map_or(0, |g| g.0),
        comm: t.comm.clone(),
    }
}

fn vertex(v: &Vertex, duration: DurationNs) -> VertexDoc {
    let kind = kind_doc(&v.kind);
    let threads: Vec<ThreadDoc> = v.threads.iter().map(thread).collect();
    VertexDoc {
        id: v.id.0,
        label: label(&kind, &threads),
        kind,
        threads,
        running_s: secs(v.running),
        runnable_s: secs(v.runnable),
        waiting_s: secs(v.waiting),
        cpu_fraction: v.running.0 as f64 / duration.0 as f64,
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

fn edge(e: &Edge, duration: DurationNs) -> EdgeDoc {
    EdgeDoc {
        id: e.id.0,
        from: e.from.0,
        to: e.to.0,
        kind: e.kind,
        weight_s: secs(e.weight),
        share: e.weight.0 as f64 / duration.0 as f64,
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

/// Name of a block device (`major:minor`).
pub(crate) fn disk_name(dev: causeway_format::DevId) -> String {
    format!("{}:{}", dev.0 >> 20, dev.0 & 0xf_ffff)
}

fn device(d: &Device) -> DeviceDoc {
    let (kind, name) = match &d.kind {
        DeviceKind::Disk(dev) => ("disk", disk_name(*dev)),
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
