//! Result → document: names resolved, times in integer ns from the trace start.

use super::doc::{
    CallDoc, CallsDoc, ChainDoc, MatchDoc, MatchesDoc, TopDoc, TreeCallDoc, TreeDoc, TriggerDoc,
};
use super::sections::CallsSections;
use crate::format::secs;
use causeway_calls::{Call, CallId, CallsResult, ThreadCalls, TriggerKind};
use causeway_format::{Tables, Timestamp};

struct Ctx<'a> {
    tables: &'a Tables,
    origin: u64,
}

impl Ctx<'_> {
    fn since_start(&self, t: Timestamp) -> u64 {
        t.0.saturating_sub(self.origin)
    }

    fn call(&self, c: &Call) -> CallDoc {
        CallDoc {
            function: self.tables.string(c.name).to_string(),
            start_ns: self.since_start(c.start),
            duration_ns: c.total_ns(),
            self_ns: c.self_ns(),
            open: c.open,
        }
    }

    fn calls(&self, t: &ThreadCalls, ids: &[CallId]) -> Vec<CallDoc> {
        ids.iter()
            .filter_map(|&i| t.call(i))
            .map(|c| self.call(c))
            .collect()
    }

    fn thread_name(&self, t: &ThreadCalls) -> String {
        self.tables
            .threads
            .iter()
            .find(|r| r.tid == t.tid)
            .map(|r| self.tables.string(r.comm).to_string())
            .unwrap_or_default()
    }
}

fn trigger(r: &CallsResult, ctx: &Ctx) -> Option<TriggerDoc> {
    let t = r.trigger?;
    let (kind, what) = match t.kind {
        TriggerKind::Call => ("call", "the program called cw_dump"),
        TriggerKind::Signal => ("signal", "the dump signal arrived"),
        TriggerKind::Stall => ("stall", "a thread missed its heartbeat (stall watchdog)"),
        TriggerKind::Exit => ("exit", "the process exited"),
    };
    let who = match (t.kind, t.tid) {
        (TriggerKind::Stall, Some(tid)) => format!(": thread {}", tid.0),
        _ => String::new(),
    };
    Some(TriggerDoc {
        kind,
        tid: t.tid.map(|t| t.0),
        at_ns: ctx.since_start(t.ts),
        sentence: format!(
            "dumped at {:.3} s because {what}{who}",
            secs(ctx.since_start(t.ts))
        ),
    })
}

fn tree(t: &ThreadCalls, min_ns: u64, ctx: &Ctx) -> TreeDoc {
    let shown: Vec<TreeCallDoc> = t
        .calls
        .iter()
        .filter(|c| c.total_ns() >= min_ns)
        .map(|c| TreeCallDoc {
            depth: c.depth,
            call: ctx.call(c),
        })
        .collect();
    TreeDoc {
        tid: t.tid.0,
        thread: ctx.thread_name(t),
        hidden: t.calls.len() - shown.len(),
        calls: shown,
    }
}

/// Build the document.
pub fn doc(r: &CallsResult, tables: &Tables, s: &CallsSections) -> CallsDoc {
    let origin = r
        .threads
        .iter()
        .filter_map(|t| t.calls.first().map(|c| c.start.0))
        .min()
        .unwrap_or(0);
    let ctx = Ctx { tables, origin };
    let chains = s.chains.then(|| {
        r.chains
            .iter()
            .map(|c| {
                let t = &r.threads[c.thread];
                ChainDoc {
                    tid: t.tid.0,
                    thread: ctx.thread_name(t),
                    self_in_window_ns: c.self_in_window_ns.0,
                    calls: ctx.calls(t, &c.calls),
                }
            })
            .collect()
    });
    let top = s.top.then(|| {
        r.top
            .iter()
            .map(|f| TopDoc {
                function: tables.string(f.name).to_string(),
                calls: f.calls,
                self_ns: f.self_ns.0,
                total_ns: f.total_ns.0,
                max_ns: f.max_ns.0,
            })
            .collect()
    });
    let matches = s.signature.as_ref().map(|sig| MatchesDoc {
        signature: sig.clone(),
        instances: r
            .matches
            .iter()
            .map(|m| {
                let t = &r.threads[m.thread];
                MatchDoc {
                    tid: t.tid.0,
                    calls: ctx.calls(t, &m.calls),
                }
            })
            .collect(),
    });
    let trees = s
        .tree
        .map(|min| r.threads.iter().map(|t| tree(t, min.0, &ctx)).collect());
    CallsDoc {
        calls: r.threads.iter().map(|t| t.calls.len()).sum(),
        threads: r.threads.len(),
        trigger: trigger(r, &ctx),
        window_ns: [ctx.since_start(r.window.0), ctx.since_start(r.window.1)],
        chains,
        top,
        matches,
        trees,
        unbalanced_exits: r
            .threads
            .iter()
            .map(|t| t.stray_exits + t.mismatched_exits)
            .sum(),
    }
}
