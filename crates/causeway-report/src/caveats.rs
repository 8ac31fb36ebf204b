//! What a reader must know before trusting a result: the parts of the recording that
//! are missing (a salvaged file, events lost in the analysed time). Every analysis
//! report puts these lines at its top (and a `caveats` object in its JSON), so that a
//! verdict built on partial data is never read as a complete one.

use causeway_format::SalvageMark;
use causeway_join::HostJoin;
use causeway_model::{LossCoverage, Trace};
use serde::Serialize;

/// The caveats of one trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Caveats {
    /// The trace was salvaged from a damaged or interrupted file: what it covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub salvaged: Option<SalvageMark>,
    /// Events lost while recording, with the time they cover; `None` if none were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost: Option<LossCoverage>,
    /// The sentences shown at the top of a text report.
    pub lines: Vec<String>,
    /// For a trace joined from several hosts' recordings: how each host entered it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostJoin>,
}

impl Caveats {
    /// The caveats of `trace` over its whole span (the window every analysis reads).
    pub fn of(trace: &Trace) -> Caveats {
        let cov = trace.model().loss_coverage();
        let lost = cov.any().then_some(cov);
        let mut c = Caveats {
            salvaged: trace.header().salvaged,
            lost,
            lines: crate::trace_notes(trace.header()),
            hosts: Vec::new(),
        };
        if let Some(l) = lost {
            c.lines.push(loss_line(&l));
        }
        if let Some(l) = go_line(trace) {
            c.lines.push(l);
        }
        c
    }

    /// The caveats of a trace joined from several hosts: how each host's clock was
    /// aligned and how many of its flows found their other end (see
    /// [`crate::joined`]).
    pub fn with_hosts(mut self, hosts: &[HostJoin]) -> Caveats {
        if hosts.len() > 1 {
            self.lines.extend(crate::joined::lines(hosts));
            self.hosts = hosts.to_vec();
        }
        self
    }

    /// Nothing to say.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// One sentence: how many events, on how many CPUs, and how much of the analysed time
/// they cover, and what that does to the result.
fn loss_line(l: &LossCoverage) -> String {
    let share = if l.window_ns == 0 {
        0.0
    } else {
        l.covered_ns as f64 * 100.0 / l.window_ns as f64
    };
    format!(
        "{} events were lost while recording ({} CPU{}), in {} of the {} analysed ({share:.1}%): what threads did there is unknown, so waits, edges and verdicts that involve those stretches may be missing or too light",
        l.events,
        l.cpus,
        if l.cpus == 1 { "" } else { "s" },
        seconds(l.covered_ns),
        seconds(l.window_ns)
    )
}

fn seconds(ns: u64) -> String {
    if ns >= 1_000_000_000 {
        format!("{:.2} s", ns as f64 / 1e9)
    } else {
        format!("{:.1} ms", ns as f64 / 1e6)
    }
}

/// A Go program recorded without goroutine events (the recorder's count), and what
/// that costs the answer.
fn go_line(trace: &Trace) -> Option<String> {
    let n = trace
        .stats()
        .counters
        .get("go_processes_unfollowed")
        .copied()
        .filter(|&n| n > 0)?;
    let what = if n == 1 {
        "a Go program was".to_string()
    } else {
        format!("{n} Go programs were")
    };
    Some(format!(
        "{what} recorded without goroutine events (`causeway record` names why): their threads' waits mix the goroutines they carry, and the runtime's own threads (its monitor, idle threads) may show as bottlenecks"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_format::{Header, Tables, TaskState};
    use causeway_testkit::synth::Synth;

    fn trace(s: &Synth) -> Trace {
        Trace::from_events(Tables::default(), Header::synthetic(2), &s.events())
    }

    #[test]
    fn a_trace_that_lost_events_says_how_much_time_they_cover() {
        let mut s = Synth::new();
        s.switch(1_000, 0, 0, TaskState::RUNNABLE, 10);
        s.lost(400_000_000, 1, 1234);
        s.switch(1_000_001_000, 0, 10, TaskState::RUNNABLE, 0);
        let c = Caveats::of(&trace(&s));
        let l = c.lost.expect("losses");
        assert_eq!(l.events, 1234);
        assert_eq!(c.lines.len(), 1);
        assert!(
            c.lines[0].contains("1234 events were lost"),
            "{}",
            c.lines[0]
        );
        assert!(
            c.lines[0].contains("of the 1.00 s analysed"),
            "{}",
            c.lines[0]
        );
    }

    #[test]
    fn a_complete_trace_has_no_caveat() {
        let mut s = Synth::new();
        s.switch(1_000, 0, 0, TaskState::RUNNABLE, 10);
        s.switch(2_000, 0, 10, TaskState::RUNNABLE, 0);
        assert!(Caveats::of(&trace(&s)).is_empty());
    }
}
