//! Goroutine events: kept in time order for the goroutine view; the thread that ran
//! the runtime's code was running then.

use super::ModelBuilder;
use crate::cpu::{Pending, StackTarget};
use crate::goroutines::{GoEvent, GoEventKind, NetWait};
use causeway_format::{Cpu, EventKind, Timestamp};

impl ModelBuilder<'_> {
    pub(super) fn on_go(&mut self, ts: Timestamp, c: Cpu, kind: &EventKind) {
        let (tid, kind) = match *kind {
            EventKind::GoRun {
                tid,
                goid,
                parent,
                start,
            } => (
                tid,
                GoEventKind::Run {
                    goid,
                    parent,
                    start,
                },
            ),
            EventKind::GoPark { tid, goid, reason } => (
                tid,
                GoEventKind::Park {
                    goid,
                    reason,
                    stack: None,
                    net: None,
                },
            ),
            EventKind::GoNetWait {
                tid,
                goid,
                flow,
                seq,
            } => {
                self.on_go_net_wait(
                    ts,
                    tid,
                    goid,
                    NetWait {
                        flow,
                        seq,
                        from: None,
                    },
                );
                return;
            }
            EventKind::GoReady { tid, goid, by } => (tid, GoEventKind::Ready { goid, by }),
            _ => return,
        };
        self.touch(tid, ts);
        if matches!(kind, GoEventKind::Park { .. }) {
            self.cpu(c).pending = Some(Pending {
                ts,
                target: StackTarget::GoPark {
                    event: self.go_events.len(),
                },
            });
        }
        self.go_events.push(GoEvent { ts, tid, kind });
    }

    /// A network wait follows its park (same thread and time), a few events back at
    /// most; it tells which socket the goroutine waits to read.
    fn on_go_net_wait(&mut self, ts: Timestamp, tid: causeway_format::Tid, goid: u64, n: NetWait) {
        let park = self.go_events.iter_mut().rev().take(4).find(|e| {
            e.tid == tid
                && e.ts == ts
                && matches!(e.kind, GoEventKind::Park { goid: g, .. } if g == goid)
        });
        match park {
            Some(GoEvent {
                kind: GoEventKind::Park { net, .. },
                ..
            }) => *net = Some(n),
            _ => self.stats.unattached_go_net_waits += 1,
        }
    }
}
