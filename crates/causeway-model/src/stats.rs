//! Counters of what the model could not explain, and the windows of lost events.
//!
//! The builder never panics or stops on bad data: each surprise is counted here (as
//! Perfetto's stats table does) and the affected interval is marked
//! [`crate::UnknownCause`] in the timelines. Reports show these counters so a reader
//! knows how far to trust the result.

use causeway_format::{Cpu, Timestamp};
use serde::{Deserialize, Serialize};

/// A window in which events were lost on one CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossWindow {
    /// The CPU that lost events.
    pub cpu: Cpu,
    /// Time of the last event seen on that CPU before the loss (the trace start if
    /// none): nothing is known about the CPU after this.
    pub from: Timestamp,
    /// Time of the `lost` record: events after it are seen again.
    pub to: Timestamp,
    /// Number of events lost.
    pub count: u64,
}

/// How much of a stretch of time lost events cover: what a report says at its top so
/// that a verdict built on partial data is read as such.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossCoverage {
    /// Events lost in the stretch.
    pub events: u64,
    /// CPUs that lost some.
    pub cpus: u32,
    /// Wall time, ns, during which at least one CPU's events are missing (the union of
    /// the loss windows, clipped to the stretch).
    pub covered_ns: u64,
    /// Length of the stretch, ns.
    pub window_ns: u64,
}

impl LossCoverage {
    /// The loss windows (in time order, as [`crate::Model::losses`] gives them) that
    /// touch `[from, to)`.
    pub fn of(losses: &[LossWindow], from: Timestamp, to: Timestamp) -> LossCoverage {
        let mut c = LossCoverage {
            window_ns: to.0.saturating_sub(from.0),
            ..LossCoverage::default()
        };
        let mut cpus = std::collections::BTreeSet::new();
        let mut spans: Vec<(u64, u64)> = Vec::new();
        for w in losses {
            // A `lost` record at `to` of a window ending at `from` still counts: its
            // events fell in between.
            if w.to.0 < from.0 || w.from.0 > to.0 {
                continue;
            }
            c.events = c.events.saturating_add(w.count);
            cpus.insert(w.cpu.0);
            spans.push((w.from.0.max(from.0), w.to.0.min(to.0)));
        }
        c.cpus = cpus.len() as u32;
        spans.sort_unstable();
        let mut end = 0u64;
        for (a, b) in spans {
            let a = a.max(end);
            if b > a {
                c.covered_ns += b - a;
                end = b;
            }
        }
        c
    }

    /// Were events lost?
    pub fn any(&self) -> bool {
        self.events > 0
    }
}

/// What the builder saw and what did not fit.
///
/// Counters whose names end in a mismatch or `unmatched` are anomalies, summed by
/// [`ModelStats::anomalies`]; the others are informational.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelStats {
    /// Events pushed into the builder.
    pub events: u64,
    /// Events whose timestamp was older than one already seen; the model treats them as
    /// happening at the latest time seen.
    pub out_of_order_events: u64,
    /// `lost` records.
    pub lost_records: u64,
    /// Events lost, summed over `lost` records.
    pub lost_events: u64,
    /// Wake-ups of a thread that was running or runnable (legal: the kernel wakes a
    /// thread that set a sleep state before it got to switch out).
    pub wakeups_not_blocked: u64,
    /// Wake-ups that raced with the wakee's switch-out: the wake-up was seen while the
    /// thread was still running, it then switched out to sleep and was switched in
    /// again with no other wake-up. The kernel had already made it runnable, so the
    /// blocked segment is zero-length (with this wake-up) and a runnable one follows.
    pub wakeups_before_switch_out: u64,
    /// A switch-out of a thread the model did not believe was running on that CPU.
    pub switch_out_not_running: u64,
    /// A switch-in of a thread the model believed was running elsewhere.
    pub switch_in_while_running: u64,
    /// A switch-in of a blocked thread without a wake-up in between and no loss of
    /// events to explain it (the wake-up was not recorded).
    pub switch_in_without_wakeup: u64,
    /// A switch on a CPU whose `prev` thread was not the thread the model believed
    /// was current there.
    pub cpu_current_mismatch: u64,
    /// A system call, exec, exit, fork or marker by a thread the model believed was not
    /// running on that CPU.
    pub context_mismatch: u64,
    /// A `wakeup_new` of a thread that had already run.
    pub wakeup_new_for_live_thread: u64,
    /// A fork reusing the tid of a thread that had not exited.
    pub tid_reused_without_exit: u64,
    /// Scheduler events about a thread after its final switch-out.
    pub events_after_exit: u64,
    /// Switch-out or waker stacks with no event to attach to.
    pub unattached_stacks: u64,
    /// IRQ exits without a matching entry on that CPU.
    pub unmatched_irq_exits: u64,
    /// Softirq exits without a matching entry on that CPU.
    pub unmatched_softirq_exits: u64,
    /// Block completions without a matching issue.
    pub unmatched_block_completions: u64,
    /// Block requests issued again (same device and sector) before completing.
    pub block_reissued: u64,
    /// Block requests still in flight when the trace ended.
    pub block_in_flight_at_end: u64,
    /// In a per-process trace (`Scope::Processes`): switches that do not follow from
    /// the ones before on their CPU because threads of other processes ran in between
    /// unrecorded, and switch-ins of such threads without a recorded wake-up. Expected,
    /// not an anomaly; the affected time of those threads is marked unknown.
    #[serde(default)]
    pub outside_scope: u64,
    /// Completions of empty writes with preflush that were never issued (the kernel's
    /// flush machinery completes them after the flush it sent instead). Expected.
    #[serde(default)]
    pub dataless_flush_completions: u64,
    /// Waits ended by socket data that a recorded thread sent: their waker is that
    /// thread (see [`crate::DataWake`]).
    #[serde(default)]
    pub data_wakes: u64,
    /// Waits ended by socket data no recorded thread sent (another host, a process
    /// outside the recording): their waker stays the device that delivered it.
    #[serde(default)]
    pub data_wakes_from_outside: u64,
    /// Socket-data marks whose wake-up ended no wait of the model (the thread was
    /// running, or the wake-up was not seen). Expected now and then.
    #[serde(default)]
    pub data_marks_unattached: u64,
    /// Goroutine network waits with no park just before (same thread and time).
    #[serde(default)]
    pub unattached_go_net_waits: u64,
}

impl ModelStats {
    /// Sum of all anomaly counters (everything except `events`, `out_of_order_events`,
    /// `lost_*`, `wakeups_*` and `block_in_flight_at_end`).
    pub fn anomalies(&self) -> u64 {
        self.switch_out_not_running
            + self.switch_in_while_running
            + self.switch_in_without_wakeup
            + self.cpu_current_mismatch
            + self.context_mismatch
            + self.wakeup_new_for_live_thread
            + self.tid_reused_without_exit
            + self.events_after_exit
            + self.unattached_stacks
            + self.unmatched_irq_exits
            + self.unmatched_softirq_exits
            + self.unmatched_block_completions
            + self.block_reissued
    }
}

#[cfg(test)]
mod loss_tests {
    use super::*;

    fn w(cpu: u32, from: u64, to: u64, count: u64) -> LossWindow {
        LossWindow {
            cpu: Cpu(cpu),
            from: Timestamp(from),
            to: Timestamp(to),
            count,
        }
    }

    #[test]
    fn coverage_is_the_union_of_the_windows_clipped_to_the_stretch() {
        // Two CPUs lose overlapping stretches; a third window lies outside.
        let losses = [w(0, 100, 300, 10), w(1, 200, 400, 5), w(0, 2000, 2100, 7)];
        let c = LossCoverage::of(&losses, Timestamp(0), Timestamp(1000));
        assert_eq!(c.events, 15);
        assert_eq!(c.cpus, 2);
        assert_eq!(c.covered_ns, 300);
        assert_eq!(c.window_ns, 1000);
        // Clipped at the stretch's start.
        let c = LossCoverage::of(&losses, Timestamp(250), Timestamp(1000));
        assert_eq!(c.covered_ns, 150);
        assert!(LossCoverage::of(&[], Timestamp(0), Timestamp(10)).events == 0);
        assert!(!LossCoverage::of(&losses, Timestamp(500), Timestamp(1000)).any());
    }
}
