//! The flight recorder's decisions: which recent events are kept ([`Window`]) and
//! when the window is due to be written out ([`Flight::due`]): when asked, or when a
//! trigger condition ([`trigger`]) fires, at most once per [`AUTO_DUMP_HOLDOFF`].
//!
//! It knows events, not how they were recorded or how a dump file is written: the
//! recorder feeds it each converted batch and writes the window when a dump is due.

mod error;
#[cfg(test)]
mod test_events;
pub mod trigger;
mod window;

pub use error::TriggerError;
pub use trigger::{Condition, WaitKind, Watcher};
pub use window::{Window, dump_path};

use causeway_format::{Event, Tid, TriggerMark, TriggerReason};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Least time between two dumps caused by a trigger condition: one that holds every
/// few milliseconds would otherwise write a file per batch.
pub const AUTO_DUMP_HOLDOFF: Duration = Duration::from_secs(1);

/// A dump to write now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Due {
    /// A trigger condition fired (not only a request).
    pub fired: bool,
    /// What to record as the dump's cause.
    pub mark: Option<TriggerMark>,
}

/// The window, the trigger condition, and the dumps' names.
pub struct Flight {
    window: Window,
    base: PathBuf,
    dumps: usize,
    watcher: Option<Watcher>,
    last_auto: Option<Instant>,
}

impl Flight {
    /// A window of `capacity` events, dumps named after `base` (`NAME.1.cwt`, ...),
    /// and an optional trigger condition.
    pub fn new(capacity: usize, base: &Path, trigger: Option<Condition>) -> Flight {
        Flight {
            window: Window::new(capacity),
            base: base.to_path_buf(),
            dumps: 0,
            watcher: trigger.map(Watcher::new),
            last_auto: None,
        }
    }

    /// Keep a batch of events in the window.
    pub fn push(&mut self, batch: &[Event]) {
        self.window.push(batch);
    }

    /// The events kept.
    pub fn window(&self) -> &Window {
        &self.window
    }

    /// The thread name the trigger condition is limited to, if any.
    pub fn comm(&self) -> Option<&str> {
        self.watcher.as_ref().and_then(Watcher::comm)
    }

    /// After a batch: whether the window is due to be written, and why. `asked`: a
    /// dump was requested; `now_ns`: the trace clock; `wanted`: the threads the
    /// condition watches. The batch feeds the condition whether or not a dump follows.
    pub fn due(
        &mut self,
        batch: &[Event],
        asked: bool,
        now_ns: u64,
        wanted: &dyn Fn(Tid) -> bool,
    ) -> Option<Due> {
        let mut fired = false;
        let mut mark = asked.then_some(TriggerMark {
            reason: TriggerReason::Asked,
            ts_ns: now_ns,
            tid: None,
            stall_start_ns: None,
        });
        if let Some(w) = self.watcher.as_mut() {
            let ended = w.feed(batch, wanted);
            let open = w.check_open(now_ns);
            if let Some(f) = ended.or(open) {
                fired = true;
                mark = Some(trigger::mark_of(w.kind(), &f));
            }
        }
        if fired
            && self
                .last_auto
                .is_some_and(|t| t.elapsed() < AUTO_DUMP_HOLDOFF)
        {
            fired = false;
        }
        if fired {
            self.last_auto = Some(Instant::now());
        }
        ((asked || fired) && !self.window.is_empty()).then_some(Due { fired, mark })
    }

    /// The path of the next dump (numbered from 1).
    pub fn next_path(&mut self) -> PathBuf {
        self.dumps += 1;
        dump_path(&self.base, self.dumps)
    }
}
