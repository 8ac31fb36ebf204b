//! The first pass over one host's trace: what the join needs before it can renumber
//! and align the events (TCP data that may have crossed to another host, thread names
//! set by `exec`, the time span).

use causeway_format::{Event, EventKind, Flow, SockProto, StringId, TaskState, Tid};
use rustc_hash::{FxHashMap, FxHashSet};

/// A send on a flow that may lead to another host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    /// When the send ended, on the host's clock.
    pub ts: u64,
    /// Bytes sent.
    pub bytes: u32,
    /// The sequence number just past the last byte sent.
    pub seq: u32,
}

/// A wake-up by data arriving on a flow that may come from another host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrived {
    /// When, on the host's clock.
    pub ts: u64,
    /// The woken thread (the host's own id).
    pub wakee: Tid,
    /// The flow, from the receiver's side.
    pub flow: Flow,
    /// The next sequence number the receiver expects.
    pub seq: u32,
    /// How long the wakee had been blocked (`None`: its switch-out was not recorded).
    pub waited_ns: Option<u64>,
}

/// What the first pass found in one host's trace.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// Sends on flows that may lead to another host, by flow, in time order.
    pub sends: FxHashMap<Flow, Vec<Sent>>,
    /// Wake-ups by data on such flows, in time order.
    pub arrivals: Vec<Arrived>,
    /// Thread names set by `exec` events.
    pub exec_comms: Vec<StringId>,
    /// The first and last event times.
    pub span: Option<(u64, u64)>,
    /// Events read.
    pub events: u64,
    seen_comms: FxHashSet<StringId>,
    blocked_since: FxHashMap<Tid, u64>,
}

/// True for a TCP flow between two IP addresses that are not this host's loopback:
/// the only flows whose two ends can be on two recorded hosts and whose bytes can be
/// matched exactly (by sequence number).
pub fn may_cross_hosts(f: &Flow) -> bool {
    f.family.is_ip()
        && f.proto == SockProto::TCP
        && !f.local.ip().is_loopback()
        && !f.remote.ip().is_loopback()
        && !f.remote.is_unspecified()
}

impl Scan {
    /// Take the next event of the host's trace (in time order); `flows` is its table.
    pub fn push(&mut self, ev: &Event, flows: &[Flow]) {
        self.events += 1;
        let ts = ev.ts.0;
        self.span = Some(self.span.map_or((ts, ts), |(a, b)| (a.min(ts), b.max(ts))));
        let flow =
            |id: causeway_format::FlowId| flows.get(id.0 as usize).filter(|f| may_cross_hosts(f));
        match ev.kind {
            EventKind::SchedSwitch {
                prev_tid,
                prev_state,
                ..
            } if prev_state != TaskState::RUNNABLE && prev_tid.0 != 0 => {
                self.blocked_since.insert(prev_tid, ts);
            }
            EventKind::Exec { comm, .. } if self.seen_comms.insert(comm) => {
                self.exec_comms.push(comm);
            }
            EventKind::SockSend {
                flow: id,
                bytes,
                seq: Some(seq),
                ..
            } => {
                if let Some(f) = flow(id) {
                    self.sends
                        .entry(*f)
                        .or_default()
                        .push(Sent { ts, bytes, seq });
                }
            }
            EventKind::SockReady {
                wakee,
                flow: id,
                seq: Some(seq),
                ..
            } => {
                if let Some(f) = flow(id) {
                    let waited_ns = self
                        .blocked_since
                        .get(&wakee)
                        .map(|&b| ts.saturating_sub(b));
                    self.arrivals.push(Arrived {
                        ts,
                        wakee,
                        flow: *f,
                        seq,
                        waited_ns,
                    });
                }
            }
            _ => {}
        }
    }
}

/// The send whose bytes hold the last byte that had arrived when the receiver
/// expected `next` (TCP sequence numbers wrap: positions are taken from the first
/// send's).
pub fn send_holding(sends: &[Sent], next: u32) -> Option<&Sent> {
    let first = sends.first()?;
    let origin = first.seq.wrapping_sub(first.bytes);
    let last_byte = next.wrapping_sub(1).wrapping_sub(origin);
    // Sends in time order have growing end positions; the first one ending past the
    // byte holds it, if it started at or before it.
    let i = sends.partition_point(|s| s.seq.wrapping_sub(origin) <= last_byte);
    let s = sends.get(i)?;
    let start = s.seq.wrapping_sub(s.bytes).wrapping_sub(origin);
    (start <= last_byte).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(seq: u32, bytes: u32) -> Sent {
        Sent {
            ts: u64::from(seq),
            bytes,
            seq,
        }
    }

    #[test]
    fn the_send_holding_the_last_byte_is_found_across_a_wrap() {
        let base = u32::MAX - 5;
        let sends = [
            sent(base, 10),
            sent(base.wrapping_add(10), 10),
            sent(base.wrapping_add(30), 20),
        ];
        // Bytes up to base+9 arrived: the second send ends at base+10 and holds base+9.
        assert_eq!(send_holding(&sends, base.wrapping_add(10)), Some(&sends[1]));
        assert_eq!(send_holding(&sends, base.wrapping_add(1)), Some(&sends[1]));
        assert_eq!(send_holding(&sends, base), Some(&sends[0]));
        assert_eq!(send_holding(&sends, base.wrapping_add(30)), Some(&sends[2]));
        // Past every send: nothing recorded sent it.
        assert_eq!(send_holding(&sends, base.wrapping_add(31)), None);
    }

    #[test]
    fn loopback_and_unconnected_flows_stay_on_their_host() {
        use causeway_format::{Endpoint, SockFamily};
        let f = |a: [u8; 4], b: [u8; 4]| Flow {
            family: SockFamily::INET,
            proto: SockProto::TCP,
            local: Endpoint::v4(a, 80),
            remote: Endpoint::v4(b, 9000),
        };
        assert!(may_cross_hosts(&f([10, 0, 0, 1], [10, 0, 0, 2])));
        assert!(!may_cross_hosts(&f([127, 0, 0, 1], [127, 0, 0, 1])));
        assert!(!may_cross_hosts(&Flow {
            remote: Endpoint::v4([0; 4], 0),
            ..f([10, 0, 0, 1], [0; 4])
        }));
    }
}
