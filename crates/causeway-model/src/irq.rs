//! Interrupt intervals per CPU and block requests matched from issue to completion.
//!
//! wPerf models devices as pseudo threads: a hard IRQ or softirq that wakes a thread is
//! a device ending a wait, and a block request's latency is time spent waiting for the
//! disk. This module keeps both as flat lists; it does not attribute interrupt time to
//! the interrupted thread (the thread's timeline shows it as running).

use crate::stats::ModelStats;
use causeway_format::{BlockOp, Cpu, DevId, DurationNs, SoftirqVec, StringId, Tid, Timestamp};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::collections::hash_map::Entry;

/// Which interrupt context ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InterruptSource {
    /// A hard interrupt handler.
    Irq {
        /// Interrupt number.
        irq: u32,
        /// Handler name (string table id).
        name: StringId,
    },
    /// A softirq vector.
    Softirq {
        /// Which softirq.
        vec: SoftirqVec,
    },
}

/// One run of an interrupt handler on one CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterruptInterval {
    /// The CPU it ran on.
    pub cpu: Cpu,
    /// The handler.
    pub source: InterruptSource,
    /// Entry time.
    pub start: Timestamp,
    /// Exit time, or a bound (loss of events, trace end) if `end_known` is false.
    pub end: Timestamp,
    /// True if the exit event was seen.
    pub end_known: bool,
}

impl InterruptInterval {
    /// Time in the handler.
    pub fn duration(&self) -> DurationNs {
        self.end.saturating_since(self.start)
    }
}

/// A block request from issue to completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockRequest {
    /// The device.
    pub dev: DevId,
    /// First sector.
    pub sector: u64,
    /// Size in bytes at issue.
    pub bytes: u32,
    /// Operation and flags at issue.
    pub op: BlockOp,
    /// Thread current when it was issued (may be a kworker).
    pub issue_tid: Tid,
    /// CPU it was issued on.
    pub issue_cpu: Cpu,
    /// Issue time.
    pub issue: Timestamp,
    /// Completion time.
    pub complete: Timestamp,
    /// CPU the completion ran on.
    pub complete_cpu: Cpu,
    /// 0 or a negative errno.
    pub error: i32,
}

impl BlockRequest {
    /// Device latency: issue to completion.
    pub fn latency(&self) -> DurationNs {
        self.complete.saturating_since(self.issue)
    }
}

#[derive(Clone, Copy, Debug)]
struct OpenInterrupt {
    source: InterruptSource,
    start: Timestamp,
}

/// Matches interrupt entries with exits per CPU.
#[derive(Debug, Default)]
pub(crate) struct IrqTracker {
    // Looked up on every interrupt entry and exit: a fast hash of the CPU number.
    open: FxHashMap<Cpu, Vec<OpenInterrupt>>,
    done: Vec<InterruptInterval>,
}

impl IrqTracker {
    pub(crate) fn entry(&mut self, cpu: Cpu, ts: Timestamp, source: InterruptSource) {
        self.open
            .entry(cpu)
            .or_default()
            .push(OpenInterrupt { source, start: ts });
    }

    /// Close the innermost open interval on `cpu` that `matches`; false if none.
    pub(crate) fn exit(
        &mut self,
        cpu: Cpu,
        ts: Timestamp,
        matches: impl Fn(&InterruptSource) -> bool,
    ) -> bool {
        let Some(stack) = self.open.get_mut(&cpu) else {
            return false;
        };
        let Some(pos) = stack.iter().rposition(|o| matches(&o.source)) else {
            return false;
        };
        // Anything opened after the matched entry never saw its exit.
        for o in stack.drain(pos..).rev() {
            let end_known = matches(&o.source);
            self.done.push(InterruptInterval {
                cpu,
                source: o.source,
                start: o.start,
                end: ts,
                end_known,
            });
        }
        true
    }

    /// Close every open interval on `cpu` at `at`, end unknown (events were lost).
    pub(crate) fn abandon_cpu(&mut self, cpu: Cpu, at: Timestamp) {
        if let Some(stack) = self.open.get_mut(&cpu) {
            for o in stack.drain(..) {
                self.done.push(InterruptInterval {
                    cpu,
                    source: o.source,
                    start: o.start,
                    end: at.max(o.start),
                    end_known: false,
                });
            }
        }
    }

    /// All intervals, open ones closed at `end`, sorted by start time then CPU.
    pub(crate) fn finish(mut self, end: Timestamp) -> Vec<InterruptInterval> {
        let cpus: Vec<Cpu> = self.open.keys().copied().collect();
        for cpu in cpus {
            self.abandon_cpu(cpu, end);
        }
        let mut done = self.done;
        done.sort_by_key(|i| (i.start, i.cpu, i.end));
        done
    }
}

#[derive(Clone, Copy, Debug)]
struct Issued {
    bytes: u32,
    op: BlockOp,
    tid: Tid,
    cpu: Cpu,
    ts: Timestamp,
}

/// The requests in flight at one sector, oldest first. There is almost always exactly
/// one, so it is held inline and a request costs no allocation of its own.
#[derive(Debug)]
struct SectorQueue {
    head: Issued,
    rest: VecDeque<Issued>,
}

impl SectorQueue {
    fn len(&self) -> usize {
        1 + self.rest.len()
    }

    fn iter(&self) -> impl Iterator<Item = &Issued> {
        std::iter::once(&self.head).chain(&self.rest)
    }
}

/// Matches block issues with completions by device and sector.
///
/// Requests at the same sector queue in issue order (flushes are all issued at sector
/// 0). A completion whose sector matches nothing is a request the flush machinery
/// rewrote (a write with preflush or FUA completes as `sector 0 + 0`, a flush as sector
/// `u64::MAX`): it is matched with the oldest in-flight request of the device with the
/// same operation, then with the oldest of any operation on the device.
#[derive(Debug, Default)]
pub(crate) struct BlockTracker {
    // Looked up on every issue and completion: a fast hash of the integers.
    in_flight: FxHashMap<(DevId, u64), SectorQueue>,
    done: Vec<BlockRequest>,
}

impl BlockTracker {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn issue(
        &mut self,
        stats: &mut ModelStats,
        ts: Timestamp,
        cpu: Cpu,
        tid: Tid,
        dev: DevId,
        sector: u64,
        bytes: u32,
        op: BlockOp,
    ) {
        let issued = Issued {
            bytes,
            op,
            tid,
            cpu,
            ts,
        };
        match self.in_flight.entry((dev, sector)) {
            Entry::Occupied(mut e) => {
                let q = e.get_mut();
                // Two data requests for one sector in flight at once means a completion
                // was not recorded; same-sector flushes are normal.
                if bytes > 0 && q.iter().any(|i| i.bytes > 0) {
                    stats.block_reissued += 1;
                }
                q.rest.push_back(issued);
            }
            Entry::Vacant(e) => {
                e.insert(SectorQueue {
                    head: issued,
                    rest: VecDeque::new(),
                });
            }
        }
    }

    /// Remove and return the oldest request in flight at `key`.
    fn pop(&mut self, key: (DevId, u64)) -> Option<Issued> {
        let q = self.in_flight.get_mut(&key)?;
        match q.rest.pop_front() {
            Some(next) => Some(std::mem::replace(&mut q.head, next)),
            None => self.in_flight.remove(&key).map(|q| q.head),
        }
    }

    /// Remove and return the in-flight request a completion belongs to.
    fn take_match(&mut self, dev: DevId, sector: u64, op: BlockOp) -> Option<(u64, Issued)> {
        if let Some(i) = self.pop((dev, sector)) {
            return Some((sector, i));
        }
        let oldest = |same_op: bool| {
            self.in_flight
                .iter()
                .filter(|((d, _), _)| *d == dev)
                .map(|(k, q)| (k.1, &q.head))
                .filter(|(_, i)| !same_op || i.op.kind == op.kind)
                .min_by_key(|(s, i)| (i.ts, *s))
                .map(|(s, _)| s)
        };
        let sector = oldest(true).or_else(|| oldest(false))?;
        self.pop((dev, sector)).map(|i| (sector, i))
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn complete(
        &mut self,
        stats: &mut ModelStats,
        ts: Timestamp,
        cpu: Cpu,
        dev: DevId,
        sector: u64,
        bytes: u32,
        op: BlockOp,
        error: i32,
    ) {
        match self.take_match(dev, sector, op) {
            Some((sector, i)) => self.done.push(BlockRequest {
                dev,
                sector,
                bytes: i.bytes,
                op: i.op,
                issue_tid: i.tid,
                issue_cpu: i.cpu,
                issue: i.ts,
                complete: ts,
                complete_cpu: cpu,
                error,
            }),
            // An empty write with preflush is completed by the flush machinery after
            // its flush, without ever being issued to the device: nothing to match.
            None if bytes == 0 => stats.dataless_flush_completions += 1,
            None => stats.unmatched_block_completions += 1,
        }
    }

    /// Completed requests sorted by issue time; counts the ones still in flight.
    pub(crate) fn finish(self, stats: &mut ModelStats) -> Vec<BlockRequest> {
        stats.block_in_flight_at_end +=
            self.in_flight.values().map(|q| q.len() as u64).sum::<u64>();
        let mut done = self.done;
        done.sort_by_key(|r| (r.issue, r.dev, r.sector));
        done
    }
}
