//! Per-CPU state while building: which thread the model believes is current, the
//! event awaiting its stack, and busy / idle accounting.

use crate::totals::CpuData;
use causeway_format::{Cpu, DurationNs, Tid, Timestamp};
use std::collections::BTreeMap;

/// CPU numbers below this are held in a vector indexed by number; higher ones (only a
/// damaged trace has them) in a map, so a bad number cannot make the builder allocate.
const DENSE_CPUS: u32 = 1 << 12;

/// The event a following stack event on the same CPU would belong to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum StackTarget {
    /// A switch-out of `tid`: the stack says where it blocked.
    SwitchOut { tid: Tid },
    /// A wake-up of `wakee` that closed its segment number `seg`.
    Waker { wakee: Tid, seg: usize },
    /// A wake-up with no blocked segment to hold the stack (a new thread, or a thread
    /// that was not blocked): the stack is expected and dropped.
    WakerUnused,
    /// A goroutine's park (index in the builder's goroutine event log): the stack says
    /// where it parks.
    GoPark { event: usize },
}

/// A stack target and the time of its event.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending {
    pub(crate) ts: Timestamp,
    pub(crate) target: StackTarget,
}

/// One CPU while building.
#[derive(Debug)]
pub(crate) struct CpuState {
    /// Thread believed current; `None` when unknown.
    pub(crate) current: Option<Tid>,
    /// Time of the last event seen on this CPU.
    pub(crate) last_ts: Option<Timestamp>,
    /// Event awaiting its stack.
    pub(crate) pending: Option<Pending>,
    /// Accounting: since when the CPU has been in `acct_idle` (`None`: unknown).
    acct_since: Timestamp,
    acct_idle: Option<bool>,
    /// True until the first switch or loss: the first switch's `prev` then tells what
    /// the CPU ran since the trace start.
    backfill: bool,
    data: CpuData,
}

impl CpuState {
    pub(crate) fn new(cpu: Cpu, trace_start: Timestamp) -> CpuState {
        CpuState {
            current: None,
            last_ts: None,
            pending: None,
            acct_since: trace_start,
            acct_idle: None,
            backfill: true,
            data: CpuData {
                cpu,
                ..CpuData::default()
            },
        }
    }

    fn account(&mut self, upto: Timestamp) {
        let d: DurationNs = upto.saturating_since(self.acct_since);
        match self.acct_idle {
            Some(true) => self.data.idle += d,
            Some(false) => self.data.busy += d,
            None => self.data.unknown += d,
        }
        self.acct_since = self.acct_since.max(upto);
    }

    /// A context switch from `prev` to `next` at `ts`.
    pub(crate) fn switch(&mut self, ts: Timestamp, prev: Tid, next: Tid) {
        if self.backfill {
            self.acct_idle = Some(prev.is_idle());
            self.backfill = false;
        }
        self.account(ts);
        self.acct_idle = Some(next.is_idle());
        self.data.switches += 1;
    }

    /// Events were lost since `from`: nothing is known until the next switch.
    pub(crate) fn lost(&mut self, from: Timestamp) {
        self.backfill = false;
        self.account(from);
        self.acct_idle = None;
        self.current = None;
        self.pending = None;
    }

    /// Final accounting up to `end`.
    pub(crate) fn finish(mut self, end: Timestamp) -> CpuData {
        self.account(end);
        self.data
    }
}

/// The CPUs seen so far, by number. Every event looks its CPU up, so the common case
/// is an index into a vector rather than a map search.
#[derive(Debug, Default)]
pub(crate) struct CpuTable {
    dense: Vec<Option<CpuState>>,
    sparse: BTreeMap<Cpu, CpuState>,
}

impl CpuTable {
    /// The state of `cpu`, created (accounting from `trace_start`) if not seen yet.
    #[inline]
    pub(crate) fn get_or_insert(&mut self, cpu: Cpu, trace_start: Timestamp) -> &mut CpuState {
        let i = cpu.0 as usize;
        if self.dense.get(i).is_some_and(Option::is_some) {
            return self.dense[i].get_or_insert_with(|| CpuState::new(cpu, trace_start));
        }
        self.insert(cpu, trace_start)
    }

    #[cold]
    fn insert(&mut self, cpu: Cpu, trace_start: Timestamp) -> &mut CpuState {
        if cpu.0 >= DENSE_CPUS {
            return self
                .sparse
                .entry(cpu)
                .or_insert_with(|| CpuState::new(cpu, trace_start));
        }
        let i = cpu.0 as usize;
        if i >= self.dense.len() {
            self.dense.resize_with(i + 1, || None);
        }
        self.dense[i].get_or_insert_with(|| CpuState::new(cpu, trace_start))
    }

    /// The state of `cpu`, if seen.
    #[inline]
    pub(crate) fn get_mut(&mut self, cpu: Cpu) -> Option<&mut CpuState> {
        if cpu.0 >= DENSE_CPUS {
            return self.sparse.get_mut(&cpu);
        }
        self.dense.get_mut(cpu.0 as usize)?.as_mut()
    }

    /// All CPU states, by CPU number.
    pub(crate) fn into_sorted(self) -> impl Iterator<Item = CpuState> {
        // Every dense number is below every sparse one.
        self.dense
            .into_iter()
            .flatten()
            .chain(self.sparse.into_values())
    }
}
