//! The analysis: trees, then top functions, chains and signature matches.

use crate::chains::{chains, matches, top};
use crate::result::{CallsResult, ThreadCalls, Trigger, TriggerKind};
use crate::{Error, Options, tree};
use causeway_format::{Tid, Timestamp};
use causeway_model::Trace;

/// Statistics counters libcauseway writes (see `causeway_inproc::dump::counters`).
const TRIGGER: &str = "inproc.trigger";
const TRIGGER_TID: &str = "inproc.trigger_tid";
const TRIGGER_TS: &str = "inproc.trigger_ts_ns";

fn trigger(trace: &Trace) -> Option<Trigger> {
    let c = &trace.stats().counters;
    let kind = match c.get(TRIGGER)? {
        1 => TriggerKind::Call,
        2 => TriggerKind::Signal,
        3 => TriggerKind::Stall,
        4 => TriggerKind::Exit,
        _ => return None,
    };
    Some(Trigger {
        kind,
        tid: c
            .get(TRIGGER_TID)
            .filter(|&&t| t > 0)
            .map(|&t| Tid(t as u32)),
        ts: Timestamp(*c.get(TRIGGER_TS).unwrap_or(&0)),
    })
}

/// Rebuild the call trees of `trace` and rank them as `opts` asks.
pub fn analyze(trace: &Trace, opts: &Options) -> Result<CallsResult, Error> {
    let trig = trigger(trace);
    let threads: Vec<ThreadCalls> = tree::build(trace.facts().markers(), trig.map(|t| t.ts))
        .into_iter()
        .filter(|(tid, _)| opts.threads.is_empty() || opts.threads.contains(tid))
        .map(|(tid, t)| ThreadCalls {
            tid,
            calls: t.calls,
            stray_exits: t.stray_exits,
            mismatched_exits: t.mismatched_exits,
        })
        .collect();
    let last_end = threads
        .iter()
        .flat_map(|t| t.calls.iter().map(|c| c.end))
        .max()
        .unwrap_or(Timestamp(0));
    let to = trig.map_or(last_end, |t| t.ts.max(last_end));
    let from = Timestamp(to.0.saturating_sub(opts.window.0));
    Ok(CallsResult {
        top: top(&threads, opts.top),
        chains: chains(&threads, from, to, opts.chains),
        window: (from, to),
        matches: opts
            .pattern
            .as_ref()
            .map(|p| matches(trace, &threads, p))
            .unwrap_or_default(),
        trigger: trig,
        threads,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Pattern;
    use causeway_format::{Header, Marker, StringId, Tables};
    use causeway_testkit::synth::Synth;

    /// Thread 7: main > loop, which handles three requests; the second stalls 300 in
    /// read_config. Thread 8 runs `idle` for 100.
    fn trace() -> Trace {
        let tables = Tables {
            strings: ["", "main", "loop", "handle", "read_config", "idle"]
                .map(String::from)
                .to_vec(),
            ..Tables::default()
        };
        let id = |i: u32| StringId(i);
        let mut s = Synth::new();
        let (en, ex) = (
            |m| Marker::MethodEnter { method: id(m) },
            |m| Marker::MethodExit { method: id(m) },
        );
        s.marker(0, 0, 7, en(1)).marker(1, 0, 7, en(2));
        let mut t = 2;
        for stall in [10, 300, 10] {
            s.marker(t, 0, 7, en(3)).marker(t + 1, 0, 7, en(4));
            t += 1 + stall;
            s.marker(t, 0, 7, ex(4)).marker(t + 1, 0, 7, ex(3));
            t += 2;
        }
        s.marker(t, 0, 7, ex(2)).marker(t + 1, 0, 7, ex(1));
        s.marker(5, 0, 8, en(5)).marker(105, 0, 8, ex(5));
        Trace::from_events(tables, Header::synthetic(1), &s.events())
    }

    #[test]
    fn the_stalled_chain_ranks_first_and_the_signature_finds_three_calls() {
        let tr = trace();
        let opts = Options {
            pattern: Some(Pattern::parse("loop>handle>read_config").unwrap()),
            ..Options::default()
        };
        let r = analyze(&tr, &opts).unwrap();
        let first = &r.chains[0];
        let t = &r.threads[first.thread];
        let names: Vec<&str> = first
            .calls
            .iter()
            .map(|c| tr.tables().string(t.call(*c).unwrap().name))
            .collect();
        assert_eq!(names, ["main", "loop", "handle", "read_config"]);
        assert_eq!(first.self_in_window_ns.0, 300);
        assert_eq!(r.matches.len(), 3);
        assert_eq!(t.call(r.matches[0].calls[2]).unwrap().total_ns(), 300);
        assert_eq!(tr.tables().string(r.top[0].name), "read_config");
        assert_eq!(r.top[0].self_ns.0, 320);
        assert_eq!(r.top[0].calls, 3);
    }

    #[test]
    fn the_window_limits_chains_to_the_time_before_the_trigger() {
        let tr = trace();
        let opts = Options {
            window: causeway_format::DurationNs(10),
            ..Options::default()
        };
        let r = analyze(&tr, &opts).unwrap();
        assert!(r.chains.iter().all(|c| c.self_in_window_ns.0 <= 10));
    }
}
