//! Ranking functions (self time) and chains (self time in the window before the
//! trigger), and finding signature instances.

use crate::options::Pattern;
use crate::result::{Chain, FunctionStat, Match, ThreadCalls};
use crate::tree::CallId;
use causeway_format::{DurationNs, StringId, Timestamp};
use causeway_model::Trace;
use rustc_hash::FxHashMap;

/// Functions by self time. Inclusive time counts only outermost calls of a function
/// (a recursive call's time is already inside its caller's).
pub fn top(threads: &[ThreadCalls], n: usize) -> Vec<FunctionStat> {
    let mut by: FxHashMap<StringId, FunctionStat> = FxHashMap::default();
    for t in threads {
        for (i, c) in t.calls.iter().enumerate() {
            let s = by.entry(c.name).or_insert(FunctionStat {
                name: c.name,
                calls: 0,
                self_ns: DurationNs(0),
                total_ns: DurationNs(0),
                max_ns: DurationNs(0),
            });
            s.calls += 1;
            s.self_ns.0 += c.self_ns();
            s.max_ns.0 = s.max_ns.0.max(c.total_ns());
            let recursive = t
                .chain(CallId(i as u32))
                .iter()
                .rev()
                .skip(1)
                .any(|a| t.call(*a).is_some_and(|a| a.name == c.name));
            if !recursive {
                s.total_ns.0 += c.total_ns();
            }
        }
    }
    let mut v: Vec<FunctionStat> = by.into_values().collect();
    v.sort_by(|a, b| b.self_ns.cmp(&a.self_ns).then(a.name.cmp(&b.name)));
    v.truncate(n);
    v
}

/// Self time of call `i` of `t` inside `[from, to]`: its span clipped to the window
/// minus its children's clipped spans.
fn self_in(t: &ThreadCalls, i: usize, from: Timestamp, to: Timestamp) -> u64 {
    let clip = |s: Timestamp, e: Timestamp| e.min(to).0.saturating_sub(s.max(from).0);
    let c = &t.calls[i];
    let mut own = clip(c.start, c.end);
    // Children follow their parent in pre-order; stop at the first call outside it.
    for k in i + 1..t.calls.len() {
        let d = &t.calls[k];
        if d.start > c.end || d.depth <= c.depth {
            break;
        }
        if d.depth == c.depth + 1 {
            own = own.saturating_sub(clip(d.start, d.end));
        }
    }
    own
}

/// The `n` calls with the most self time inside the window, with their callers.
pub fn chains(threads: &[ThreadCalls], from: Timestamp, to: Timestamp, n: usize) -> Vec<Chain> {
    let mut all = Vec::new();
    for (ti, t) in threads.iter().enumerate() {
        for (i, c) in t.calls.iter().enumerate() {
            if c.end < from || c.start > to {
                continue;
            }
            let own = self_in(t, i, from, to);
            if own > 0 {
                all.push((own, ti, i));
            }
        }
    }
    all.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    all.truncate(n);
    all.into_iter()
        .map(|(own, ti, i)| Chain {
            thread: ti,
            calls: threads[ti].chain(CallId(i as u32)),
            self_in_window_ns: DurationNs(own),
        })
        .collect()
}

/// Every instance of `p`: a call matching the last step whose direct callers match
/// the steps before it.
pub fn matches(trace: &Trace, threads: &[ThreadCalls], p: &Pattern) -> Vec<Match> {
    let name = |id: StringId| trace.tables().string(id);
    let k = p.steps.len();
    let mut out = Vec::new();
    for (ti, t) in threads.iter().enumerate() {
        for (i, c) in t.calls.iter().enumerate() {
            if !p.step_matches(k - 1, name(c.name)) {
                continue;
            }
            let mut ids = vec![CallId(i as u32)];
            let mut cur = c.parent;
            for step in (0..k - 1).rev() {
                match cur.and_then(|id| t.call(id).map(|c| (id, c))) {
                    Some((id, pc)) if p.step_matches(step, name(pc.name)) => {
                        ids.push(id);
                        cur = pc.parent;
                    }
                    _ => break,
                }
            }
            if ids.len() == k {
                ids.reverse();
                out.push(Match {
                    thread: ti,
                    calls: ids,
                });
            }
        }
    }
    // The innermost call of the signature is what a signature is usually about.
    let inner = |m: &Match| {
        m.calls
            .last()
            .and_then(|&c| threads[m.thread].call(c))
            .map_or(0, |c| c.total_ns())
    };
    out.sort_by_key(|m| std::cmp::Reverse(inner(m)));
    out
}
