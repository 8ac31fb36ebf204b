//! What the analysis reads: the model plus the few facts the model drops.
//!
//! The model keeps threads, segments, interrupts and block requests. wPerf also needs
//! per-device network traffic (for NIC pseudo threads), the device an interrupt-context
//! wake-up came from (for device pseudo threads), and shared-flag writes (to find who
//! ended a busy-wait). [`Collector`] gathers them in the same single pass that feeds
//! the [`ModelBuilder`], keeping only aggregates and per-wake-up hints, so memory grows
//! with wake-ups and threads, not with raw events.

use crate::extras::ExtrasCollector;
use crate::hints::DeviceHints;
use causeway_format::{DevId, Event, Header, StringId, Tables, Tgid, Tid, Timestamp, TraceReader};
use causeway_model::{Model, ModelBuilder, ModelError};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{Read, Seek};

/// Which devices may be behind one wake-up, from the device events just before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DeviceHint {
    /// Block device whose request completed just before, on the waking CPU.
    pub(crate) disk_here: Option<DevId>,
    /// Block device whose request completed just before, on any CPU (kworker hand-off).
    pub(crate) disk_any: Option<DevId>,
    /// Network device that received a packet just before, on the waking CPU.
    pub(crate) nic_here: Option<StringId>,
}

/// Traffic of one network device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct NetDevice {
    /// Bytes handed to the device for transmission, by sending thread.
    pub(crate) tx_by_tid: BTreeMap<Tid, u64>,
    /// Bytes received.
    pub(crate) rx_bytes: u64,
}

/// Facts the analysis needs that the model does not keep.
#[derive(Clone, Debug, Default)]
pub struct Extras {
    pub(crate) net: BTreeMap<StringId, NetDevice>,
    /// Device hints by woken thread and wake-up time.
    pub(crate) hints: DeviceHints,
    /// `FlagWrite` markers by flag address: `(time, writer)` in time order.
    pub(crate) flag_writes: HashMap<u64, Vec<(Timestamp, Tid)>>,
    /// Link capacity per interface name, bytes per second (from trace counters).
    pub(crate) link_capacity: BTreeMap<String, f64>,
    /// The processes the recorder followed, when the trace holds only theirs
    /// ([`Scope::Processes`]); `None` for a system-wide trace. See [`Extras::recorded`].
    pub(crate) recorded: Option<BTreeSet<Tgid>>,
    /// First exec of each process during a per-process recording: before it, the
    /// process ran its launcher's code (for `causeway record -- CMD`, the recorder's
    /// child waiting for the go-ahead), which is not the program being analyzed.
    pub(crate) exec_at: HashMap<Tgid, Timestamp>,
}

impl Extras {
    /// The processes a per-process recording followed, as far as the trace shows: those
    /// that exec'd, forked or made a recorded system call during the recording (the
    /// recorder writes these events for its targets only), and the processes they
    /// created. Other threads appear in such a trace only where they switch with or
    /// wake a target, so their own timelines are incomplete. `None` for a system-wide
    /// trace or when no such event was seen (nothing to go by: every thread counts).
    pub fn recorded(&self) -> Option<&BTreeSet<Tgid>> {
        self.recorded.as_ref()
    }

    /// Treat every process in the trace as recorded (`--all-processes`), or only these.
    pub fn set_recorded(&mut self, recorded: Option<BTreeSet<Tgid>>) {
        self.recorded = recorded;
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
}

/// Everything one analysis run reads.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// The model of the trace.
    pub model: &'a Model,
    /// The trace's tables (names, stacks, frames).
    pub tables: &'a Tables,
    /// What the model does not keep.
    pub extras: &'a Extras,
}

/// Feeds a [`ModelBuilder`] and collects [`Extras`] in one pass over the events.
#[derive(Debug)]
pub struct Collector<'t> {
    builder: ModelBuilder<'t>,
    extras: ExtrasCollector<'t>,
}

impl<'t> Collector<'t> {
    /// A collector for a trace with these tables and header.
    pub fn new(tables: &'t Tables, header: &Header) -> Collector<'t> {
        Collector {
            builder: ModelBuilder::new(tables, header),
            extras: ExtrasCollector::new(tables, header),
        }
    }

    /// Feed the next event (in time order).
    pub fn push(&mut self, ev: &Event) {
        self.builder.push(ev);
        self.extras.push(ev);
    }

    /// Finish the model and hand back both.
    pub fn finish(self) -> (Model, Extras) {
        (self.builder.finish(), self.extras.finish())
    }

    /// Build both from events already in memory (tests, small traces).
    pub fn from_events<'e>(
        tables: &Tables,
        header: &Header,
        events: impl IntoIterator<Item = &'e Event>,
    ) -> (Model, Extras) {
        let mut c = Collector::new(tables, header);
        for ev in events {
            c.push(ev);
        }
        c.finish()
    }

    /// Read every event of a trace; link speeds come from the trace's counters.
    pub fn from_reader<R: Read + Seek>(
        reader: &mut TraceReader<R>,
    ) -> Result<(Model, Extras), ModelError> {
        let tables = reader.tables().clone();
        let header = reader.header().clone();
        let mut c = Collector::new(&tables, &header);
        for ev in reader.events() {
            c.push(&ev?);
        }
        let (model, mut extras) = c.finish();
        extras.set_link_speeds(&reader.stats().counters);
        Ok((model, extras))
    }
}
