//! Socket events: sends are logged; a "data arrived" mark is attached to the wait its
//! wake-up just ended. Both are paired in [`resolve`] when the model is
//! finished (on loopback a send's record comes after the wake-up it caused).

use super::ModelBuilder;
use crate::sockets::{DataWake, Ready, Send, candidates, matching_send};
use crate::stats::ModelStats;
use crate::tracker::ThreadBuild;
use causeway_format::{Flow, FlowId, SockProto, Tid, Timestamp, Waker};
use rustc_hash::FxHashMap;

impl ModelBuilder<'_> {
    pub(super) fn on_sock_send(
        &mut self,
        ts: Timestamp,
        tid: Tid,
        flow: FlowId,
        bytes: u32,
        seq: Option<u32>,
    ) {
        self.touch(tid, ts);
        self.sends.push(
            flow,
            Send {
                ts,
                tid,
                bytes,
                seq,
            },
        );
    }

    pub(super) fn on_sock_ready(
        &mut self,
        ts: Timestamp,
        wakee: Tid,
        host: Tid,
        flow: FlowId,
        seq: Option<u32>,
    ) {
        // The wake-up just before ended the wakee's latest blocked segment (a runnable
        // one follows it), unless the wakee was not blocked.
        let Some(th) = self.threads.get_mut(wakee) else {
            self.stats.data_marks_unattached += 1;
            return;
        };
        let n = th.segments.len();
        let found = (n.saturating_sub(2)..n).rev().find(|&i| {
            th.segments
                .get(i)
                .and_then(|s| s.wake())
                .is_some_and(|w| w.ts == ts)
        });
        let ready = |segment| Ready {
            segment,
            ts,
            host,
            flow,
            seq,
        };
        match found.and_then(|i| u32::try_from(i).ok()) {
            Some(segment) => th.readies.push(ready(segment)),
            // The wake-up came while the wakee was still switching out: its wait is
            // made when the switch-out is seen, and the mark goes with it then.
            None if th.wake_while_running.is_some_and(|w| w.ts == ts) => {
                th.ready_while_running = Some(ready(0));
            }
            None => self.stats.data_marks_unattached += 1,
        }
    }
}

/// Tie every recorded "data arrived" wake-up to its sender: rewrite the segment's
/// waker and record a [`DataWake`] in `data_wakes` (per build, in segment order).
pub(super) fn resolve(
    flows: &[Flow],
    sends: &FxHashMap<Flow, Vec<Send>>,
    builds: &mut [ThreadBuild],
    stats: &mut ModelStats,
) {
    for b in builds.iter_mut() {
        let readies = std::mem::take(&mut b.readies);
        for r in readies {
            let Some(flow) = flows.get(r.flow.0 as usize) else {
                continue;
            };
            let tcp = flow.proto == SockProto::TCP && flow.family.is_ip();
            let found = candidates(sends, flow).and_then(|v| matching_send(v, &r, tcp));
            let Some(send) = found else {
                stats.data_wakes_from_outside += 1;
                continue;
            };
            let Some(w) = b
                .segments
                .get_mut(r.segment as usize)
                .and_then(|s| s.wake_mut())
            else {
                continue;
            };
            let recorded_waker = w.waker;
            w.waker = Waker::Thread { tid: send.tid };
            stats.data_wakes += 1;
            b.data_wakes.push(DataWake {
                segment: r.segment,
                flow: r.flow,
                sender: send.tid,
                sent: send.ts,
                bytes: send.bytes,
                host: r.host,
                recorded_waker,
            });
        }
        b.data_wakes.sort_by_key(|d| d.segment);
        b.data_wakes.dedup_by_key(|d| d.segment);
    }
}

/// Name the send that carried the byte each goroutine parked for network reads waits
/// for (TCP: the send holding its `rcv_nxt` at the park; other transports: the first
/// send on the socket after the park).
pub(super) fn resolve_go(
    flows: &[Flow],
    sends: &FxHashMap<Flow, Vec<Send>>,
    events: &mut [crate::goroutines::GoEvent],
) {
    for e in events {
        let crate::goroutines::GoEventKind::Park { net: Some(n), .. } = &mut e.kind else {
            continue;
        };
        let Some(flow) = flows.get(n.flow.0 as usize) else {
            continue;
        };
        let Some(list) = candidates(sends, flow) else {
            continue;
        };
        let tcp = flow.proto == SockProto::TCP && flow.family.is_ip();
        let send = match n.seq {
            Some(next) if tcp => {
                // The first byte it waits for is `next`; `matching_send` looks for the
                // send holding byte `seq - 1`.
                let r = Ready {
                    segment: 0,
                    ts: e.ts,
                    host: Tid(0),
                    flow: n.flow,
                    seq: Some(next.wrapping_add(1)),
                };
                matching_send(list, &r, true)
            }
            _ => list.get(list.partition_point(|s| s.ts < e.ts)),
        };
        n.from = send.map(|s| crate::goroutines::SentBy {
            tid: s.tid,
            sent: s.ts,
            bytes: s.bytes,
        });
    }
}
