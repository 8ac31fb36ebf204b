//! The window of recent events a flight recorder keeps, and its dumps' names.

use causeway_format::{Event, EventKind};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// The most recent events, at most a given number.
#[derive(Clone, Debug)]
pub struct Window {
    events: VecDeque<Event>,
    capacity: usize,
    rotated_out: u64,
}

impl Window {
    /// A window of `capacity` events (at least one).
    pub fn new(capacity: usize) -> Window {
        Window {
            events: VecDeque::with_capacity(capacity.min(1 << 20)),
            capacity: capacity.max(1),
            rotated_out: 0,
        }
    }

    /// Add events, dropping the oldest beyond the capacity. A stack event is never
    /// kept without the event it belongs to: it is dropped with it.
    pub fn push(&mut self, evs: &[Event]) {
        self.events.extend(evs.iter().copied());
        while self.events.len() > self.capacity {
            self.events.pop_front();
            self.rotated_out += 1;
        }
        while matches!(
            self.events.front().map(|e| &e.kind),
            Some(EventKind::Stack { .. })
        ) {
            self.events.pop_front();
            self.rotated_out += 1;
        }
    }

    /// The events held, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Event> {
        self.events.iter()
    }

    /// Events held now.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Nothing held.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Events that fell out of the window (expected: that is the point).
    pub fn rotated_out(&self) -> u64 {
        self.rotated_out
    }
}

/// The path of dump number `n` (from 1) of a recording named `base`:
/// `NAME.cwt` gives `NAME.1.cwt`, `NAME.2.cwt`, ...
pub fn dump_path(base: &Path, n: usize) -> PathBuf {
    let stem = base
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "causeway-flight.cwt".into());
    let stem = stem.strip_suffix(".cwt").unwrap_or(&stem).to_string();
    base.with_file_name(format!("{stem}.{n}.cwt"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_events::ev;
    use causeway_format::{StackKind, Tid};

    #[test]
    fn the_oldest_go_first_and_a_stack_never_outlives_its_event() {
        let mut w = Window::new(3);
        let exit = |ts| ev(ts, EventKind::Exit { tid: Tid(1) });
        let stack = |ts| {
            ev(
                ts,
                EventKind::Stack {
                    tid: Tid(1),
                    kind: StackKind::SwitchOut,
                    user: None,
                    kernel: None,
                },
            )
        };
        w.push(&[exit(1), stack(1), exit(2)]);
        assert_eq!(w.len(), 3);
        // One more pushes out the first event; its stack, now first, goes with it.
        w.push(&[exit(3)]);
        let ts: Vec<u64> = w.iter().map(|e| e.ts.0).collect();
        assert_eq!(ts, [2, 3]);
        assert_eq!(w.rotated_out(), 2);
    }

    #[test]
    fn dumps_are_numbered_after_the_base_name() {
        assert_eq!(
            dump_path(Path::new("/t/slow.cwt"), 2),
            PathBuf::from("/t/slow.2.cwt")
        );
        assert_eq!(dump_path(Path::new("/t/x"), 1), PathBuf::from("/t/x.1.cwt"));
    }
}
