//! The result of the calls analysis: ids and integer nanoseconds, no prose.

use crate::tree::{Call, CallId};
use causeway_format::{DurationNs, StringId, Tid, Timestamp};

/// What made the producer write the trace (libcauseway's statistics counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerKind {
    /// The program called `cw_dump`.
    Call,
    /// The dump signal.
    Signal,
    /// A thread missed its heartbeat (the stall watchdog).
    Stall,
    /// Process exit.
    Exit,
}

/// The trigger of a libcauseway dump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trigger {
    /// Kind.
    pub kind: TriggerKind,
    /// The stalled thread, or the thread that asked.
    pub tid: Option<Tid>,
    /// When the dump was taken.
    pub ts: Timestamp,
}

/// One thread's calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadCalls {
    /// The thread.
    pub tid: Tid,
    /// Calls in entry order (pre-order; a call's subtree follows it).
    pub calls: Vec<Call>,
    /// Exits that closed nothing (ignored).
    pub stray_exits: u64,
    /// Exits whose name differed from the call they closed.
    pub mismatched_exits: u64,
}

impl ThreadCalls {
    /// A call by id.
    pub fn call(&self, id: CallId) -> Option<&Call> {
        self.calls.get(id.0 as usize)
    }

    /// The chain from the root down to `id` (root first).
    pub fn chain(&self, id: CallId) -> Vec<CallId> {
        let mut out = vec![id];
        let mut cur = self.call(id).and_then(|c| c.parent);
        while let Some(p) = cur {
            out.push(p);
            cur = self.call(p).and_then(|c| c.parent);
        }
        out.reverse();
        out
    }
}

/// A function's totals over all threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionStat {
    /// Name.
    pub name: StringId,
    /// Calls.
    pub calls: u64,
    /// Self time summed over calls.
    pub self_ns: DurationNs,
    /// Inclusive time, each span of time counted once even under recursion.
    pub total_ns: DurationNs,
    /// Longest single call (inclusive).
    pub max_ns: DurationNs,
}

/// A call chain: a call with its callers, ranked by the self time of its last call
/// inside the window before the trigger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    /// Index of the thread in [`CallsResult::threads`].
    pub thread: usize,
    /// Root first; the last is the call whose self time ranks the chain.
    pub calls: Vec<CallId>,
    /// Self time of the last call inside the window.
    pub self_in_window_ns: DurationNs,
}

/// One instance of the signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    /// Index of the thread in [`CallsResult::threads`].
    pub thread: usize,
    /// The matched calls, outermost first.
    pub calls: Vec<CallId>,
}

/// Everything `causeway calls` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallsResult {
    /// Per-thread calls (threads with at least one call, by tid).
    pub threads: Vec<ThreadCalls>,
    /// Functions by self time, most first.
    pub top: Vec<FunctionStat>,
    /// Chains by self time in the window, most first.
    pub chains: Vec<Chain>,
    /// The window the chains were ranked in.
    pub window: (Timestamp, Timestamp),
    /// Instances of the signature, longest innermost call first (empty without one).
    pub matches: Vec<Match>,
    /// The dump's trigger, if the trace says.
    pub trigger: Option<Trigger>,
}
