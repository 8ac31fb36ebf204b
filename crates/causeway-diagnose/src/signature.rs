//! The similarity signature of a vertex (Argus §3.3): system call names, key
//! arguments and call stacks, a run of the same call counted once, return values
//! kept except for wait operations (a normal and a stalled wait may differ only in
//! what the wait returned).

use crate::graph::{Vertex, VertexKind};
use causeway_format::StackId;

/// x86-64 numbers of the calls whose return value says only how a wait ended:
/// read, poll, select, sched_yield, nanosleep, wait4, futex, epoll_wait,
/// clock_nanosleep, pselect6, ppoll, epoll_pwait, epoll_pwait2.
const WAITS: [u32; 13] = [0, 7, 23, 24, 35, 61, 202, 232, 230, 270, 271, 281, 441];

/// One call in a signature: number, key arguments, return value (none for a wait)
/// and call site.
type CallKey = (u32, [u64; 3], Option<i64>, Option<StackId>);

/// A vertex's signature; equal signatures mean similar vertices.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Signature {
    kind: VertexKind,
    wait_call: Option<u32>,
    wait_stack: Option<StackId>,
    calls: Vec<CallKey>,
}

impl Signature {
    /// The signature of `v`.
    pub fn of(v: &Vertex) -> Signature {
        Signature {
            kind: v.kind,
            wait_call: v.wait_call,
            wait_stack: v.stack.and_then(|s| s.user),
            calls: v
                .calls
                .iter()
                .map(|c| {
                    let ret = if WAITS.contains(&c.nr) { None } else { c.ret };
                    (c.nr, c.args, ret, c.stack.and_then(|s| s.user))
                })
                .collect(),
        }
    }
}
