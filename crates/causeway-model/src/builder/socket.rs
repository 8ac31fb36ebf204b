//! Socket events: sends are logged; a "data arrived" mark is attached to the wait its
//! wake-up just ended. Both are paired in [`crate::sockets::resolve`] when the model is
//! finished (on loopback a send's record comes after the wake-up it caused).

use super::ModelBuilder;
use crate::sockets::{Ready, Send};
use causeway_format::{FlowId, Tid, Timestamp};

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
        match found.and_then(|i| u32::try_from(i).ok()) {
            Some(segment) => th.readies.push(Ready {
                segment,
                ts,
                host,
                flow,
                seq,
            }),
            None => self.stats.data_marks_unattached += 1,
        }
    }
}
