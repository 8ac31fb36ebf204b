//! Wake-ups delivered by the network stack, tied to the thread that sent the data.
//!
//! The recorder marks a wake-up that followed a socket's "data arrived" with the
//! receiving socket ([`EventKind::SockReady`](causeway_format::EventKind::SockReady)),
//! and records every send of a recorded thread with its socket
//! ([`EventKind::SockSend`](causeway_format::EventKind::SockSend)). Data sent on a flow
//! arrives on the flow with its two ends swapped, so the send that carried the data is
//! found among the sends on the reversed flow:
//!
//! - TCP: by sequence number. The receiver's `rcv_nxt` is one past the last byte that
//!   arrived; the send whose bytes `[write_seq - bytes, write_seq)` hold that byte sent
//!   it. Exact whatever the order of the records (on loopback the send's record comes
//!   after the wake-up it caused, because the data is delivered inside the send).
//! - Datagrams and Unix sockets: by time. A send by the thread in whose context the
//!   data arrived that ends within [`INLINE_WINDOW`] after the wake-up delivered it
//!   inline; otherwise the latest send that ended before the wake-up (delivered later,
//!   by `ksoftirqd` or another CPU's softirq).
//!
//! Such a wake-up gets the sender as its waker, with a [`DataWake`] that says so
//! (wPerf §3.3 keeps a NIC pseudo thread only for data from outside the recording:
//! a wake-up whose data no recorded thread sent keeps the recorder's waker). The
//! thread that merely hosted the delivery (a `ksoftirqd`, or whatever thread a softirq
//! interrupted) is never the waker of such a wake-up.

use causeway_format::{Flow, FlowId, SockProto, Tid, Timestamp, Waker};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// How long after a wake-up the send that delivered it inline may end (the rest of the
/// send syscall after the softirq that ran the receive path). Wall-clock time, so it
/// includes time a virtual CPU did not run: a 3.6 ms VM stall inside a loopback send
/// put its end that far after the wake-up it caused. Only a send by the very thread that
/// hosted the delivery qualifies, so a generous window rarely pairs the wrong send.
pub const INLINE_WINDOW: u64 = 20_000_000;

/// How long before a wake-up a send may have ended and still be the one whose data
/// woke it (data sits in a queue or a backlog until a softirq delivers it).
pub const QUEUED_WINDOW: u64 = 1_000_000_000;

/// A wait ended by data that a recorded thread sent on a socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataWake {
    /// Index of the wakee's blocked segment in its timeline.
    pub segment: u32,
    /// The socket the data arrived on, from the receiver's side.
    pub flow: FlowId,
    /// The thread that sent the data (now the wait's waker).
    pub sender: Tid,
    /// When its send ended.
    pub sent: Timestamp,
    /// Bytes of that send.
    pub bytes: u32,
    /// The thread current when the data arrived (0: an idle CPU).
    pub host: Tid,
    /// The waker the recorder saw (a softirq, or the hosting thread).
    pub recorded_waker: Waker,
}

impl DataWake {
    /// The time to link the waker's segment at: the wake-up itself when the sender
    /// delivered the data inline (it was running then), else the end of its send.
    pub fn link_time(&self, wake_ts: Timestamp) -> Timestamp {
        self.sent.min(wake_ts)
    }
}

/// A send of a recorded thread (from [`causeway_format::EventKind::SockSend`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Send {
    pub(crate) ts: Timestamp,
    pub(crate) tid: Tid,
    pub(crate) bytes: u32,
    pub(crate) seq: Option<u32>,
}

/// A socket's data arriving for a blocked segment of a thread being built.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ready {
    pub(crate) segment: u32,
    pub(crate) ts: Timestamp,
    pub(crate) host: Tid,
    pub(crate) flow: FlowId,
    pub(crate) seq: Option<u32>,
}

/// Sends by the flow they went out on.
#[derive(Debug, Default)]
pub(crate) struct SendLog {
    by_flow: FxHashMap<FlowId, Vec<Send>>,
}

impl SendLog {
    pub(crate) fn push(&mut self, flow: FlowId, s: Send) {
        self.by_flow.entry(flow).or_default().push(s);
    }

    /// Sends grouped by the flow they left on, keyed by that flow (several flow ids
    /// can name the same flow in a merged trace).
    pub(crate) fn by_sender_flow(self, flows: &[Flow]) -> FxHashMap<Flow, Vec<Send>> {
        let mut out: FxHashMap<Flow, Vec<Send>> = FxHashMap::default();
        for (id, v) in self.by_flow {
            if let Some(f) = flows.get(id.0 as usize) {
                out.entry(*f).or_default().extend(v);
            }
        }
        for v in out.values_mut() {
            v.sort_by_key(|s| s.ts);
        }
        out
    }
}

/// Byte `seq - 1` lies in the send's range `[end - bytes, end)` (sequence arithmetic
/// wraps at 2^32).
fn covers(send: &Send, seq: u32) -> bool {
    let Some(end) = send.seq else { return false };
    let start = end.wrapping_sub(send.bytes);
    let d = seq.wrapping_sub(start);
    d > 0 && d <= send.bytes
}

/// The send whose data a ready event announced, among the sends on its reversed flow.
pub(crate) fn matching_send<'a>(sends: &'a [Send], r: &Ready, tcp: bool) -> Option<&'a Send> {
    let at = sends.partition_point(|s| s.ts < r.ts);
    if tcp && let Some(seq) = r.seq {
        // Nearest in time first: a sequence number is unique within 4 GiB of traffic.
        let after = sends.get(at..).unwrap_or(&[]).iter();
        let before = sends.get(..at).unwrap_or(&[]).iter().rev();
        let mut a = after.take(256).peekable();
        let mut b = before.take(256).peekable();
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => {
                    if x.ts.0 - r.ts.0 <= r.ts.0 - y.ts.0 {
                        a.next()
                    } else {
                        b.next()
                    }
                }
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => return None,
            };
            if let Some(s) = next.filter(|s| covers(s, seq)) {
                return Some(s);
            }
        }
    }
    let inline = sends
        .get(at..)
        .unwrap_or(&[])
        .iter()
        .take_while(|s| s.ts.0 - r.ts.0 <= INLINE_WINDOW)
        .find(|s| s.tid == r.host);
    inline.or_else(|| {
        at.checked_sub(1)
            .and_then(|i| sends.get(i))
            .filter(|s| r.ts.0 - s.ts.0 <= QUEUED_WINDOW)
    })
}

/// The sends that may have carried data arriving on `flow` (receiver's side): those
/// on the reversed flow, or from the same source by an unconnected datagram socket.
pub(crate) fn candidates<'a>(
    sends: &'a FxHashMap<Flow, Vec<Send>>,
    flow: &Flow,
) -> Option<&'a [Send]> {
    let back = flow.reversed();
    if let Some(v) = sends.get(&back) {
        return Some(v);
    }
    // A dual-stack server's IPv4 clients (`Flow::other_ip_family`): without this the
    // Caddy server of the realworld cases never sent a byte its clients read.
    if let Some(v) = back.other_ip_family().and_then(|f| sends.get(&f)) {
        return Some(v);
    }
    if flow.proto == SockProto::UDP || flow.family == causeway_format::SockFamily::UNIX {
        let v4_any = causeway_format::Endpoint::v4([0; 4], 0);
        for remote in [v4_any, causeway_format::Endpoint::default()] {
            if let Some(v) = sends.get(&Flow { remote, ..back }) {
                return Some(v);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(ts: u64, tid: u32, bytes: u32, seq: Option<u32>) -> Send {
        Send {
            ts: Timestamp(ts),
            tid: Tid(tid),
            bytes,
            seq,
        }
    }

    fn ready(ts: u64, host: u32, seq: Option<u32>) -> Ready {
        Ready {
            segment: 0,
            ts: Timestamp(ts),
            host: Tid(host),
            flow: FlowId(0),
            seq,
        }
    }

    #[test]
    fn tcp_data_is_matched_by_sequence_not_by_time() {
        // Two writers on one connection; the reply's bytes [1000, 1064) came from 8,
        // whose send record comes after the wake-up (delivered inside the send).
        let sends = [
            send(100, 7, 64, Some(1000)),
            send(205, 8, 64, Some(1064)),
            send(300, 7, 64, Some(1128)),
        ];
        let got = matching_send(&sends, &ready(200, 8, Some(1064)), true).unwrap();
        assert_eq!(got.tid, Tid(8));
        let got = matching_send(&sends, &ready(400, 3, Some(1128)), true).unwrap();
        assert_eq!(got.tid, Tid(7));
        // A byte nobody recorded sending: from outside.
        assert!(matching_send(&sends, &ready(400, 3, Some(5000)), true).is_none());
        // Sequence numbers wrap.
        let wrap = [send(10, 9, 16, Some(8))];
        assert!(matching_send(&wrap, &ready(11, 9, Some(8)), true).is_some());
    }

    #[test]
    fn a_dual_stack_servers_sends_reach_its_ipv4_clients() {
        use causeway_format::{Endpoint, SockFamily, SockProto};
        let (client, server) = (
            Endpoint::v4([127, 0, 0, 1], 40108),
            Endpoint::v4([127, 0, 0, 1], 18080),
        );
        // The client's socket is AF_INET; the server's, accepted on `[::]`, AF_INET6.
        let at_client = Flow {
            family: SockFamily::INET,
            proto: SockProto::TCP,
            local: client,
            remote: server,
        };
        let from_server = Flow {
            family: SockFamily::INET6,
            ..at_client.reversed()
        };
        let mut sends = FxHashMap::default();
        sends.insert(from_server, vec![send(100, 7, 64, Some(1000))]);
        let found = candidates(&sends, &at_client).expect("the server's sends");
        assert_eq!(found[0].tid, Tid(7));
        // Another port is another connection.
        let other = Flow {
            remote: Endpoint::v4([127, 0, 0, 1], 18081),
            ..at_client
        };
        assert!(candidates(&sends, &other).is_none());
    }

    #[test]
    fn datagrams_prefer_the_inline_sender_then_the_latest_before() {
        let sends = [send(100, 7, 10, None), send(260, 8, 10, None)];
        // Delivered inside 8's send (8 hosted the softirq).
        assert_eq!(
            matching_send(&sends, &ready(250, 8, None), false)
                .unwrap()
                .tid,
            Tid(8)
        );
        // Delivered later by ksoftirqd (tid 15): the latest send before.
        assert_eq!(
            matching_send(&sends, &ready(250, 15, None), false)
                .unwrap()
                .tid,
            Tid(7)
        );
        assert!(matching_send(&sends, &ready(50, 15, None), false).is_none());
    }
}
