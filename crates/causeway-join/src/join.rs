//! Reading several hosts' traces into one [`Trace`]: a first pass per trace, the
//! clocks, the joined tables and header, then one time-ordered pass into the model.

use crate::JoinError;
use crate::clock::{self, Offset};
use crate::ids::{HostIds, MAX_HOSTS};
use crate::pair::{self, Pairing};
use crate::scan::Scan;
use crate::tables::{self, HostPart};
use causeway_format::{
    Event, EventKind, Header, Scope, Tables, Tgid, Tid, TraceReader, TraceStats,
};
use causeway_model::Trace;
use causeway_model::ingest::ingest;
use rustc_hash::FxHashSet;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{Read, Seek};

/// One host's trace, with the name the joined trace gives it.
pub struct HostTrace<R> {
    /// The host's name in thread names and reports (unique among the join's hosts).
    pub name: String,
    /// Its trace.
    pub reader: TraceReader<R>,
}

/// How one host entered the join.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HostJoin {
    /// Its name.
    pub name: String,
    /// Its events.
    pub events: u64,
    /// Where its clock was put by the recordings' wall clocks, against the first host's
    /// (the difference of the two recordings' realtime offsets).
    pub wall_clock_ns: i64,
    /// Its clock's offset from the first host's beyond that, measured from the data
    /// they exchanged (see [`crate::clock`]).
    pub clock: Offset,
    /// Remote TCP flows whose other end another recorded host had.
    pub flows_joined: usize,
    /// Remote TCP flows with data arriving whose other end no recorded host had.
    pub flows_alone: usize,
    /// Wake-ups by data on joined flows that no recorded send explains.
    pub arrivals_unmatched: u64,
    /// Wake-ups by another host's data tied to their sender.
    pub crossings: u64,
    /// Of those, waits shorter than the two clocks' uncertainty: their order against
    /// the send is not known, so the join keeps the waker the recorder saw.
    pub short_waits_unlinked: u64,
    /// Thread ids of this host are `tid + tid_base` in the joined trace.
    pub tid_base: u32,
}

/// Several hosts' traces as one, and how they were joined.
#[derive(Debug)]
pub struct Joined {
    /// The joined trace: every host's threads, processes and events on one clock.
    pub trace: Trace,
    /// Per host, in input order.
    pub hosts: Vec<HostJoin>,
}

/// Join `hosts` (the first one's clock is the reference). `progress` gets the number
/// of events read so far, over both passes.
pub fn join<R: Read + Seek>(
    hosts: &mut [HostTrace<R>],
    progress: impl FnMut(u64),
) -> Result<Joined, JoinError> {
    join_with(hosts, progress, |_| {})
}

/// [`join`], also handing every joined event, as the model gets it, to `tee` (for
/// what a caller needs from the events that the model does not keep).
pub fn join_with<R: Read + Seek>(
    hosts: &mut [HostTrace<R>],
    mut progress: impl FnMut(u64),
    mut tee: impl FnMut(&Event),
) -> Result<Joined, JoinError> {
    if hosts.is_empty() {
        return Err(JoinError::NoTraces);
    }
    if hosts.len() > MAX_HOSTS {
        return Err(JoinError::TooManyHosts(hosts.len()));
    }
    let mut read = 0u64;
    let mut scans = Vec::with_capacity(hosts.len());
    for h in hosts.iter_mut() {
        scans.push(scan(&mut h.reader, &mut read, &mut progress)?);
    }
    let base_rt = hosts[0].reader.header().clock_to_realtime_ns;
    let coarse: Vec<i64> = hosts
        .iter()
        .map(|h| h.reader.header().clock_to_realtime_ns - base_rt)
        .collect();
    let pairing = pair::pair(&scans, &coarse);
    let offsets = clock::estimate(hosts.len(), &pairing.messages());
    let shifts = shifts(&scans, &coarse, &offsets);
    let (unlinked, short) = short_waits(&pairing, &offsets);
    let parts: Vec<HostPart<'_>> = hosts
        .iter()
        .zip(&scans)
        .zip(&shifts)
        .map(|((h, s), &shift_ns)| HostPart {
            name: &h.name,
            tables: h.reader.tables(),
            cpus: h.reader.header().cpu_count,
            shift_ns,
            exec_comms: &s.exec_comms,
        })
        .collect();
    let (joined_tables, ids) = tables::join(&parts);
    let header = joined_header(hosts, &ids);
    let stats = joined_stats(hosts, &ids);
    let (model, mut facts) = ingest(&joined_tables, &header, |sink| {
        merge(hosts, &ids, &unlinked, |ev| {
            tee(&ev);
            sink.push(ev);
            read += 1;
            if read.is_multiple_of(1 << 20) {
                progress(read);
            }
        })
    })?;
    facts.set_link_speeds(&stats.counters);
    let report = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| HostJoin {
            name: h.name.clone(),
            events: scans[i].events,
            wall_clock_ns: coarse[i],
            clock: offsets[i],
            flows_joined: pairing.flows_joined[i],
            flows_alone: pairing.flows_alone[i],
            arrivals_unmatched: pairing.arrivals_unmatched[i],
            crossings: pairing
                .crossings
                .iter()
                .filter(|c| c.to as usize == i)
                .count() as u64,
            short_waits_unlinked: short[i],
            tid_base: ids[i].host << crate::ids::TID_BITS,
        })
        .collect();
    Ok(Joined {
        trace: Trace::from_parts(header, joined_tables, stats, model, facts),
        hosts: report,
    })
}

fn scan<R: Read + Seek>(
    reader: &mut TraceReader<R>,
    read: &mut u64,
    progress: &mut impl FnMut(u64),
) -> Result<Scan, JoinError> {
    let flows = reader.tables().flows.clone();
    let mut s = Scan::default();
    for ev in reader.events() {
        s.push(&ev?, &flows);
        *read += 1;
        if read.is_multiple_of(1 << 20) {
            progress(*read);
        }
    }
    Ok(s)
}

/// Each host's shift onto the joined clock: its wall-clock placement less its measured
/// offset, all raised together if that would put an event before zero.
fn shifts(scans: &[Scan], coarse: &[i64], offsets: &[Offset]) -> Vec<i64> {
    let mut out: Vec<i64> = coarse
        .iter()
        .zip(offsets)
        .map(|(c, o)| c - o.offset_ns)
        .collect();
    let lowest = scans
        .iter()
        .zip(&out)
        .filter_map(|(s, &sh)| s.span.map(|(first, _)| first as i64 + sh))
        .min()
        .unwrap_or(0);
    if lowest < 0 {
        for s in &mut out {
            *s -= lowest;
        }
    }
    out
}

/// The wake-ups whose wait was shorter than the uncertainty of the two hosts' clocks
/// (receiving host, its own time, the wakee), and how many per receiving host.
fn short_waits(p: &Pairing, offsets: &[Offset]) -> (FxHashSet<(u32, u64, Tid)>, Vec<u64>) {
    let mut set = FxHashSet::default();
    let mut per_host = vec![0u64; offsets.len()];
    for c in &p.crossings {
        let (Some(a), Some(b)) = (
            offsets[c.from as usize].uncertainty_ns,
            offsets[c.to as usize].uncertainty_ns,
        ) else {
            continue;
        };
        if c.waited_ns.is_some_and(|w| w < a + b) {
            set.insert((c.to, c.ts, c.wakee));
            per_host[c.to as usize] += 1;
        }
    }
    (set, per_host)
}

/// Every host's events, renumbered and shifted, in one time order (each trace is
/// already in time order, and a shift keeps it so: a heap of each trace's next event).
fn merge<R: Read + Seek>(
    hosts: &mut [HostTrace<R>],
    ids: &[HostIds],
    unlinked: &FxHashSet<(u32, u64, Tid)>,
    mut push: impl FnMut(Event),
) -> Result<(), JoinError> {
    let mut streams: Vec<_> = hosts.iter_mut().map(|h| h.reader.events()).collect();
    let mut pending: Vec<Option<Event>> = Vec::with_capacity(streams.len());
    let mut heap = BinaryHeap::with_capacity(streams.len());
    for (i, s) in streams.iter_mut().enumerate() {
        let ev = s.next().transpose()?;
        if let Some(ev) = &ev {
            heap.push(Reverse((ids[i].ts(ev.ts), i)));
        }
        pending.push(ev);
    }
    while let Some(Reverse((_, i))) = heap.pop() {
        let Some(ev) = pending[i].take() else {
            continue;
        };
        let skip = matches!(ev.kind, EventKind::SockReady { wakee, .. }
            if unlinked.contains(&(i as u32, ev.ts.0, wakee)));
        if !skip {
            push(ids[i].event(&ev));
        }
        if let Some(n) = streams[i].next().transpose()? {
            heap.push(Reverse((ids[i].ts(n.ts), i)));
            pending[i] = Some(n);
        }
    }
    Ok(())
}

/// The first host's header, standing for all: every host's CPUs, names and followed
/// processes.
fn joined_header<R: Read + Seek>(hosts: &[HostTrace<R>], ids: &[HostIds]) -> Header {
    let first = hosts[0].reader.header();
    let mut h = first.clone();
    // The joined clock is the first host's, moved by its shift (which only lifts every
    // host's events above zero).
    h.clock_to_realtime_ns = first.clock_to_realtime_ns - ids[0].shift_ns;
    h.cpu_count = hosts
        .iter()
        .map(|x| x.reader.header().cpu_count.max(1))
        .sum();
    h.host.hostname = hosts
        .iter()
        .map(|x| x.name.as_str())
        .collect::<Vec<_>>()
        .join(",");
    h.command_line = Vec::new();
    h.file_id = 0;
    h.target_comm = None;
    let per_process = hosts
        .iter()
        .any(|x| x.reader.header().scope == Scope::Processes);
    h.scope = if per_process {
        Scope::Processes
    } else {
        Scope::System
    };
    h.target_pids = Vec::new();
    if per_process {
        for (x, id) in hosts.iter().zip(ids) {
            h.target_pids
                .extend(followed(x.reader.header(), x.reader.tables()).map(|t| id.tgid(t).0));
        }
    }
    h
}

/// The processes a host's recording followed (all of them for a system-wide one).
fn followed<'a>(header: &'a Header, tables: &'a Tables) -> Box<dyn Iterator<Item = Tgid> + 'a> {
    if header.scope == Scope::System {
        return Box::new(tables.processes.iter().map(|p| p.tgid));
    }
    let by_comm = tables.processes.iter().filter(move |p| {
        header.target_comm.as_deref().is_some_and(|c| {
            tables
                .threads
                .iter()
                .any(|t| t.tid.0 == p.tgid.0 && tables.string(t.comm) == c)
        })
    });
    Box::new(
        header
            .target_pids
            .iter()
            .map(|&p| Tgid(p))
            .chain(by_comm.map(|p| p.tgid)),
    )
}

/// Counts summed over hosts, losses by joined CPU; a link speed (a property, not a
/// count) is the fastest host's.
fn joined_stats<R: Read + Seek>(hosts: &[HostTrace<R>], ids: &[HostIds]) -> TraceStats {
    let mut out = TraceStats::default();
    for (x, id) in hosts.iter().zip(ids) {
        let s = x.reader.stats();
        out.events += s.events;
        out.clock_inversions += s.clock_inversions;
        for (&cpu, &n) in &s.lost_per_cpu {
            *out.lost_per_cpu.entry(cpu + id.cpu_base).or_default() += n;
        }
        for (k, &v) in &s.counters {
            let e = out.counters.entry(k.clone()).or_default();
            *e = if k.ends_with(".link_mbps") {
                (*e).max(v)
            } else {
                *e + v
            };
        }
        if out.trigger.is_none() {
            out.trigger = s.trigger.map(|mut t| {
                t.ts_ns = id.ts(causeway_format::Timestamp(t.ts_ns)).0;
                t.stall_start_ns = t
                    .stall_start_ns
                    .map(|x| id.ts(causeway_format::Timestamp(x)).0);
                t
            });
        }
    }
    out
}
