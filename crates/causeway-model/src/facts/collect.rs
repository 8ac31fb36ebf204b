//! Gathering the [`Facts`] from the event stream. Independent of the model builder, so
//! it can run on another thread (see [`crate::ingest`]).

use super::{CpuSample, DeviceHint, Facts, SignalSent, SignalTaken};
use causeway_format::EventKindTag;
use causeway_format::{
    Cpu, DevId, Event, EventKind, Header, Scope, StackKind, StringId, Tables, Tgid, ThreadIndex,
    Tid, Timestamp, Waker,
};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::collections::BTreeSet;

/// A device event this close before a wake-up (ns) may explain it: interrupt handlers
/// and the softirqs or kworkers they defer to run within microseconds of the completion.
const HINT_WINDOW_NS: u64 = 2_000_000;

/// Gathers [`Facts`] from the events, in time order.
#[derive(Debug)]
pub(crate) struct FactsCollector<'t> {
    facts: Facts,
    /// Events by [`causeway_format::EventKindTag`] discriminant.
    counts: [u64; 64],
    // Looked up on every wake-up: fast hashes of the integers.
    last_block_here: FxHashMap<Cpu, (DevId, Timestamp)>,
    last_block_any: Option<(DevId, Timestamp)>,
    /// The device each thread last issued a block request to (a journal thread's
    /// commit, a loop device's worker).
    last_issue_by: FxHashMap<Tid, DevId>,
    last_recv_here: FxHashMap<Cpu, (StringId, Timestamp)>,
    names: ThreadIndex<'t>,
    kernel_thread: FxHashMap<Tid, bool>,
    per_process: bool,
    followed: BTreeSet<Tgid>,
    /// `(parent, child)` processes created during the recording.
    forks: Vec<(Tgid, Tgid)>,
    syscall_tids: BTreeSet<Tid>,
}

/// Kernel threads that run deferred I/O completion for a device (or a file system's
/// journal commit): by name, as the kernel names them; the trace does not mark kernel
/// threads.
pub fn is_completion_thread(comm: &str) -> bool {
    // jbd2: ext4's journal thread, whose commit ends an fsync's wait.
    ["kworker", "ksoftirqd", "irq/", "kblockd", "jbd2/"]
        .iter()
        .any(|p| comm.starts_with(p))
}

impl<'t> FactsCollector<'t> {
    /// A collector for a trace with these tables and header.
    pub(crate) fn new(tables: &'t Tables, header: &Header) -> FactsCollector<'t> {
        FactsCollector {
            facts: Facts {
                titles: titles(tables),
                disk_names: disk_names(header),
                ..Facts::default()
            },
            counts: [0; 64],
            last_block_here: FxHashMap::default(),
            last_block_any: None,
            last_issue_by: FxHashMap::default(),
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

    /// Take the next event (in time order).
    pub(crate) fn push(&mut self, ev: &Event) {
        if let Some(c) = self.counts.get_mut(ev.kind.tag() as usize) {
            *c += 1;
        }
        match ev.kind {
            EventKind::BlockIssue { tid, dev, .. } => {
                self.last_issue_by.insert(tid, dev);
            }
            EventKind::BlockComplete { dev, .. } => {
                self.last_block_here.insert(ev.cpu, (dev, ev.ts));
                self.last_block_any = Some((dev, ev.ts));
            }
            EventKind::NetRecv { dev, bytes, .. } => {
                self.last_recv_here.insert(ev.cpu, (dev, ev.ts));
                self.facts.net.entry(dev).or_default().rx_bytes += u64::from(bytes);
            }
            EventKind::NetXmit { tid, dev, bytes } => {
                let d = self.facts.net.entry(dev).or_default();
                *d.tx_by_tid.entry(tid).or_default() += u64::from(bytes);
            }
            EventKind::Marker { tid, marker } => self.facts.markers.push(ev.ts, tid, marker),
            EventKind::Stack {
                tid,
                kind: StackKind::Sample,
                user,
                kernel,
            } => self.facts.samples.push(
                tid,
                CpuSample {
                    ts: ev.ts,
                    user,
                    kernel,
                },
            ),
            EventKind::Lost { count } => {
                let e = self.facts.lost_by_cpu.entry(ev.cpu.0).or_default();
                *e = e.saturating_add(count);
            }
            EventKind::Wakeup { wakee, waker, .. } => {
                self.facts.signals.wakeup(ev.ts, ev.cpu, wakee, waker);
                self.hint(ev.ts, ev.cpu, wakee, waker)
            }
            EventKind::SignalGenerate {
                sender,
                target,
                target_tgid,
                sig,
                group,
                result,
            } => self.facts.signals.sent(SignalSent {
                ts: ev.ts,
                sender: (sender.0 != 0).then_some(sender),
                target,
                target_tgid,
                sig,
                group,
                result,
                stack: None,
            }),
            EventKind::Stack {
                tid,
                kind: StackKind::Other,
                user,
                ..
            } => self.facts.signals.sender_stack(tid, user),
            EventKind::SignalDeliver { tid, sig } => self.facts.signals.taken(SignalTaken {
                ts: ev.ts,
                tid,
                sig,
            }),
            EventKind::TimerArm { tid, timer, .. } => self.facts.signals.armed(ev.ts, tid, timer),
            EventKind::TimerExpire { timer } => self.facts.signals.expired(ev.ts, ev.cpu, timer),
            EventKind::Exec { tid, .. } if self.per_process => {
                if let Some(t) = self.names.at(tid, ev.ts) {
                    self.followed.insert(t.tgid);
                    self.facts.exec_at.entry(t.tgid).or_insert(ev.ts);
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
            disk_issued: None,
        };
        if let Waker::Thread { tid } = waker
            && disk_ok
        {
            hint.disk_issued = self.last_issue_by.get(&tid).copied();
        }
        if !disk_ok {
            hint.disk_here = None;
            hint.disk_any = None;
        }
        if hint != DeviceHint::default() {
            self.facts.hints.insert(wakee, ts, hint);
        }
    }

    /// The facts, once every event was pushed.
    pub(crate) fn finish(mut self) -> Facts {
        self.facts.event_counts = EventKindTag::ALL
            .iter()
            .filter_map(|&k| {
                let n = self.counts.get(k as usize).copied().unwrap_or(0);
                (n > 0).then_some((k, n))
            })
            .collect();
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
                self.facts.recorded = Some(set);
            }
        }
        self.facts.hints.finish();
        self.facts
    }
}

/// Block device names from the header's `major:minor` keys.
fn disk_names(header: &Header) -> BTreeMap<DevId, String> {
    header
        .host
        .block_devices
        .iter()
        .filter_map(|(k, name)| {
            let (maj, min) = k.split_once(':')?;
            let (maj, min) = (maj.parse::<u32>().ok()?, min.parse::<u32>().ok()?);
            (maj < 1 << 12 && min < 1 << 20).then(|| (DevId(maj << 20 | min), name.clone()))
        })
        .collect()
}

/// Process titles from the trace's process table: for each process, the command line
/// the recorder read last (rows after an exec replace earlier ones).
fn titles(tables: &Tables) -> BTreeMap<Tgid, String> {
    let mut latest: BTreeMap<Tgid, (Timestamp, &str)> = BTreeMap::new();
    for p in &tables.processes {
        let t = tables.string(p.cmdline);
        if t.is_empty() {
            continue;
        }
        let e = latest.entry(p.tgid).or_insert((p.since, t));
        if p.since >= e.0 {
            *e = (p.since, t);
        }
    }
    latest
        .into_iter()
        .map(|(g, (_, t))| (g, t.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::disk_names;
    use causeway_format::{DevId, Header};

    #[test]
    fn disk_names_come_from_the_header() {
        let mut h = Header::synthetic(1);
        for (k, v) in [
            ("254:0", "vda"),
            ("8:16", "sdb"),
            ("bad", "x"),
            ("1:99999999", "y"),
        ] {
            h.host.block_devices.insert(k.into(), v.into());
        }
        let n = disk_names(&h);
        assert_eq!(n.len(), 2, "{n:?}");
        assert_eq!(n[&DevId(254 << 20)], "vda");
        assert_eq!(n[&DevId(8 << 20 | 16)], "sdb");
    }
}
