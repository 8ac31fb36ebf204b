//! Write → read links on one kernel object: which write's data a read took from a
//! pipe, a socket or an eventfd (Argus §3.1's IPC edges, from the recorder's object
//! identity in `syscall_enter`: descriptor, object hash, object kind).
//!
//! A read that blocked is already linked to the write that ended its wait by the
//! kernel's wake-up, which names the waker. A read that found the data queued did not
//! wait, so no wake-up says where its data came from: this module says it, by
//! replaying each object's queue in time order.
//!
//! - **Queue.** Per object, writes enter the queue in the order they began; a read
//!   takes its returned byte count from the oldest writes it could have seen (begun
//!   before the read began, or before its wait ended if it blocked), so a pipe or a
//!   stream socket read of several small writes, and a datagram read of one, both
//!   come out right. An eventfd read takes the whole counter: every write pending.
//! - **Direction.** Both ends of a pipe, a socket pair or a TCP connection carry the
//!   same identity. An end is a descriptor of a process, so a socket read takes only
//!   writes made on another end (a thread's own sends on a connection are not what it
//!   receives); a pipe's read and write ends are different descriptors anyway. An
//!   eventfd is one counter that every holder writes and reads, so any end counts.
//! - **Strength** (§4.2.2: strong where the trace proves the link). A read whose data
//!   came from one other thread gets a strong edge from the vertex of that thread's
//!   oldest write it took (queues are first in, first out: the read surely got that
//!   one). Data from several threads in one read is ambiguous as to which of them
//!   the work after it serves: one weak edge from each, and the diagnosis asks.
//! - **Not linked.** A read that blocked and was woken by a thread (the wake-up edge
//!   links it); a read that blocked and was woken by an interrupt (a TCP receive is
//!   woken from the network softirq, which §3.1 filters out) is linked here, to its
//!   wait. Data a thread wrote and read itself adds nothing. Regular files are left
//!   out: reading a file does not consume what was written. `sendmmsg` / `recvmmsg`
//!   count messages rather than bytes and are left out of the queue, as are writes
//!   and reads that failed or whose exit the trace lacks.
//! - **Limits.** Data queued before the recording began, `MSG_PEEK`, datagrams
//!   truncated by a short buffer and eventfd semaphores can shift the replay by a
//!   few reads; it catches up when the queue runs empty.

use crate::graph::{Edge, EdgeKind, EventGraph, Strength, VertexId, VertexKind, WokenBy};
use causeway_format::{Tgid, Timestamp};
use causeway_model::TimeSpan;
use causeway_stacks::SyscallSpan;
use std::collections::{BTreeMap, VecDeque};

/// x86-64 calls that put data into the object behind their first argument.
const WRITES: [u32; 5] = [
    1,  // write
    20, // writev
    40, // sendfile (to its first argument)
    44, // sendto
    46, // sendmsg
];

/// x86-64 calls that take data out of the object behind their first argument.
pub(crate) const READS: [u32; 4] = [
    0,  // read
    19, // readv
    45, // recvfrom
    47, // recvmsg
];

/// Object kinds of `syscall_enter`'s third argument (docs/format.md).
const KIND_PIPE: u64 = 1;
const KIND_SOCKET: u64 = 2;
const KIND_ANON: u64 = 3;

/// A thread's blocking waits, in time order, with what ended each.
#[derive(Clone, Debug, Default)]
pub(crate) struct Waits {
    by_thread: Vec<Vec<(TimeSpan, Option<WokenBy>)>>,
}

impl Waits {
    /// Waits of each thread (by model index), each list in time order.
    pub(crate) fn new(by_thread: Vec<Vec<(TimeSpan, Option<WokenBy>)>>) -> Waits {
        Waits { by_thread }
    }

    /// The last wait of `thread` that began inside `[from, to)`.
    pub(crate) fn last_in(
        &self,
        thread: u32,
        from: Timestamp,
        to: Timestamp,
    ) -> Option<(TimeSpan, Option<WokenBy>)> {
        let list = self.by_thread.get(thread as usize)?;
        let i = list.partition_point(|(s, _)| s.start < to);
        let (span, by) = *list.get(i.checked_sub(1)?)?;
        (span.start >= from).then_some((span, by))
    }
}

/// One read that took data other threads wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Link {
    /// Position of the read in the trace's system calls.
    pub call: usize,
    /// The reader's thread (model index).
    pub reader: u32,
    /// The read's entry.
    pub read_start: Timestamp,
    /// When it took the data: its entry, or the end of the wait it blocked in.
    pub ready_at: Timestamp,
    /// It blocked (and an interrupt or nothing known ended the wait).
    pub blocked: bool,
    /// Each other thread whose data it took, with the entry of its oldest such write.
    pub writers: Vec<(u32, Timestamp)>,
    /// It took the first bytes of some write: a new message, not the rest of one an
    /// earlier read began.
    pub fresh: bool,
}

/// One write or read on an object.
struct Op {
    thread: u32,
    /// The descriptor's end: (process, descriptor).
    end: (u32, u64),
    start: Timestamp,
    bytes: u64,
    call: usize,
}

/// A write waiting in an object's queue.
struct Pending {
    thread: u32,
    start: Timestamp,
    left: u64,
    /// A read took some of it already.
    touched: bool,
}

/// Reads and writes of one object, by kind.
#[derive(Default)]
struct Object {
    kind: u64,
    writes: Vec<Op>,
    /// Reads, each with its ready time and whether a thread's wake-up ended its wait.
    reads: Vec<(Op, Timestamp, bool, bool)>,
}

/// The links of a trace. `thread_of[i]` is the model thread of `syscalls[i]` and
/// `tgid_of(thread)` its process (the thread itself if unknown).
pub(crate) fn links(
    syscalls: &[SyscallSpan],
    thread_of: &[Option<u32>],
    tgid_of: &dyn Fn(u32) -> Option<Tgid>,
    waits: &Waits,
) -> Vec<Link> {
    let mut objects: BTreeMap<u64, Object> = BTreeMap::new();
    for (i, c) in syscalls.iter().enumerate() {
        let [fd, obj, kind] = c.args;
        let is_write = WRITES.contains(&c.nr);
        if obj == 0
            || !(kind == KIND_PIPE || kind == KIND_SOCKET || kind == KIND_ANON)
            || !(is_write || READS.contains(&c.nr))
        {
            continue;
        }
        let (Some(Some(thread)), Some(end), Some(ret)) = (thread_of.get(i), c.end, c.ret) else {
            continue;
        };
        let Ok(bytes) = u64::try_from(ret) else {
            continue;
        };
        if bytes == 0 {
            continue;
        }
        let process = tgid_of(*thread).map_or(u32::MAX - *thread, |g| g.0);
        let op = Op {
            thread: *thread,
            end: (process, fd),
            start: c.start,
            bytes,
            call: i,
        };
        let o = objects.entry(obj).or_default();
        o.kind = kind;
        if is_write {
            o.writes.push(op);
        } else {
            let wait = waits.last_in(*thread, c.start, end);
            let ready = wait.map_or(c.start, |(s, _)| s.end);
            let by_thread = wait.is_some_and(|(_, by)| matches!(by, Some(WokenBy::Thread { .. })));
            o.reads.push((op, ready, wait.is_some(), by_thread));
        }
    }
    let mut out = Vec::new();
    for o in objects.values_mut() {
        replay(o, &mut out);
    }
    out.sort_by_key(|l| l.call);
    out
}

/// Replay one object's queue: each read takes the oldest data it could have seen.
fn replay(o: &mut Object, out: &mut Vec<Link>) {
    o.writes.sort_by_key(|w| w.start);
    o.reads.sort_by_key(|r| r.1);
    // One queue per writing end: a socket read skips the queue of its own end.
    let mut queues: BTreeMap<(u32, u64), VecDeque<Pending>> = BTreeMap::new();
    let mut next = 0usize;
    for (r, ready, blocked, by_thread) in &o.reads {
        while let Some(w) = o.writes.get(next).filter(|w| w.start < *ready) {
            queues.entry(w.end).or_default().push_back(Pending {
                thread: w.thread,
                start: w.start,
                left: w.bytes,
                touched: false,
            });
            next += 1;
        }
        let own_end_apart = o.kind == KIND_SOCKET || o.kind == KIND_PIPE;
        let mut need = if o.kind == KIND_ANON {
            u64::MAX
        } else {
            r.bytes
        };
        let mut writers: Vec<(u32, Timestamp)> = Vec::new();
        let mut fresh = false;
        while need > 0 {
            // The oldest pending write on another end.
            let Some(q) = queues
                .iter_mut()
                .filter(|(end, q)| !q.is_empty() && (!own_end_apart || **end != r.end))
                .min_by_key(|(_, q)| q.front().map(|p| p.start))
                .map(|(_, q)| q)
            else {
                break;
            };
            let Some(p) = q.front_mut() else { break };
            let take = p.left.min(need);
            p.left -= take;
            need -= take;
            if p.thread != r.thread {
                fresh |= !p.touched;
                if !writers.iter().any(|(t, _)| *t == p.thread) {
                    writers.push((p.thread, p.start));
                }
            }
            p.touched = true;
            if p.left == 0 {
                q.pop_front();
            }
        }
        if writers.is_empty() || *by_thread {
            continue;
        }
        out.push(Link {
            call: r.call,
            reader: r.thread,
            read_start: r.start,
            ready_at: *ready,
            blocked: *blocked,
            writers,
            fresh,
        });
    }
}

/// The edges of the links in a graph whose other edges are in: from each writer's
/// vertex at its write to the reader's vertex where it took the data (its wait if it
/// blocked), strong for one writer thread and weak for several. A link the wake-up
/// path already holds (the reader's run began after a wait the same writer vertex
/// woke) adds nothing.
pub(crate) fn edges(g: &EventGraph, links: &[Link]) -> Vec<Edge> {
    let mut out = Vec::new();
    for l in links {
        let to = if l.blocked {
            let ts = Timestamp(l.ready_at.0.saturating_sub(1));
            g.vertex_at(l.reader, ts)
                .filter(|&v| g.vertex(v).is_some_and(|x| x.kind == VertexKind::Wait))
        } else {
            g.vertex_at(l.reader, l.read_start)
        };
        let Some(to) = to else { continue };
        let strength = if l.writers.len() == 1 {
            Strength::Strong
        } else {
            Strength::Weak
        };
        for &(writer, ts) in &l.writers {
            let Some(from) = g.vertex_at(writer, ts) else {
                continue;
            };
            if from == to || woke_its_wait(g, from, to) {
                continue;
            }
            out.push(Edge {
                from,
                to,
                kind: EdgeKind::Data,
                strength,
                ts: l.ready_at,
            });
        }
    }
    // One edge per pair of vertices: the strong one if any, then the earliest.
    out.sort_by_key(|e| (e.to, e.from, e.strength == Strength::Weak, e.ts));
    out.dedup_by_key(|e| (e.to, e.from));
    out
}

/// True if `to` resumed after a wait that `from` woke.
fn woke_its_wait(g: &EventGraph, from: VertexId, to: VertexId) -> bool {
    g.incoming(to)
        .filter(|(_, e)| e.kind == EdgeKind::Resume)
        .any(|(_, r)| {
            g.incoming(r.from)
                .any(|(_, w)| w.from == from && w.kind == EdgeKind::Wakeup)
        })
}
