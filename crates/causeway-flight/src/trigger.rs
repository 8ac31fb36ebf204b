//! Flight-recorder trigger conditions: `blocked>200ms comm=NAME`, `runnable>50ms`.
//!
//! A condition watches the converted event stream for a target thread that stays
//! blocked (or runnable, waiting for a CPU) longer than a threshold. It fires once per
//! episode, either when the episode ends too late or, for a thread that is still
//! stuck, when the recorder checks while idle.

use crate::error::TriggerError;
use causeway_format::units::parse_duration_ns_with_unit;
use causeway_format::{Event, EventKind, TaskState, Tid, TriggerMark, TriggerReason};
use std::collections::HashMap;

/// Which wait is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitKind {
    /// Off CPU, not runnable.
    Blocked,
    /// Runnable, waiting for a CPU.
    Runnable,
}

/// A parsed `--trigger` condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// Wait measured.
    pub kind: WaitKind,
    /// Threshold in nanoseconds.
    pub threshold_ns: u64,
    /// Only threads with this name.
    pub comm: Option<String>,
}

impl Condition {
    /// Parse `blocked>200ms [comm=NAME]` or `runnable>50ms [comm=NAME]`. The threshold
    /// is a duration as [`causeway_format::units`] reads it, with its unit required.
    pub fn parse(s: &str) -> Result<Condition, TriggerError> {
        let mut kind = None;
        let mut comm = None;
        for part in s.split_whitespace() {
            if let Some(name) = part.strip_prefix("comm=") {
                comm = Some(name.to_string());
            } else if let Some((what, dur)) = part.split_once('>') {
                let k = match what {
                    "blocked" => WaitKind::Blocked,
                    "runnable" => WaitKind::Runnable,
                    _ => return Err(TriggerError::Measure(what.to_string())),
                };
                kind = Some((k, parse_duration_ns_with_unit(dur)?.0));
            } else {
                return Err(TriggerError::Part {
                    part: part.to_string(),
                    input: s.to_string(),
                });
            }
        }
        let (kind, threshold_ns) = kind.ok_or_else(|| TriggerError::Wait(s.to_string()))?;
        Ok(Condition {
            kind,
            threshold_ns,
            comm,
        })
    }
}

/// A fired condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fired {
    /// The thread.
    pub tid: Tid,
    /// How long it had waited when the condition was seen.
    pub waited_ns: u64,
    /// When (trace clock).
    pub at: u64,
}

#[derive(Clone, Copy)]
struct Episode {
    kind: WaitKind,
    since: u64,
    fired: bool,
}

/// Evaluates a condition over the event stream.
pub struct Watcher {
    cond: Condition,
    open: HashMap<u32, Episode>,
}

impl Watcher {
    /// Watch for `cond`.
    pub fn new(cond: Condition) -> Watcher {
        Watcher {
            cond,
            open: HashMap::new(),
        }
    }

    fn close(&mut self, tid: u32, at: u64) -> Option<Fired> {
        let ep = self.open.remove(&tid)?;
        let waited = at.saturating_sub(ep.since);
        (ep.kind == self.cond.kind && !ep.fired && waited > self.cond.threshold_ns).then_some(
            Fired {
                tid: Tid(tid),
                waited_ns: waited,
                at,
            },
        )
    }

    /// Feed events; `wanted(tid)` says whether a thread is a target (and has the
    /// condition's name). Returns the first firing, if any.
    pub fn feed(&mut self, evs: &[Event], wanted: &dyn Fn(Tid) -> bool) -> Option<Fired> {
        let mut first = None;
        for e in evs {
            let ts = e.ts.0;
            let fired = match e.kind {
                EventKind::SchedSwitch {
                    prev_tid,
                    prev_state,
                    next_tid,
                } => {
                    let f = self.close(next_tid.0, ts);
                    if !prev_tid.is_idle() && wanted(prev_tid) {
                        let kind = if prev_state.is_runnable() {
                            WaitKind::Runnable
                        } else if prev_state == TaskState::DEAD || prev_state.is_exiting() {
                            continue;
                        } else {
                            WaitKind::Blocked
                        };
                        self.open.insert(
                            prev_tid.0,
                            Episode {
                                kind,
                                since: ts,
                                fired: false,
                            },
                        );
                    }
                    f
                }
                EventKind::Wakeup { wakee, .. } => match self.open.get(&wakee.0).map(|e| e.kind) {
                    Some(WaitKind::Blocked) => {
                        let f = self.close(wakee.0, ts);
                        self.open.insert(
                            wakee.0,
                            Episode {
                                kind: WaitKind::Runnable,
                                since: ts,
                                fired: false,
                            },
                        );
                        f
                    }
                    _ => None,
                },
                EventKind::Exit { tid } => {
                    self.open.remove(&tid.0);
                    None
                }
                _ => None,
            };
            if first.is_none() {
                first = fired;
            }
        }
        first
    }

    /// Check threads still waiting at time `now` (trace clock).
    pub fn check_open(&mut self, now: u64) -> Option<Fired> {
        for (&tid, ep) in self.open.iter_mut() {
            let waited = now.saturating_sub(ep.since);
            if ep.kind == self.cond.kind && !ep.fired && waited > self.cond.threshold_ns {
                ep.fired = true;
                return Some(Fired {
                    tid: Tid(tid),
                    waited_ns: waited,
                    at: now,
                });
            }
        }
        None
    }

    /// The condition's thread-name filter.
    pub fn comm(&self) -> Option<&str> {
        self.cond.comm.as_deref()
    }

    /// The wait the condition measures.
    pub fn kind(&self) -> WaitKind {
        self.cond.kind
    }
}

/// The trace's record of a fired condition: reason, time, thread and when its stall
/// began.
pub fn mark_of(kind: WaitKind, f: &Fired) -> TriggerMark {
    TriggerMark {
        reason: match kind {
            WaitKind::Blocked => TriggerReason::Blocked,
            WaitKind::Runnable => TriggerReason::Runnable,
        },
        ts_ns: f.at,
        tid: Some(f.tid.0),
        stall_start_ns: Some(f.at.saturating_sub(f.waited_ns)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_events::ev;
    use causeway_format::{Cpu, Waker};

    #[test]
    fn conditions_parse() {
        let c = Condition::parse("blocked>200ms comm=worker").unwrap();
        assert_eq!(c.kind, WaitKind::Blocked);
        assert_eq!(c.threshold_ns, 200_000_000);
        assert_eq!(c.comm.as_deref(), Some("worker"));
        assert_eq!(
            Condition::parse("runnable>1.5s").unwrap().threshold_ns,
            1_500_000_000
        );
        assert!(Condition::parse("blocked>200").is_err());
        assert!(Condition::parse("slow>1s").is_err());
        assert!(Condition::parse("comm=x").is_err());
    }

    #[test]
    fn conditions_say_what_is_wrong() {
        use causeway_format::UnitError;
        let cases: &[(&str, TriggerError)] = &[
            (
                "blocked>200",
                TriggerError::Duration(UnitError::DurationUnit("200".into())),
            ),
            (
                "blocked>soon",
                TriggerError::Duration(UnitError::Duration("soon".into())),
            ),
            ("slow>1s", TriggerError::Measure("slow".into())),
            ("comm=x", TriggerError::Wait("comm=x".into())),
            (
                "blocked>1s x",
                TriggerError::Part {
                    part: "x".into(),
                    input: "blocked>1s x".into(),
                },
            ),
        ];
        for (s, e) in cases {
            assert_eq!(Condition::parse(s).as_ref(), Err(e), "{s}");
        }
        // The one duration grammar: any unit, decimals, minutes.
        assert_eq!(
            Condition::parse("runnable>2min").unwrap().threshold_ns,
            120_000_000_000
        );
        assert_eq!(
            Condition::parse("blocked>250us").unwrap().threshold_ns,
            250_000
        );
    }

    #[test]
    fn fires_once_on_a_long_block_and_not_on_a_short_one() {
        let mut w = Watcher::new(Condition::parse("blocked>100ms").unwrap());
        let all = |_: Tid| true;
        let sw = |ts, prev, st, next| {
            ev(
                ts,
                EventKind::SchedSwitch {
                    prev_tid: Tid(prev),
                    prev_state: st,
                    next_tid: Tid(next),
                },
            )
        };
        let wake = |ts, t| {
            ev(
                ts,
                EventKind::Wakeup {
                    wakee: Tid(t),
                    target_cpu: Cpu(0),
                    waker: Waker::Unknown,
                },
            )
        };
        let short = [sw(0, 5, TaskState::INTERRUPTIBLE, 0), wake(50_000_000, 5)];
        assert_eq!(w.feed(&short, &all), None);
        let long = [
            sw(60_000_000, 0, TaskState::RUNNABLE, 5),
            sw(70_000_000, 5, TaskState::INTERRUPTIBLE, 0),
        ];
        assert_eq!(w.feed(&long, &all), None);
        // Still blocked when checked: fires once.
        let f = w.check_open(200_000_000).unwrap();
        assert_eq!(f.tid, Tid(5));
        assert_eq!(w.check_open(300_000_000), None);
        // Its end does not fire again.
        assert_eq!(w.feed(&[wake(400_000_000, 5)], &all), None);
        // Another thread whose block ends late fires at the wake-up.
        let other = [
            sw(0, 7, TaskState::UNINTERRUPTIBLE, 0),
            wake(150_000_000, 7),
        ];
        assert_eq!(w.feed(&other, &all).unwrap().tid, Tid(7));
        // Threads that are not wanted never fire.
        let none = |_: Tid| false;
        let mut w = Watcher::new(Condition::parse("blocked>1ms").unwrap());
        assert_eq!(
            w.feed(
                &[sw(0, 9, TaskState::INTERRUPTIBLE, 0), wake(1 << 40, 9)],
                &none
            ),
            None
        );
    }
}
