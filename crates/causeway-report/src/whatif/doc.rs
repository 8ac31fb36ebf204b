//! The documents of predictions: serialized as the JSON, read by the text renderer.

use causeway_whatif::{Change, Counted, EdgeGain, Prediction, Target};
use serde::Serialize;

/// A change, named.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct ChangeDoc {
    /// `edge`, `waits_on`, `site` or `cpu`.
    pub(crate) target: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) from: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) to: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) vertex: Option<usize>,
    /// The call site's function, for `site`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) function: Option<String>,
    /// `consumer (12) -> disk vda`; `disk vda` for every wait on it; the function for a
    /// call site; `consumer (12)` for its CPU time.
    pub(crate) label: String,
    /// The factor; absent when the time is removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) factor: Option<f64>,
    pub(crate) removes: bool,
}

/// What was counted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct CountedDoc {
    /// `knot`, `sink` or `all`.
    pub(crate) basis: &'static str,
    pub(crate) vertices: Vec<usize>,
    pub(crate) labels: Vec<String>,
    pub(crate) threads: usize,
    /// Wake-ups of those threads in the window.
    pub(crate) cycles: u64,
    pub(crate) window_start_ns: u64,
    pub(crate) window_end_ns: u64,
    pub(crate) recorded_per_s: f64,
    /// Share of the counted threads' time in the window spent waiting for a CPU.
    pub(crate) cpu_wait_share: f64,
    /// Of their time, the share waiting while their CPU ran no thread of their own
    /// processes (other programs' load, which the replay keeps as it was).
    pub(crate) cpu_wait_behind_others_share: f64,
}

/// How many recorded waits the replay followed, kept, held to their end or changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct RulesDoc {
    pub(crate) followed: u64,
    pub(crate) kept: u64,
    pub(crate) outside: u64,
    pub(crate) changed: u64,
    pub(crate) idle_polls: u64,
}

/// One prediction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct PredictionDoc {
    pub(crate) changes: Vec<ChangeDoc>,
    pub(crate) counted: CountedDoc,
    pub(crate) recorded_per_s: f64,
    pub(crate) predicted_per_s: f64,
    /// Predicted over recorded, minus one.
    pub(crate) gain: f64,
    pub(crate) waits_changed: u64,
    /// How the replay treated the recorded waits.
    pub(crate) waits: RulesDoc,
    pub(crate) removed_ns: u64,
    /// Of it, the removed calls' own CPU, estimated from `call_cpu_samples` samples.
    pub(crate) call_cpu_ns: u64,
    pub(crate) call_cpu_samples: u64,
    /// The recorder's measured work taken out of the recorded threads' runs (absent:
    /// the trace did not measure it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) recorder_ns: Option<u64>,
    /// CPUs the replayed work needs (absent when the replay collapsed the window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cpu_demand: Option<f64>,
    pub(crate) cpus: u32,
    pub(crate) cpu_bound: bool,
}

/// A prediction's outcome alone (for the gains table).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct OutcomeDoc {
    pub(crate) predicted_per_s: f64,
    pub(crate) gain: f64,
    pub(crate) cpu_bound: bool,
}

/// The gains of one edge.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct EdgeGainDoc {
    pub(crate) edge: usize,
    pub(crate) from: usize,
    pub(crate) to: usize,
    pub(crate) label: String,
    pub(crate) removed: OutcomeDoc,
    pub(crate) halved: OutcomeDoc,
}

/// The gains of the findings' edges.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct GainsDoc {
    pub(crate) counted: CountedDoc,
    pub(crate) edges: Vec<EdgeGainDoc>,
}

fn label(labels: &[String], v: usize) -> String {
    labels
        .get(v)
        .cloned()
        .unwrap_or_else(|| format!("vertex {v}"))
}

fn change(labels: &[String], c: &Change) -> ChangeDoc {
    let factor = (!c.factor.removes()).then(|| c.factor.get());
    let removes = c.factor.removes();
    let doc = |target, label| ChangeDoc {
        target,
        from: None,
        to: None,
        vertex: None,
        function: None,
        label,
        factor,
        removes,
    };
    match &c.target {
        &Target::Edge { from, to } => ChangeDoc {
            from: Some(from),
            to: Some(to),
            ..doc(
                "edge",
                format!("{} -> {}", label(labels, from), label(labels, to)),
            )
        },
        &Target::WaitsOn { to } => ChangeDoc {
            to: Some(to),
            ..doc("waits_on", label(labels, to))
        },
        Target::Site { function } => ChangeDoc {
            function: Some(function.clone()),
            ..doc("site", function.clone())
        },
        &Target::Cpu { vertex } => ChangeDoc {
            vertex: Some(vertex),
            ..doc("cpu", label(labels, vertex))
        },
    }
}

fn counted(labels: &[String], c: &Counted) -> CountedDoc {
    CountedDoc {
        basis: c.basis,
        vertices: c.vertices.iter().map(|v| v.0).collect(),
        labels: c.vertices.iter().map(|v| label(labels, v.0)).collect(),
        threads: c.threads,
        cycles: c.cycles,
        window_start_ns: c.window.0,
        window_end_ns: c.window.1,
        recorded_per_s: c.recorded_per_s,
        cpu_wait_share: c.cpu_waits.runnable_share,
        cpu_wait_behind_others_share: c.cpu_waits.behind_others_share,
    }
}

pub(crate) fn prediction(labels: &[String], p: &Prediction) -> PredictionDoc {
    PredictionDoc {
        changes: p.changes.iter().map(|c| change(labels, c)).collect(),
        counted: counted(labels, &p.counted),
        recorded_per_s: p.counted.recorded_per_s,
        predicted_per_s: p.predicted_per_s,
        gain: p.gain,
        waits_changed: p.waits_changed,
        waits: RulesDoc {
            followed: p.waits.followed,
            kept: p.waits.kept,
            outside: p.waits.outside,
            changed: p.waits.changed,
            idle_polls: p.waits.idle_polls,
        },
        removed_ns: p.removed_ns,
        call_cpu_ns: p.call_cpu_ns,
        call_cpu_samples: p.call_cpu_samples,
        recorder_ns: p.recorder_ns,
        cpu_demand: p.cpu_demand.is_finite().then_some(p.cpu_demand),
        cpus: p.cpus,
        cpu_bound: p.cpu_bound,
    }
}

fn outcome(p: &Prediction) -> OutcomeDoc {
    OutcomeDoc {
        predicted_per_s: p.predicted_per_s,
        gain: p.gain,
        cpu_bound: p.cpu_bound,
    }
}

pub(crate) fn gains(labels: &[String], c: &Counted, gains: &[EdgeGain]) -> GainsDoc {
    GainsDoc {
        counted: counted(labels, c),
        edges: gains
            .iter()
            .filter_map(|g| {
                let Target::Edge { from, to } = g.removed.changes.first()?.target else {
                    return None;
                };
                Some(EdgeGainDoc {
                    edge: g.edge.0,
                    from,
                    to,
                    label: format!("{} -> {}", label(labels, from), label(labels, to)),
                    removed: outcome(&g.removed),
                    halved: outcome(&g.halved),
                })
            })
            .collect(),
    }
}
