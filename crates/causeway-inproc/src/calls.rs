//! Decoded records → a balanced sequence of calls per thread.
//!
//! A buffer holds only the recent past: its oldest exits may belong to calls entered
//! before it, and a pause of tracing (a dump, `cw_stop`) hides entries and exits made
//! meanwhile. Each stretch between resume records is therefore balanced on its own:
//! exits without an entry in the stretch become calls of an unknown function that began
//! at the stretch's start (they were on the stack then, so they enclose everything
//! before their exit), and calls still open at the stretch's end end there (at the
//! next resume, or when the buffer was copied). Times never go backwards within a
//! thread (a clock read on another CPU may be a few cycles behind; such times are
//! raised to the previous one and counted).

use crate::decode::Record;

/// One event of a balanced call sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallEvent {
    /// A call begins; `id` is `None` for a call that began before the recorded stretch.
    Enter {
        /// Clock.
        tsc: u64,
        /// Function id or address.
        id: Option<u64>,
    },
    /// The innermost open call ends.
    Exit {
        /// Clock.
        tsc: u64,
    },
}

/// A thread's balanced calls and what balancing had to make up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Balanced {
    /// Enters and exits, properly nested, times non-decreasing.
    pub events: Vec<CallEvent>,
    /// Calls whose entry was not recorded (began before the stretch).
    pub cut_at_start: u64,
    /// Calls whose exit was not recorded (still running, or tracing paused).
    pub open_at_end: u64,
    /// How many of the events' last exits close calls still running when the buffer
    /// was copied (made up at the copy time; a trace writer may leave them out so the
    /// calls show as still running).
    pub final_open: u64,
    /// Times raised to keep the thread's clock non-decreasing.
    pub clamped: u64,
}

/// Balance `records` (oldest first); calls still open at the end end at `end_tsc`.
pub fn balance(records: &[Record], end_tsc: u64) -> Balanced {
    let mut out = Balanced::default();
    let mut last = 0u64;
    let mut start = 0;
    while start < records.len() {
        let mut end = start + 1;
        while end < records.len() && !matches!(records[end], Record::Resume { .. }) {
            end += 1;
        }
        let stop_tsc = records.get(end).map_or(end_tsc, Record::tsc);
        out.final_open = stretch(&records[start..end], stop_tsc, &mut last, &mut out);
        start = end;
    }
    out
}

/// Balance one stretch; returns how many calls were still open at its end.
fn stretch(recs: &[Record], stop_tsc: u64, last: &mut u64, out: &mut Balanced) -> u64 {
    let Some(first) = recs.first() else { return 0 };
    let mut depth = 0i64;
    let mut min = 0i64;
    for r in recs {
        match r {
            Record::Enter { .. } => depth += 1,
            Record::Exit { .. } => {
                depth -= 1;
                min = min.min(depth);
            }
            Record::Resume { .. } => {}
        }
    }
    let mut clamp = |t: u64, out: &mut Balanced| {
        if t < *last {
            out.clamped += 1;
            *last
        } else {
            *last = t;
            t
        }
    };
    let t0 = clamp(first.tsc(), out);
    for _ in 0..(-min) {
        out.events.push(CallEvent::Enter { tsc: t0, id: None });
    }
    out.cut_at_start += (-min) as u64;
    for r in recs {
        match *r {
            Record::Enter { tsc, id } => {
                let tsc = clamp(tsc, out);
                out.events.push(CallEvent::Enter { tsc, id: Some(id) });
            }
            Record::Exit { tsc } => {
                let tsc = clamp(tsc, out);
                out.events.push(CallEvent::Exit { tsc });
            }
            Record::Resume { .. } => {}
        }
    }
    let open = depth - min;
    let t1 = clamp(stop_tsc, out);
    for _ in 0..open {
        out.events.push(CallEvent::Exit { tsc: t1 });
    }
    out.open_at_end += open as u64;
    open as u64
}

/// Whether `events` nest properly and never go back in time (what [`balance`]
/// guarantees; tests and the trace writer check it).
pub fn is_balanced(events: &[CallEvent]) -> bool {
    let mut depth = 0i64;
    let mut last = 0;
    for e in events {
        let t = match *e {
            CallEvent::Enter { tsc, .. } => {
                depth += 1;
                tsc
            }
            CallEvent::Exit { tsc } => {
                depth -= 1;
                tsc
            }
        };
        if depth < 0 || t < last {
            return false;
        }
        last = t;
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enter(tsc: u64, id: u64) -> Record {
        Record::Enter { tsc, id }
    }
    fn exit(tsc: u64) -> Record {
        Record::Exit { tsc }
    }

    #[test]
    fn exits_without_entries_enclose_the_earlier_calls() {
        // a() returns, then the caller that was open before the buffer returns.
        let b = balance(&[enter(10, 5), exit(12), exit(20)], 30);
        assert_eq!(
            b.events,
            vec![
                CallEvent::Enter { tsc: 10, id: None },
                CallEvent::Enter {
                    tsc: 10,
                    id: Some(5)
                },
                CallEvent::Exit { tsc: 12 },
                CallEvent::Exit { tsc: 20 },
            ]
        );
        assert_eq!((b.cut_at_start, b.open_at_end), (1, 0));
    }

    #[test]
    fn open_calls_end_at_the_next_resume_or_the_copy() {
        let b = balance(
            &[
                Record::Resume { tsc: 1 },
                enter(2, 7),
                Record::Resume { tsc: 9 },
                enter(10, 8),
            ],
            15,
        );
        assert!(is_balanced(&b.events));
        assert_eq!(b.events[1], CallEvent::Exit { tsc: 9 });
        assert_eq!(b.events[3], CallEvent::Exit { tsc: 15 });
        assert_eq!(b.open_at_end, 2);
        assert_eq!(b.final_open, 1);
    }

    #[test]
    fn times_going_backwards_are_raised_and_counted() {
        let b = balance(&[enter(10, 5), exit(9)], 11);
        assert!(is_balanced(&b.events));
        assert_eq!(b.clamped, 1);
    }
}
