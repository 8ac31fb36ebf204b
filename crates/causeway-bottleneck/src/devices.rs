//! Device idle time (wPerf §3.3, §4.1): while a device is idle it waits for new
//! requests, so it gets edges to the threads that issued I/O to it, weighted by its
//! idle time split by each thread's share of the bytes.
//!
//! Idle time is `duration × (1 − utilization)`, with utilization the larger of the
//! bandwidth and request-rate utilizations (wPerf uses bandwidth for sequential and
//! IOPS for random I/O; the larger one is the binding limit).
//!
//! In a per-process recording a disk's idle edges come from the recorded processes'
//! own requests: the disk waits for the program whenever none of the program's
//! requests is in flight (issued and not completed; measured, no capacity estimate
//! needed), and that time is split over the program's threads by their share of the
//! program's bytes. Other processes' traffic (a copy, a build, the
//! recorder writing its trace) is outside the recorded graph: counting it as the disk
//! being busy made the disk a sink whenever another process saturated it, which hid the
//! program's own cycle with the disk (`blocking-write` next to a 300 MB `dd`: "disk is
//! the sink", utilization 100%, 98% of the bytes from `dd`; batching the fsyncs is still
//! the fix). The interference shows as longer waits on the disk and in the device's
//! total utilization, which is reported beside the program's. A system-wide recording
//! keeps the total (every process is in the graph). NICs keep the total too: their
//! traffic totals carry no time, and loopback traffic is the program's.
//!
//! Disk capacity, when not given: the request rate it sustains is one request per
//! median latency, and its bandwidth is the 90th percentile of per-request transfer
//! rates. This treats the disk as serving one request at a time at its typical speed,
//! which holds for the synchronous I/O that forms blocking cycles; for deep-queue SSDs
//! it overstates utilization, and `--disk-iops` / `--disk-bandwidth` give the real
//! figures. NIC capacity: the option, else the link speed stored in the trace, else
//! 10 Gbit/s; bytes sent and received both count.

use crate::findings::{Capacity, CapacitySource, Device, DeviceKind, VertexId};
use crate::options::{DEFAULT_NIC_CAPACITY, Options};
use crate::waits::Resolver;
use crate::waker::{Pseudo, WakerKey};
use causeway_format::{DevId, DurationNs, Tables};
use causeway_model::Facts;
use causeway_model::Model;
use std::collections::BTreeMap;

/// An idle edge from a device to an issuing entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IdleEdge {
    pub(crate) device: Pseudo,
    pub(crate) entity: u32,
    pub(crate) ns: u64,
}

/// Split `idle_ns` over the entities by their share of `total` (all issuers' bytes,
/// threads of other processes included: their part of the idle time is not waiting
/// for the analyzed threads and is dropped).
fn split(
    idle_ns: u64,
    shares: &BTreeMap<u32, u64>,
    total: u64,
    device: Pseudo,
    out: &mut Vec<IdleEdge>,
) {
    let total = u128::from(total).max(shares.values().map(|&b| u128::from(b)).sum());
    if total == 0 {
        return;
    }
    for (&entity, &b) in shares {
        let ns = (u128::from(idle_ns) * u128::from(b) / total) as u64;
        if ns > 0 {
            out.push(IdleEdge { device, entity, ns });
        }
    }
}

/// Time covered by at least one of the `(start, end)` intervals.
fn in_flight(mut spans: Vec<(u64, u64)>) -> u64 {
    spans.sort_unstable();
    let mut total = 0u64;
    let mut cur: Option<(u64, u64)> = None;
    for (s, e) in spans {
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            _ => {
                if let Some((cs, ce)) = cur {
                    total += ce - cs;
                }
                cur = Some((s, e));
            }
        }
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

fn percentile(mut v: Vec<f64>, p: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() - 1) as f64 * p).round() as usize;
    v.get(i).copied()
}

/// Each analyzed entity's share of a disk's requests (bytes, or requests when
/// `by_count`), and the `(issue, completion)` span of each of their requests.
fn issuers(
    rqs: &[&causeway_model::BlockRequest],
    r: &Resolver<'_>,
    facts: &Facts,
    by_count: bool,
) -> (BTreeMap<u32, u64>, Vec<(u64, u64)>) {
    let mut shares: BTreeMap<u32, u64> = BTreeMap::new();
    let mut spans: Vec<(u64, u64)> = Vec::new();
    for q in rqs {
        // Requests a process issued before its exec (loading the program) are
        // launcher work, like the waits before it (see `waits`).
        let before_exec = r
            .threads
            .get(r.thread_index(q.issue_tid, q.issue).unwrap_or(usize::MAX))
            .and_then(|t| t.tgid)
            .and_then(|g| facts.exec_time(g))
            .is_some_and(|x| q.issue < x);
        if before_exec {
            continue;
        }
        if let WakerKey::Entity(e) = r.entity(q.issue_tid, q.issue) {
            *shares.entry(e).or_default() += if by_count { 1 } else { u64::from(q.bytes) };
            spans.push((q.issue.0, q.complete.0.max(q.issue.0)));
        }
    }
    (shares, spans)
}

/// Idle edges and figures of every disk and NIC.
pub(crate) fn idle_edges(
    model: &Model,
    tables: &Tables,
    facts: &Facts,
    r: &Resolver<'_>,
    opts: &Options,
) -> (Vec<IdleEdge>, Vec<(Pseudo, Device)>) {
    let duration = model.span().map_or(0, |s| s.duration().0);
    let secs = duration as f64 / 1e9;
    let mut edges = Vec::new();
    let mut reports = Vec::new();
    if duration == 0 {
        return (edges, reports);
    }
    let mut by_dev: BTreeMap<DevId, Vec<&causeway_model::BlockRequest>> = BTreeMap::new();
    for rq in model.block_requests() {
        by_dev.entry(rq.dev).or_default().push(rq);
    }
    for (dev, rqs) in by_dev {
        let n = rqs.len() as u64;
        let bytes: u64 = rqs.iter().map(|q| u64::from(q.bytes)).sum();
        let median = percentile(rqs.iter().map(|q| q.latency().0 as f64).collect(), 0.5)
            .filter(|m| *m > 0.0);
        let iops = opts
            .disk_iops
            .or_else(|| median.map(|m| 1e9 / m))
            .unwrap_or(f64::INFINITY);
        let rates: Vec<f64> = rqs
            .iter()
            .filter(|q| q.bytes > 0 && q.latency().0 > 0)
            .map(|q| q.bytes as f64 * 1e9 / q.latency().0 as f64)
            .collect();
        let bw = opts
            .disk_bandwidth
            .or_else(|| percentile(rates, 0.9))
            .unwrap_or(f64::INFINITY);
        let util = (n as f64 / (iops * secs))
            .max(bytes as f64 / (bw * secs))
            .clamp(0.0, 1.0);
        let by_count = bytes == 0;
        let (shares, own) = issuers(&rqs, r, facts, by_count);
        // Per-process recording: the device waits for the program whenever none of the
        // program's requests is in flight (module doc), so its idle edges come from
        // that time and are split over the program's traffic only.
        let (own_util, total) = if facts.recorded().is_some() {
            let busy = in_flight(own) as f64 / duration as f64;
            (busy.clamp(0.0, 1.0), shares.values().sum())
        } else {
            (util, if by_count { n } else { bytes })
        };
        let idle = (duration as f64 * (1.0 - own_util)) as u64;
        split(idle, &shares, total, Pseudo::Disk(dev), &mut edges);
        let source = if opts.disk_iops.is_some() || opts.disk_bandwidth.is_some() {
            CapacitySource::Given
        } else {
            CapacitySource::Estimated
        };
        reports.push((
            Pseudo::Disk(dev),
            Device {
                vertex: VertexId(0),
                kind: DeviceKind::Disk(dev),
                requests: n,
                bytes,
                utilization: util,
                recorded_utilization: own_util,
                idle: DurationNs(idle),
                capacity: Capacity {
                    iops: Some(iops),
                    bandwidth: bw,
                    source,
                },
            },
        ));
    }
    for (&dev, d) in facts.net_devices() {
        let name = tables.string(dev).to_string();
        let tx: u64 = d.tx_by_tid.values().sum();
        let (cap, source) = match (opts.nic_capacity, facts.link_capacity(&name)) {
            (Some(c), _) => (c, CapacitySource::Given),
            (None, Some(c)) => (c, CapacitySource::LinkSpeed),
            (None, None) => (DEFAULT_NIC_CAPACITY, CapacitySource::Default),
        };
        let util = ((tx + d.rx_bytes) as f64 / (cap * secs)).clamp(0.0, 1.0);
        let idle = (duration as f64 * (1.0 - util)) as u64;
        let mut shares: BTreeMap<u32, u64> = BTreeMap::new();
        for (&tid, &b) in &d.tx_by_tid {
            // Traffic totals carry no time; the thread's latest incarnation sent it.
            if let WakerKey::Entity(e) = r.entity(tid, causeway_format::Timestamp(u64::MAX)) {
                *shares.entry(e).or_default() += b;
            }
        }
        split(idle, &shares, tx, Pseudo::Nic(dev), &mut edges);
        reports.push((
            Pseudo::Nic(dev),
            Device {
                vertex: VertexId(0),
                kind: DeviceKind::Nic(name),
                requests: 0,
                bytes: tx + d.rx_bytes,
                utilization: util,
                recorded_utilization: util,
                idle: DurationNs(idle),
                capacity: Capacity {
                    iops: None,
                    bandwidth: cap,
                    source,
                },
            },
        ));
    }
    (edges, reports)
}
