//! Data that crossed from one recorded host to another: each wake-up by data from a
//! remote address tied to the send on the host that has the flow's other end.

use crate::clock::Message;
use crate::scan::{Scan, send_holding};
use causeway_format::{Flow, Tid};
use rustc_hash::{FxHashMap, FxHashSet};

/// A wake-up on one host caused by a send on another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crossing {
    /// The sending host.
    pub from: u32,
    /// The receiving host.
    pub to: u32,
    /// The wake-up's time on the receiver's own clock.
    pub ts: u64,
    /// The woken thread (the receiver's own id).
    pub wakee: Tid,
    /// How long it had been blocked, if known.
    pub waited_ns: Option<u64>,
    /// Arrival minus send, with each host's clock shifted by `coarse` (the first
    /// alignment, by wall clock).
    pub delay_ns: i64,
}

/// What pairing found across all hosts.
#[derive(Clone, Debug, Default)]
pub struct Pairing {
    /// Every wake-up tied to a send on another host.
    pub crossings: Vec<Crossing>,
    /// Per host: distinct remote flows whose other end some recorded host had.
    pub flows_joined: Vec<usize>,
    /// Per host: distinct remote flows with arrivals whose other end no recorded host
    /// had (an unrecorded peer, or addresses rewritten by NAT or a proxy).
    pub flows_alone: Vec<usize>,
    /// Per host: arrivals on joined flows that no recorded send explains (the send
    /// came before the recording, or its record was lost).
    pub arrivals_unmatched: Vec<u64>,
}

impl Pairing {
    /// The messages for the clock estimate.
    pub fn messages(&self) -> Vec<Message> {
        self.crossings
            .iter()
            .map(|c| Message {
                from: c.from,
                to: c.to,
                delay_ns: c.delay_ns,
            })
            .collect()
    }
}

/// Tie every host's arrivals to other hosts' sends. `coarse[k]` moves host `k`'s clock
/// onto the first host's by the recordings' wall clocks.
pub fn pair(scans: &[Scan], coarse: &[i64]) -> Pairing {
    let n = scans.len();
    let mut out = Pairing {
        flows_joined: vec![0; n],
        flows_alone: vec![0; n],
        arrivals_unmatched: vec![0; n],
        ..Pairing::default()
    };
    // Which host has sends on each flow (a flow's sender is on one host).
    let mut owner: FxHashMap<Flow, u32> = FxHashMap::default();
    for (h, s) in scans.iter().enumerate() {
        for f in s.sends.keys() {
            owner.insert(*f, h as u32);
        }
    }
    for (to, s) in scans.iter().enumerate() {
        let mut joined: FxHashSet<Flow> = FxHashSet::default();
        let mut alone: FxHashSet<Flow> = FxHashSet::default();
        for a in &s.arrivals {
            // A dual-stack server's IPv4 peers: the other family (`other_ip_family`).
            let reversed = a.flow.reversed();
            let back = if owner.contains_key(&reversed) {
                reversed
            } else {
                reversed.other_ip_family().unwrap_or(reversed)
            };
            let Some(&from) = owner.get(&back).filter(|&&h| h as usize != to) else {
                alone.insert(a.flow);
                continue;
            };
            joined.insert(a.flow);
            let sends = &scans[from as usize].sends[&back];
            let Some(sent) = send_holding(sends, a.seq) else {
                out.arrivals_unmatched[to] += 1;
                continue;
            };
            let arrive = a.ts as i64 + coarse[to];
            let left = sent.ts as i64 + coarse[from as usize];
            out.crossings.push(Crossing {
                from,
                to: to as u32,
                ts: a.ts,
                wakee: a.wakee,
                waited_ns: a.waited_ns,
                delay_ns: arrive - left,
            });
        }
        out.flows_joined[to] = joined.len();
        out.flows_alone[to] = alone.len();
    }
    out
}
