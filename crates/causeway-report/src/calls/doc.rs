//! The calls report as data: what the text shows and the JSON holds.

use serde::Serialize;

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallsDoc {
    /// Calls in the trace (selected threads).
    pub calls: usize,
    /// Threads with calls.
    pub threads: usize,
    /// One sentence on the dump's trigger, if the trace says.
    pub trigger: Option<TriggerDoc>,
    /// Window of the chains, ns from the trace start.
    pub window_ns: [u64; 2],
    /// Chains, longest self time first (absent if not asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chains: Option<Vec<ChainDoc>>,
    /// Top functions (absent if not asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top: Option<Vec<TopDoc>>,
    /// Signature matches (absent if no signature).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<MatchesDoc>,
    /// Call trees (absent if not asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trees: Option<Vec<TreeDoc>>,
    /// Exits that closed nothing or named another function, over all threads.
    pub unbalanced_exits: u64,
}

/// The trigger.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TriggerDoc {
    /// `call`, `signal`, `stall` or `exit`.
    pub kind: &'static str,
    /// The stalled thread or the thread that asked.
    pub tid: Option<u32>,
    /// When, ns from the trace start.
    pub at_ns: u64,
    /// In words.
    pub sentence: String,
}

/// One call of a chain or match.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallDoc {
    /// Function name.
    pub function: String,
    /// Entry, ns from the trace start.
    pub start_ns: u64,
    /// Inclusive duration, ns.
    pub duration_ns: u64,
    /// Self duration, ns.
    pub self_ns: u64,
    /// Still running when the trace was taken.
    pub open: bool,
}

/// One chain.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChainDoc {
    /// Thread id.
    pub tid: u32,
    /// Thread name.
    pub thread: String,
    /// Self time of the last call inside the window, ns.
    pub self_in_window_ns: u64,
    /// Root first.
    pub calls: Vec<CallDoc>,
}

/// One function's totals.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopDoc {
    /// Function name.
    pub function: String,
    /// Calls.
    pub calls: u64,
    /// Self time, ns.
    pub self_ns: u64,
    /// Inclusive time (recursion counted once), ns.
    pub total_ns: u64,
    /// Longest call, ns.
    pub max_ns: u64,
}

/// The signature search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatchesDoc {
    /// As written.
    pub signature: String,
    /// Instances, longest innermost call first.
    pub instances: Vec<MatchDoc>,
}

/// One instance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatchDoc {
    /// Thread id.
    pub tid: u32,
    /// The matched calls, outermost first.
    pub calls: Vec<CallDoc>,
}

/// One thread's tree.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TreeDoc {
    /// Thread id.
    pub tid: u32,
    /// Thread name.
    pub thread: String,
    /// Calls shown (at least the minimum duration), in entry order with their depth.
    pub calls: Vec<TreeCallDoc>,
    /// Calls left out as shorter than the minimum.
    pub hidden: usize,
}

/// A call in a tree.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TreeCallDoc {
    /// Depth (0 for a root).
    pub depth: u32,
    /// The call.
    #[serde(flatten)]
    pub call: CallDoc,
}
