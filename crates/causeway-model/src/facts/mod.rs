//! Trackers: facts every analysis needs that the per-thread timelines do not hold.
//!
//! The [`crate::ModelBuilder`] keeps threads, segments, interrupts and block requests.
//! Analyses also need to know which processes the recording followed and when they
//! exec'd, how much each network device carried, which device may be behind an
//! interrupt-context wake-up, who wrote and read shared flags, the span and method
//! markers, the process titles the recorder saw, the on-CPU samples, and how many
//! events of each kind the trace held. [`Facts`] holds them; it is gathered in the same single pass that feeds
//! the builder (see [`crate::ingest`]), keeping aggregates and per-wake-up or
//! per-marker records only, so memory grows with wake-ups, markers and threads, not
//! with raw events.
//!
//! This module does not interpret the facts (which wake-up a device explains, which
//! flag write ended a busy-wait): that is each analysis's job.

mod collect;
mod hints;
mod markers;
mod net;
mod samples;
mod signals;

pub(crate) use collect::FactsCollector;
pub use collect::is_completion_thread;
pub use hints::DeviceHint;
pub(crate) use hints::DeviceHints;
pub(crate) use markers::Markers;
pub use markers::{FlagAccess, MarkerRecord};
pub use net::NetTraffic;
pub use samples::CpuSample;
pub(crate) use samples::Samples;
pub(crate) use signals::Signals;
pub use signals::{SignalSent, SignalTaken, TimerWake};

use causeway_format::{DevId, EventKindTag, StringId, Tgid, Tid, Timestamp};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What the trace says beyond the timelines; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub(crate) net: BTreeMap<StringId, NetTraffic>,
    pub(crate) hints: DeviceHints,
    pub(crate) markers: Markers,
    /// Link capacity per interface name, bytes per second (from trace counters).
    pub(crate) link_capacity: BTreeMap<String, f64>,
    pub(crate) recorded: Option<BTreeSet<Tgid>>,
    pub(crate) exec_at: HashMap<Tgid, Timestamp>,
    pub(crate) titles: BTreeMap<Tgid, String>,
    pub(crate) event_counts: BTreeMap<EventKindTag, u64>,
    pub(crate) lost_by_cpu: BTreeMap<u32, u64>,
    pub(crate) samples: Samples,
    pub(crate) disk_names: BTreeMap<DevId, String>,
    pub(crate) signals: Signals,
}

impl Facts {
    /// The processes a per-process recording followed, as far as the trace shows: those
    /// that exec'd, forked or made a recorded system call during the recording (the
    /// recorder writes these events for its targets only), and the processes they
    /// created. Other threads appear in such a trace only where they switch with or
    /// wake a target, so their own timelines are incomplete. `None` for a system-wide
    /// trace or when no such event was seen (nothing to go by: every thread counts).
    pub fn recorded(&self) -> Option<&BTreeSet<Tgid>> {
        self.recorded.as_ref()
    }

    /// Treat every process in the trace as recorded (`None`), or only these.
    pub fn set_recorded(&mut self, recorded: Option<BTreeSet<Tgid>>) {
        self.recorded = recorded;
    }

    /// First exec of a process during a per-process recording: before it, the process
    /// ran its launcher's code (for `causeway record -- CMD`, the recorder's child
    /// waiting for the go-ahead), which is not the program being analyzed.
    pub fn exec_time(&self, tgid: Tgid) -> Option<Timestamp> {
        self.exec_at.get(&tgid).copied()
    }

    /// Traffic of each network device, by interface name id.
    pub fn net_devices(&self) -> &BTreeMap<StringId, NetTraffic> {
        &self.net
    }

    /// Link capacity of an interface in bytes per second, from the trace's counters.
    pub fn link_capacity(&self, interface: &str) -> Option<f64> {
        self.link_capacity.get(interface).copied()
    }

    /// Take link speeds from trace counters named `net.<interface>.link_mbps` (megabits
    /// per second), as a recorder that reads `/sys/class/net/*/speed` stores them.
    pub fn set_link_speeds(&mut self, counters: &BTreeMap<String, u64>) {
        for (k, v) in counters {
            if let Some(dev) = k
                .strip_prefix("net.")
                .and_then(|r| r.strip_suffix(".link_mbps"))
                && *v > 0
            {
                self.link_capacity
                    .insert(dev.to_string(), *v as f64 * 1e6 / 8.0);
            }
        }
    }

    /// The devices that may be behind `tid`'s wake-up at `ts`, if the trace showed any
    /// device activity just before it.
    pub fn device_hint(&self, tid: Tid, ts: Timestamp) -> Option<&DeviceHint> {
        self.hints.get(tid, ts)
    }

    /// Writes of the shared flag at `addr` (`flag_write` markers), in time order.
    pub fn flag_writes(&self, addr: u64) -> &[FlagAccess] {
        self.markers.flag_writes(addr)
    }

    /// Reads of the shared flag at `addr` (`flag_read` markers), in time order.
    pub fn flag_reads(&self, addr: u64) -> &[FlagAccess] {
        self.markers.flag_reads(addr)
    }

    /// Addresses of the shared flags the trace saw written or read, sorted.
    pub fn flag_addresses(&self) -> Vec<u64> {
        self.markers.flag_addresses()
    }

    /// Span and method markers (`span_begin`/`span_end`, `method_enter`/`method_exit`)
    /// of every thread, in time order. Busy-wait and false wake-up markers are on the
    /// threads themselves ([`crate::Thread::annotations`]).
    pub fn markers(&self) -> &[MarkerRecord] {
        self.markers.records()
    }

    /// The title of a process: its command line as the recorder saw it (argv joined by
    /// spaces, as `ps -o args` shows it), if the trace has one.
    pub fn title(&self, tgid: Tgid) -> Option<&str> {
        self.titles.get(&tgid).map(String::as_str)
    }

    /// Events of each kind in the trace (every kind seen at least once).
    pub fn event_counts(&self) -> &BTreeMap<EventKindTag, u64> {
        &self.event_counts
    }

    /// The name the host gave a block device (`vda`), if the trace says.
    pub fn disk_name(&self, dev: DevId) -> Option<&str> {
        self.disk_names.get(&dev).map(String::as_str)
    }

    /// A thread's on-CPU samples, in time order (empty when the trace has none).
    pub fn samples(&self, tid: Tid) -> &[CpuSample] {
        self.samples.of(tid)
    }

    /// A thread's on-CPU samples taken in `[from, to)`.
    pub fn samples_between(&self, tid: Tid, from: Timestamp, to: Timestamp) -> &[CpuSample] {
        self.samples.between(tid, from, to)
    }

    /// Threads with on-CPU samples.
    pub fn sampled_threads(&self) -> impl Iterator<Item = Tid> + '_ {
        self.samples.threads()
    }

    /// On-CPU samples of all threads.
    pub fn sample_count(&self) -> u64 {
        self.samples.total()
    }

    /// Signals generated for or by recorded threads, in time order.
    pub fn signals_sent(&self) -> &[SignalSent] {
        self.signals.sent_all()
    }

    /// Signals taken by recorded threads, in time order.
    pub fn signals_taken(&self) -> &[SignalTaken] {
        self.signals.taken_all()
    }

    /// For a wake-up of `wakee` at `ts` made by a timer's expiry: the timer, who armed
    /// it and when (only timers a recorded thread armed are traced).
    pub fn timer_wake(&self, wakee: Tid, ts: Timestamp) -> Option<&TimerWake> {
        self.signals.timer_wake(wakee, ts)
    }

    /// Timer arms in the trace.
    pub fn timer_arms(&self) -> u64 {
        self.signals.arm_count()
    }

    /// Events lost in recording by CPU, from the `lost` records in the stream.
    pub fn lost_by_cpu(&self) -> &BTreeMap<u32, u64> {
        &self.lost_by_cpu
    }
}
