//! Events for the crate's tests.

use causeway_format::{Cpu, Event, EventKind, Timestamp};

/// An event at `ts` on CPU 0.
pub(crate) fn ev(ts: u64, kind: EventKind) -> Event {
    Event {
        ts: Timestamp(ts),
        cpu: Cpu(0),
        kind,
    }
}
