//! What the analysis reads: the model plus the few facts the model drops.
//!
//! The model keeps threads, segments, interrupts and block requests. wPerf also needs
//! per-device network traffic (for NIC pseudo threads), the device an interrupt-context
//! wake-up came from (for device pseudo threads), and shared-flag writes (to find who
//! ended a busy-wait). [`Collector`] gathers them in the same single pass that feeds
//! the [`ModelBuilder`], keeping only aggregates and per-wake-up hints, so memory grows
//! with wake-ups and threads, not with raw events.

use crate::hints::DeviceHints;
use causeway_format::{
    Cpu, DevId, Event, EventKind, Header, Marker, Scope, StringId, Tables, Tgid, ThreadIndex, Tid,
    Timestamp, TraceReader, Waker,
};
use causeway_model::{Model, ModelBuilder, ModelError};
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{Read, Seek};

/// A device event this close before a wake-up (ns) may explain it: interrupt handlers
/// and the softirqs or kworkers they defer to run within microseconds of the completion.
const HINT_WINDOW_NS: u64 = 2_000_000;

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
    extras: Extras,
    // Looked up on every wake-up: fast hashes of the integers.
    last_block_here: FxHashMap<Cpu, (DevId, Timestamp)>,
    last_block_any: Option<(DevId, Timestamp)>,
    last_recv_here: FxHashMap<Cpu, (StringId, Timestamp)>,
    names: ThreadIndex<'t>,
    kernel_thread: FxHashMap<Tid, bool>,
    per_process: bool,
    followed: BTreeSet<Tgid>,
    /// `(parent, child)` processes created during the recording.
    forks: Vec<(Tgid, Tgid)>,
    syscall_tids: BTreeSet<Tid>,
}

/// Kernel threads that run deferred I/O completion for a device.
fn is_completion_thread(comm: &str) -> bool {
    ["kworker", "ksoftirqd", "irq/", "kblockd"]
        .iter()
        .any(|p| comm.starts_with(p))
}

impl<'t> Collector<'t> {
    /// A collector for a trace with these tables and header.
    pub fn new(tables: &'t Tables, header: &Header) -> Collector<'t> {
        Collector {
            builder: ModelBuilder::new(tables, header),
            extras: Extras::default(),
            last_block_here: FxHashMap::default(),
            last_block_any: None,
            last_recv_here: FxHashMap::default(),
            names: ThreadIndex::new(tables),
            kernel_thread: FxHashMap::default(),
            per_process: header.scope == Scope::Processes,
            // The recorder names the processes it started with (and, with --comm,
            // the name it followed); fork and exec evidence adds the rest.
            followed: header
                .target_pids
                .iter()
                .map(|&p| Tgid(p))
                .chain(
                    tables
                        .processes
                        .iter()
                        .filter(|p| {
                            header.target_comm.as_deref().is_some_and(|c| {
                                tables
                                    .threads
                                    .iter()
                                    .any(|t| t.tid.0 == p.tgid.0 && tables.string(t.comm) == c)
                            })
                        })
                        .map(|p| p.tgid),
                )
                .collect(),
            forks: Vec::new(),
            syscall_tids: BTreeSet::new(),
        }
    }

    /// Feed the next event (in time order).
    pub fn push(&mut self, ev: &Event) {
        self.builder.push(ev);
        match ev.kind {
            EventKind::BlockComplete { dev, .. } => {
                self.last_block_here.insert(ev.cpu, (dev, ev.ts));
                self.last_block_any = Some((dev, ev.ts));
            }
            EventKind::NetRecv { dev, bytes, .. } => {
                self.last_recv_here.insert(ev.cpu, (dev, ev.ts));
                self.extras.net.entry(dev).or_default().rx_bytes += u64::from(bytes);
            }
            EventKind::NetXmit { tid, dev, bytes } => {
                let d = self.extras.net.entry(dev).or_default();
                *d.tx_by_tid.entry(tid).or_default() += u64::from(bytes);
            }
            EventKind::Marker {
                tid,
                marker: Marker::FlagWrite { addr },
            } => self
                .extras
                .flag_writes
                .entry(addr)
                .or_default()
                .push((ev.ts, tid)),
            EventKind::Wakeup { wakee, waker, .. } => self.hint(ev.ts, ev.cpu, wakee, waker),
            EventKind::Exec { tid, .. } if self.per_process => {
                if let Some(t) = self.names.at(tid, ev.ts) {
                    self.followed.insert(t.tgid);
                    self.extras.exec_at.entry(t.tgid).or_insert(ev.ts);
                }
            }
            EventKind::Fork {
                parent_tgid,
                child_tgid,
                ..
            } if self.per_process => {
                self.followed.insert(parent_tgid);
                if child_tgid != parent_tgid {
                    self.forks.push((parent_tgid, child_tgid));
                }
            }
            // Tids only (a small set); processes are looked up at the end.
            EventKind::SyscallEnter { tid, .. }
                if self.per_process && self.syscall_tids.len() < 1 << 16 =>
            {
                self.syscall_tids.insert(tid);
            }
            _ => {}
        }
    }

    /// Remember which devices may explain a wake-up. Disk hints are kept only for
    /// interrupt contexts and completion kernel threads: an ordinary thread waking
    /// another is never a disk, and skipping it keeps memory to the wake-ups that need
    /// it.
    fn hint(&mut self, ts: Timestamp, cpu: Cpu, wakee: Tid, waker: Waker) {
        let recent = |t: Timestamp| ts.0.saturating_sub(t.0) <= HINT_WINDOW_NS;
        let disk_ok = match waker {
            Waker::Thread { tid } => {
                let names = &self.names;
                *self
                    .kernel_thread
                    .entry(tid)
                    .or_insert_with(|| names.comm_at(tid, ts).is_some_and(is_completion_thread))
            }
            _ => true,
        };
        let mut hint = DeviceHint {
            disk_here: self
                .last_block_here
                .get(&cpu)
                .filter(|(_, t)| recent(*t))
                .map(|(d, _)| *d),
            disk_any: self
                .last_block_any
                .filter(|(_, t)| recent(*t))
                .map(|(d, _)| d),
            nic_here: self
                .last_recv_here
                .get(&cpu)
                .filter(|(_, t)| recent(*t))
                .map(|(d, _)| *d),
        };
        if !disk_ok {
            hint.disk_here = None;
            hint.disk_any = None;
        }
        if hint != DeviceHint::default() {
            self.extras.hints.insert(wakee, ts, hint);
        }
    }

    /// Finish the model and hand back both.
    pub fn finish(mut self) -> (Model, Extras) {
        if self.per_process {
            let mut set = std::mem::take(&mut self.followed);
            for tid in &self.syscall_tids {
                set.extend(self.names.rows(*tid).iter().map(|r| r.tgid));
            }
            // Children of followed processes, in creation order (a chain of forks).
            for (parent, child) in &self.forks {
                if set.contains(parent) {
                    set.insert(*child);
                }
            }
            if !set.is_empty() {
                self.extras.recorded = Some(set);
            }
        }
        self.extras.hints.finish();
        (self.builder.finish(), self.extras)
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
