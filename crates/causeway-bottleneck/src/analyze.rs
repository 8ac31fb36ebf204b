//! The pipeline: waits → cascade → device idle edges → vertices (merged) → knots and
//! sinks → findings. Each stage is a function of its own module; this one runs them in
//! order.

use crate::cascade;
use crate::devices;
use crate::edges;
use crate::entities;
use crate::error::BottleneckError;
use crate::findings::{Findings, Quality, VertexId};
use crate::input::Input;
use crate::jvm;
use crate::knots;
use crate::options::Options;
use crate::profile;
use crate::vertices;
use crate::waitmap::{self, WaitMap};
use crate::waits::{Resolver, WaitStats};
use crate::waker::DeviceSet;
use causeway_format::DurationNs;
use causeway_model::{Model, Thread, Trace};
use std::collections::BTreeSet;

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
    if !(0.0..=1.0).contains(&opts.leak_fraction) {
        return bad("leak-fraction", "must be between 0 and 1");
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
pub fn analyze(trace: &Trace, opts: &Options) -> Result<Findings, BottleneckError> {
    run(trace, opts, false).map(|(f, _)| f)
}

/// Run the whole analysis and also say which vertex each thread's waits point to
/// (the map costs a second pass of the wait builders over every thread).
pub fn analyze_with_waits(
    trace: &Trace,
    opts: &Options,
) -> Result<(Findings, WaitMap), BottleneckError> {
    run(trace, opts, true).map(|(f, w)| (f, w.unwrap_or_default()))
}

fn run(
    trace: &Trace,
    opts: &Options,
    want_waits: bool,
) -> Result<(Findings, Option<WaitMap>), BottleneckError> {
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
    let runtimes = jvm::find(model, input.tables);
    let inside = |i: usize, t: &Thread| {
        runtimes.runtime_of[i].is_none()
            && recorded.is_none_or(|r| t.tgid.is_some_and(|g| r.contains(&g)))
    };
    let (kinds, entity_of) = entities::assign(model, opts.merge, opts.short_term_fraction, &inside);
    let wakes = crate::idle::WakesBy::of(model);
    let quota = causeway_model::quota::Throttling::of(model, input.tables);
    let resolver = Resolver {
        wakes: &wakes,
        model,
        tables: input.tables,
        facts: input.facts,
        devices: device_set(input),
        threads,
        entity_of: &entity_of,
        runtime_of: &runtimes.runtime_of,
        quota: &quota,
    };
    let (ents, wstats) = entities::build(kinds, &resolver);
    let (edge_map, cstats) = cascade::run(&ents);
    let (idle, dev_reports) =
        devices::idle_edges(model, input.tables, input.facts, &resolver, opts);

    let numbered = vertices::number(
        ents.len() as u32,
        edge_map.keys().map(|(_, k)| k),
        &idle,
        &dev_reports,
    );
    let raw_edges = edges::raw(edge_map, &numbered.pseudo_vid, &idle);
    let groups = vertices::groups(
        &numbered.raw,
        &ents,
        (model, input.tables),
        opts.merge,
        opts.similarity,
    );
    let mut vertices = vertices::build(
        &groups,
        &numbered.raw,
        &ents,
        (model, input.facts),
        input.tables,
    );
    profile::attach(&mut vertices, input.facts, input.tables);
    jvm::describe(&mut vertices, &runtimes);
    vertices::describe_quotas(&mut vertices, &quota);
    let wait_map = want_waits.then(|| waitmap::build(&resolver, &numbered.pseudo_vid, &groups));
    let edges = edges::merged(raw_edges, &groups, input.tables, opts);
    let limits = knots::Limits {
        min_edge_ns,
        threshold_ns,
        leak_fraction: opts.leak_fraction,
    };
    let terms = knots::find(&vertices, &edges, &limits, DurationNs(duration));
    let longest_off_cpu = knots::longest_off_cpu(&vertices);
    let devices = dev_reports
        .into_iter()
        .map(|(p, mut d)| {
            d.vertex = VertexId(groups[numbered.pseudo_vid[&p] as usize] as usize);
            d
        })
        .collect();
    let findings = Findings {
        started_unix_s: started_unix_s(trace.header(), span.start.0),
        waker_stack_sampling: trace.header().waker_stack_sampling,
        duration: DurationNs(duration),
        threshold: DurationNs(threshold_ns),
        merged: opts.merge,
        processes: recorded.map(|r| r.iter().copied().collect()),
        vertices,
        edges,
        knots: terms.knots,
        background_knots: terms.background,
        sinks: terms.sinks,
        background_sinks: terms.background_sinks,
        pauses: terms.pauses,
        devices,
        longest_off_cpu,
        quality: quality(model, &wstats, &cstats, min_edge_ns),
        disk_names: model
            .block_requests()
            .iter()
            .filter_map(|r| Some((r.dev, input.facts.disk_name(r.dev)?.to_string())))
            .collect(),
        memory_limits: {
            let mut g = causeway_model::memory_limits(input.tables);
            causeway_model::with_pressure(&mut g, model, input.facts, input.tables);
            g
        },
        cgroups: input
            .tables
            .process_cgroups()
            .into_iter()
            .map(|(g, p)| (g, p.to_string()))
            .collect(),
    };
    Ok((findings, wait_map))
}

/// The recording's first timestamp in seconds since the Unix epoch, if its clock has a
/// real-time offset.
fn started_unix_s(header: &causeway_format::Header, first_ns: u64) -> Option<i64> {
    if header.clock == causeway_format::ClockSource::Synthetic {
        return None;
    }
    let ns = i128::from(first_ns) + i128::from(header.clock_to_realtime_ns);
    i64::try_from(ns.div_euclid(1_000_000_000)).ok()
}

/// The only disk and the only NIC, when there is exactly one of each.
fn device_set(input: &Input<'_>) -> DeviceSet {
    let disks: BTreeSet<_> = input.model.block_requests().iter().map(|r| r.dev).collect();
    DeviceSet {
        sole_disk: (disks.len() == 1).then(|| disks.first().copied()).flatten(),
        sole_nic: (input.facts.net_devices().len() == 1)
            .then(|| input.facts.net_devices().keys().next().copied())
            .flatten(),
    }
}

fn quality(
    model: &Model,
    wstats: &WaitStats,
    cstats: &cascade::CascadeStats,
    min_edge_ns: u64,
) -> Quality {
    let stats = model.stats();
    Quality {
        lost_events: stats.lost_events,
        model_anomalies: stats.anomalies(),
        unattributed_waits: wstats.unattributed_waits,
        unattributed: DurationNs(wstats.unattributed_ns),
        unended_waits: wstats.unended_waits,
        unended: DurationNs(wstats.unended_ns),
        before_exec_waits: wstats.before_exec_waits,
        before_exec: DurationNs(wstats.before_exec_ns),
        exit_waits: wstats.exit_waits,
        exit: DurationNs(wstats.exit_ns),
        idle_polls: wstats.idle_polls,
        idle_poll: DurationNs(wstats.idle_poll_ns),
        data_wakes: stats.data_wakes,
        data_wakes_from_outside: stats.data_wakes_from_outside,
        min_edge: DurationNs(min_edge_ns),
        false_wakeups_removed: wstats.false_wakeups_removed,
        false_wakeups_unmatched: wstats.false_wakeups_unmatched,
        spins: wstats.spins,
        spins_unreleased: wstats.spins_unreleased,
        cascade_steps: cstats.steps,
        cascade_cycles_cut: cstats.cycles_cut,
        cascade_budget_cut: cstats.budget_cut,
    }
}
