//! Per-item splits of batching loops (Argus §4.2.1, first criterion: a small table of
//! well-known batch processing patterns, each batch split into its items).
//!
//! A thread that serves many peers in one wake-up mixes their work in one execution
//! segment: the event loop that `epoll_wait` woke for the first ready peer goes on to
//! read and serve every other ready peer before it waits again, so a slice from one
//! peer's stall would lead through the whole batch to whoever woke the loop. The
//! table below says where such a batch opens, which calls begin an item in it, and
//! how an item is told from the one before; the builder cuts the thread's exec
//! vertex at each item's first call and puts a weak edge across the cut (§4.2.2), so
//! each item keeps the strong edge of the input it took ([`crate::objects`]) and the
//! slice from a peer goes to the item that served it.
//!
//! A call begins an item only if it did not block (a blocking call already cuts the
//! segment at its wait) and succeeded. The table is data: a new pattern is a row.

use crate::objects::{READS, Waits};
use causeway_format::Timestamp;
use causeway_model::TimeSpan;
use causeway_stacks::SyscallSpan;

/// x86-64 readiness waits: one return reports every ready descriptor.
const READINESS: [u32; 7] = [
    232, // epoll_wait
    281, // epoll_pwait
    441, // epoll_pwait2
    7,   // poll
    271, // ppoll
    23,  // select
    270, // pselect6
];

/// x86-64 calls that take one peer's input: the receives and `accept`, `accept4`.
const TAKES_INPUT: [u32; 7] = [0, 19, 45, 47, 299, 43, 288];

/// How an item in a batch is told from the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NewItem {
    /// The call is on another kernel object (another peer's pipe or connection).
    OtherObject,
    /// The call took data another thread wrote (a new message, whoever sent it).
    NewData,
}

/// Where an open batch ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BatchEnd {
    /// At the next entry of one of the calls that open it (the loop goes back to
    /// its readiness wait, whether or not that blocks).
    NextOpen,
    /// At the thread's next blocking wait (it ran out of work).
    NextWait,
}

/// One batching pattern.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BatchPattern {
    /// Calls whose successful return opens a batch.
    pub opens: &'static [u32],
    /// Calls that may begin an item while the batch is open.
    pub items: &'static [u32],
    /// When such a call begins a new item.
    pub new_item: NewItem,
    /// Where the batch ends.
    pub ends: BatchEnd,
}

/// The table of batching patterns.
pub(crate) const PATTERNS: [BatchPattern; 2] = [
    // Readiness loop (libevent, libuv, nginx, Redis, Java NIO, Go's netpoller): one
    // return of epoll_wait, poll or select lists every ready descriptor, and the loop
    // reads (or accepts) each in turn before it waits again. A peer is a descriptor's
    // object, so an item begins where the loop turns to another object; reading the
    // same connection twice in a row is one item (a request read in pieces).
    BatchPattern {
        opens: &READINESS,
        items: &TAKES_INPUT,
        new_item: NewItem::OtherObject,
        ends: BatchEnd::NextOpen,
    },
    // Receive loop. A thread that wakes for one message drains its socket or pipe
    // until it would block (edge-triggered epoll, datagram and message-bus servers, a
    // loop catching up after a long computation). Each message taken is another
    // sender's request, whether or not it comes through the same descriptor, so an
    // item begins at every receive that took data another thread wrote; a receive
    // whose data was already counted (the rest of a long message) does not.
    BatchPattern {
        opens: &READS,
        items: &READS,
        new_item: NewItem::NewData,
        ends: BatchEnd::NextWait,
    },
];

/// An open batch of one pattern.
#[derive(Clone, Copy)]
struct Open {
    /// When it opened.
    since: Timestamp,
    /// The object of the item being served, once one began.
    object: Option<u64>,
}

/// The calls that begin a batch item in one thread (their entry is where its exec
/// vertex is cut), in time order. `calls` are the thread's system calls in entry order
/// (positions in the trace's list, for `new_data`); `new_data[i]` says the call took
/// a new message another thread wrote, without blocking.
pub(crate) fn item_calls(
    thread: u32,
    syscalls: &[SyscallSpan],
    calls: &[usize],
    new_data: &[bool],
    waits: &Waits,
) -> Vec<TimeSpan> {
    let mut open: [Option<Open>; PATTERNS.len()] = [None; PATTERNS.len()];
    let mut cuts = Vec::new();
    for &i in calls {
        let Some(c) = syscalls.get(i) else { continue };
        let (Some(end), Some(ret)) = (c.end, c.ret) else {
            continue;
        };
        let blocked = waits.last_in(thread, c.start, end).is_some();
        for (p, slot) in PATTERNS.iter().zip(open.iter_mut()) {
            // Close what ended before this call.
            if let Some(o) = *slot {
                let ended = match p.ends {
                    BatchEnd::NextOpen => p.opens.contains(&c.nr),
                    BatchEnd::NextWait => waits.last_in(thread, o.since, c.start).is_some(),
                };
                if ended {
                    *slot = None;
                }
            }
            // An item of an open batch.
            if let Some(o) = slot.as_mut()
                && p.items.contains(&c.nr)
                && !blocked
                && ret >= 0
            {
                let object = c.args[1];
                let new = match p.new_item {
                    NewItem::OtherObject => object != 0 && o.object != Some(object),
                    NewItem::NewData => new_data.get(i).copied().unwrap_or(false),
                };
                if new {
                    cuts.push(TimeSpan {
                        start: c.start,
                        end,
                    });
                    if object != 0 {
                        o.object = Some(object);
                    }
                }
            }
            // A batch opens when the call returns with something to serve.
            if p.opens.contains(&c.nr) && ret > 0 {
                *slot = Some(Open {
                    since: end,
                    object: None,
                });
            }
        }
    }
    cuts.sort_unstable_by_key(|s| s.start);
    cuts.dedup_by_key(|s| s.start);
    cuts
}
