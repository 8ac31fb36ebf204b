//! Stacks attached to waits: a compact key while computing, symbol text at the end.
//!
//! Each wait carries the stack where its thread blocked (switch-out) and the stack of
//! the context that woke it. Every weight a wait adds to an edge is also added to those
//! two stacks on that edge, so an edge can show which code paths make it heavy.

use causeway_format::{DurationNs, StackId, Tables};
use causeway_model::StackRef;
use std::collections::HashMap;

const NONE: u32 = u32::MAX;

/// A user + kernel stack pair packed into 8 bytes (`u32::MAX` = absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct PackedStack {
    user: u32,
    kernel: u32,
}

impl PackedStack {
    /// No stack.
    pub(crate) const EMPTY: PackedStack = PackedStack {
        user: NONE,
        kernel: NONE,
    };

    /// Pack an optional model stack reference.
    pub(crate) fn from_ref(r: Option<StackRef>) -> PackedStack {
        let id = |s: Option<StackId>| s.map_or(NONE, |s| s.0.min(NONE - 1));
        match r {
            None => PackedStack::EMPTY,
            Some(r) => PackedStack {
                user: id(r.user),
                kernel: id(r.kernel),
            },
        }
    }

    /// True if neither stack is present.
    pub(crate) fn is_empty(self) -> bool {
        self == PackedStack::EMPTY
    }

    /// The user stack id.
    pub(crate) fn user(self) -> Option<StackId> {
        (self.user != NONE).then_some(StackId(self.user))
    }

    /// The kernel stack id.
    pub(crate) fn kernel(self) -> Option<StackId> {
        (self.kernel != NONE).then_some(StackId(self.kernel))
    }
}

/// Stacks keyed by what their user frames say rather than by id: user stacks of
/// different processes running the same code get different ids (frames are addresses
/// in one process), and comparing processes needs them equal.
#[derive(Default)]
pub(crate) struct Canonical {
    by_id: HashMap<StackId, u32>,
    by_text: HashMap<Vec<String>, u32>,
}

impl Canonical {
    /// The stack with its user part replaced by the first stack id seen with the same
    /// frame texts.
    pub(crate) fn of(&mut self, tables: &Tables, s: PackedStack) -> PackedStack {
        let Some(user) = s.user() else {
            return s;
        };
        let id = match self.by_id.get(&user) {
            Some(&c) => c,
            None => {
                let texts = tables.stack(user).map_or_else(Vec::new, |st| {
                    st.frames
                        .iter()
                        .flat_map(|&f| tables.frame_texts(f))
                        .collect()
                });
                let c = *self.by_text.entry(texts).or_insert(s.user);
                self.by_id.insert(user, c);
                c
            }
        };
        PackedStack {
            user: id,
            kernel: s.kernel,
        }
    }
}

/// Nanoseconds per stack on one edge.
pub(crate) type StackWeights = HashMap<PackedStack, u64>;

/// Add `ns` to `stack` unless the wait had no stack.
pub(crate) fn add(weights: &mut StackWeights, stack: PackedStack, ns: u64) {
    if !stack.is_empty() {
        *weights.entry(stack).or_default() += ns;
    }
}

/// Merge `from` into `into`.
pub(crate) fn merge(into: &mut StackWeights, from: StackWeights) {
    if into.is_empty() {
        *into = from;
        return;
    }
    for (k, v) in from {
        *into.entry(k).or_default() += v;
    }
}

/// One stack on an edge, symbolized. The frames are kept as text rather than stack ids
/// so the findings stand alone: renderers need neither the trace's tables nor the
/// rules for finding the program's own call site.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeStack {
    /// Edge weight carried by waits with this stack.
    pub weight: DurationNs,
    /// User frames, innermost first (`symbol+0xoff` or an address).
    pub user: Vec<String>,
    /// Index in `user` of the innermost function of the process's own executable (the
    /// program's call site below library frames; a function, not one inlined into
    /// it), if it is shown.
    pub call_site: Option<usize>,
    /// Kernel frames, innermost first.
    pub kernel: Vec<String>,
}

/// The heaviest `top` stacks, each cut to `depth` frames; ties broken by stack ids so
/// the output does not depend on hash order.
pub(crate) fn top(
    tables: &Tables,
    weights: &StackWeights,
    top: usize,
    depth: usize,
) -> Vec<EdgeStack> {
    let mut v: Vec<(&PackedStack, &u64)> = weights.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.into_iter()
        .take(top)
        .map(|(k, ns)| {
            let (user, call_site) = frames(tables, k.user(), depth);
            EdgeStack {
                weight: DurationNs(*ns),
                user,
                call_site,
                kernel: frames(tables, k.kernel(), depth).0,
            }
        })
        .collect()
}

/// The first `depth` frame texts (inlined calls expanded) and the index of the
/// program's own call site among them: the innermost frame of the program's own code
/// by `causeway_model::owncode`'s rule (JIT-compiled program code such as Java or
/// JavaScript, else the executable's functions; not Go's standard library on a
/// goroutine's stack). The stack is kept to the call site when it lies deeper than
/// `depth` (a Java method under a dozen frames of the JVM and the C library), so the
/// answer names the program's function, not only the library's leaf.
fn frames(tables: &Tables, id: Option<StackId>, depth: usize) -> (Vec<String>, Option<usize>) {
    let Some(stack) = id.and_then(|i| tables.stack(i)) else {
        return (Vec::new(), None);
    };
    let own = causeway_model::owncode::own_frames(tables, &stack.frames).own;
    let mut out = Vec::new();
    let mut call_site = None;
    for (i, &f) in stack.frames.iter().enumerate() {
        // Past the depth, go on only to reach the call site.
        if out.len() >= depth && (own.is_empty() || i > own.start) {
            break;
        }
        let texts = tables.frame_texts(f);
        // The function itself, not what was inlined into it, is the call site.
        if !own.is_empty() && i == own.start {
            call_site = Some(out.len() + texts.len() - 1);
        }
        out.extend(texts);
    }
    let keep = call_site.map_or(depth, |c| depth.max(c + 1));
    out.truncate(keep);
    (out, call_site)
}
