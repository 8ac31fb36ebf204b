//! The finished model: what every analysis reads.
//!
//! A [`Model`] is immutable and deterministic: threads are sorted by tid (then by time
//! for reused tids), processes by tgid, CPUs by number, intervals by time.

use crate::irq::{BlockRequest, InterruptInterval};
use crate::links::WakeLinks;
use crate::process::ProcessNode;
use crate::segment::{Segment, SegmentId, TimeSpan};
use crate::stats::{LossWindow, ModelStats};
use crate::thread::Thread;
use crate::totals::CpuData;
use causeway_format::{Cpu, Tgid, Tid, Timestamp};
use serde::{Deserialize, Serialize};

/// Threads, processes, CPUs, interrupts and block requests of one trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Model {
    pub(crate) span: Option<TimeSpan>,
    pub(crate) threads: Vec<Thread>,
    pub(crate) processes: Vec<ProcessNode>,
    pub(crate) cpus: Vec<CpuData>,
    pub(crate) interrupts: Vec<InterruptInterval>,
    pub(crate) block_requests: Vec<BlockRequest>,
    pub(crate) losses: Vec<LossWindow>,
    pub(crate) stats: ModelStats,
    /// `(wakee's blocked segment, waker's segment)` of every wake-up by a thread of the
    /// model, sorted by the first; computed on the first [`Model::waker_segment`] call.
    /// Kept beside the segments rather than in [`crate::WakeInfo`]: one more field there
    /// would grow every segment by 8 bytes (6 % of a large model's memory), and an
    /// analysis that never follows wake-ups to their waker's segment (the bottleneck
    /// analysis) pays nothing for them.
    #[serde(skip)]
    pub(crate) wake_links: WakeLinks,
    /// Goroutine events of the trace, in time order (empty without Go programs).
    #[serde(default)]
    pub(crate) go_events: Vec<crate::goroutines::GoEvent>,
    /// In a goroutine view: the goroutines standing as threads, by tid.
    #[serde(default)]
    pub(crate) goroutines: Vec<crate::goroutines::GoroutineInfo>,
}

impl Model {
    /// First and last event time; `None` for an empty trace.
    pub fn span(&self) -> Option<TimeSpan> {
        self.span
    }

    /// All threads except the idle task, sorted by tid; a reused tid appears once per
    /// thread that had it, oldest first.
    pub fn threads(&self) -> std::slice::Iter<'_, Thread> {
        self.threads.iter()
    }

    /// The thread at an index of [`Model::threads`] (as in [`SegmentId::thread`]).
    pub fn thread_by_index(&self, index: u32) -> Option<&Thread> {
        self.threads.get(index as usize)
    }

    /// Index in [`Model::threads`] of the incarnation of `tid` alive at `ts`: the latest
    /// one whose timeline started by then, else the first.
    pub fn thread_index_at(&self, tid: Tid, ts: Timestamp) -> Option<u32> {
        thread_index_at(&self.threads, tid, ts)
    }

    /// The segment the waker ran in when it ended the blocked segment `wakee` (the
    /// segment it was running in at the wake-up), when the waker is a thread of the
    /// model: the edge an event graph follows from a wait to its cause.
    ///
    /// The first call links every wake-up of the model at once (two sorts and one
    /// sweep of each waker's timeline); later calls are a binary search.
    pub fn waker_segment(&self, wakee: SegmentId) -> Option<SegmentId> {
        let links = self.wake_links.get(&self.threads);
        links
            .binary_search_by_key(&wakee, |(w, _)| *w)
            .ok()
            .and_then(|i| links.get(i))
            .map(|(_, waker)| *waker)
    }

    /// For a wait ended by data that a recorded thread sent on a socket, how: the
    /// sender (also the wait's waker), the flow, the bytes and when they were sent.
    pub fn data_wake(&self, wakee: SegmentId) -> Option<&crate::DataWake> {
        self.thread_by_index(wakee.thread)?.data_wake(wakee.index)
    }

    /// The segment with this id.
    pub fn segment(&self, id: SegmentId) -> Option<&Segment> {
        self.threads
            .get(id.thread as usize)
            .and_then(|t| t.segments.get(id.index as usize))
    }

    /// The first thread with this tid.
    pub fn thread(&self, tid: Tid) -> Option<&Thread> {
        self.threads_with_tid(tid).first()
    }

    /// Every thread that had this tid, oldest first.
    pub fn threads_with_tid(&self, tid: Tid) -> &[Thread] {
        let lo = self.threads.partition_point(|t| t.tid < tid);
        let hi = self.threads.partition_point(|t| t.tid <= tid);
        self.threads.get(lo..hi).unwrap_or(&[])
    }

    /// Processes, sorted by tgid.
    pub fn processes(&self) -> std::slice::Iter<'_, ProcessNode> {
        self.processes.iter()
    }

    /// The process with this tgid.
    pub fn process(&self, tgid: Tgid) -> Option<&ProcessNode> {
        self.processes
            .binary_search_by_key(&tgid, |p| p.tgid)
            .ok()
            .and_then(|i| self.processes.get(i))
    }

    /// Per-CPU time, sorted by CPU number (every CPU of the header, plus any other seen).
    pub fn cpus(&self) -> &[CpuData] {
        &self.cpus
    }

    /// One CPU's time.
    pub fn cpu(&self, cpu: Cpu) -> Option<&CpuData> {
        self.cpus.iter().find(|c| c.cpu == cpu)
    }

    /// Hard IRQ and softirq intervals, sorted by start time then CPU.
    pub fn interrupts(&self) -> &[InterruptInterval] {
        &self.interrupts
    }

    /// Completed block requests, sorted by issue time.
    pub fn block_requests(&self) -> &[BlockRequest] {
        &self.block_requests
    }

    /// Windows of lost events, in time order.
    pub fn losses(&self) -> &[LossWindow] {
        &self.losses
    }

    /// How much of the whole trace lost events cover (nothing lost for an empty one).
    pub fn loss_coverage(&self) -> crate::LossCoverage {
        match self.span {
            Some(s) => crate::LossCoverage::of(&self.losses, s.start, s.end),
            None => crate::LossCoverage::default(),
        }
    }

    /// What the builder counted.
    pub fn stats(&self) -> &ModelStats {
        &self.stats
    }
}

/// See [`Model::thread_index_at`]; `threads` sorted by tid, then by time.
pub(crate) fn thread_index_at(threads: &[Thread], tid: Tid, ts: Timestamp) -> Option<u32> {
    let lo = threads.partition_point(|t| t.tid < tid);
    let hi = threads.partition_point(|t| t.tid <= tid);
    if lo >= hi {
        return None;
    }
    let started = (lo..hi)
        .rev()
        .find(|&i| threads[i].span().is_some_and(|s| s.start <= ts));
    u32::try_from(started.unwrap_or(lo)).ok()
}
