//! System call intervals, paired from the trace's `SyscallEnter` / `SyscallExit`
//! events.
//!
//! The model keeps threads' segments, not their system calls, so a command that wants
//! syscall latencies feeds this collector from the same single pass that builds the
//! model (the CLI tees the events of `Trace::read`'s producer into it): no second read
//! of the trace. It keeps one 24-byte record per completed call; an entry without an
//! exit or an exit without an entry is counted, never guessed.

use causeway_format::{Event, EventKind, Tid, Timestamp};
use rustc_hash::FxHashMap;

/// One completed system call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyscallSpan {
    /// The calling thread.
    pub tid: Tid,
    /// Syscall number (x86-64).
    pub nr: u32,
    /// Entry time.
    pub start: Timestamp,
    /// Exit time.
    pub end: Timestamp,
}

/// Completed calls and what could not be paired.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyscallSpans {
    /// Completed calls, in order of their exits.
    pub spans: Vec<SyscallSpan>,
    /// Exits whose entry was not seen (recording began during the call, or lost).
    pub exits_without_entry: u64,
    /// Entries never followed by their exit (still running at the end, or lost).
    pub entries_without_exit: u64,
}

/// Pairs entries with exits, one thread at a time.
#[derive(Debug, Default)]
pub struct SyscallCollector {
    open: FxHashMap<Tid, (u32, Timestamp)>,
    out: SyscallSpans,
}

impl SyscallCollector {
    /// An empty collector.
    pub fn new() -> SyscallCollector {
        SyscallCollector::default()
    }

    /// Take the next event (in time order); other kinds are ignored.
    pub fn push(&mut self, ev: &Event) {
        match ev.kind {
            EventKind::SyscallEnter { tid, nr, .. } => self.enter(tid, nr, ev.ts),
            EventKind::SyscallExit { tid, nr, .. } => match self.open.remove(&tid) {
                Some((open_nr, start)) if open_nr == nr => self.out.spans.push(SyscallSpan {
                    tid,
                    nr,
                    start,
                    end: ev.ts,
                }),
                Some(_) => {
                    self.out.entries_without_exit += 1;
                    self.out.exits_without_entry += 1;
                }
                None => self.out.exits_without_entry += 1,
            },
            _ => {}
        }
    }

    fn enter(&mut self, tid: Tid, nr: u32, ts: Timestamp) {
        // A thread is in one syscall at a time: an entry still open means its exit was
        // lost.
        if self.open.insert(tid, (nr, ts)).is_some() {
            self.out.entries_without_exit += 1;
        }
    }

    /// The calls, once every event has been pushed.
    pub fn finish(mut self) -> SyscallSpans {
        self.out.entries_without_exit += self.open.len() as u64;
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_testkit::synth::Synth;

    #[test]
    fn pairs_per_thread_and_counts_the_rest() {
        let mut s = Synth::new();
        s.syscall_exit(5, 0, 3, 0) // exit of a call begun before the recording
            .syscall_enter(10, 0, 1, 202)
            .syscall_enter(12, 1, 2, 0)
            .syscall_exit(40, 0, 1, 202)
            .syscall_exit(50, 1, 2, 0)
            .syscall_enter(60, 1, 2, 1); // still running at the end
        let mut c = SyscallCollector::new();
        for ev in s.events() {
            c.push(&ev);
        }
        let out = c.finish();
        let got: Vec<(u32, u32, u64)> = out
            .spans
            .iter()
            .map(|s| (s.tid.0, s.nr, s.end.0 - s.start.0))
            .collect();
        assert_eq!(got, vec![(1, 202, 30), (2, 0, 38)]);
        assert_eq!(out.exits_without_entry, 1);
        assert_eq!(out.entries_without_exit, 1);
    }
}
