//! The recorded processes' cgroups and their CPU quotas and memory limits, sampled
//! while they run.
//!
//! A thread of a cgroup whose CPU quota ran out stays runnable while CPUs sit idle:
//! only the cgroup's counters (`cpu.stat`: periods, throttled periods, throttled
//! time) tell that wait from a wait for a busy CPU, and only while the cgroup exists.
//! So each recorded process's cgroup (of the CPU controller) is noted once, as a
//! membership row, and that cgroup and its ancestors (a quota set on a parent slice
//! limits every child) are read every [`REFRESH`]; a sample row is written when the
//! counters or the limit changed since the last one, and once more at the end, so the
//! analyses can tell how long the group was held back in each stretch.
//!
//! Pressure stall information (PSI) of the whole system, and of each recorded
//! process's v2 cgroup where the kernel keeps it, is sampled at the same refresh: the
//! kernel's own account of how long tasks stalled on CPU, memory and I/O.

use causeway_format::{
    CgroupRow, CpuSample, MemorySample, PressureResource, PressureSample, StringId, Tgid, Tid,
    Timestamp,
};
use causeway_procfs::cgroup::{self, CpuQuota, MemoryLimit};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Where the watch puts what it reads: the trace's string table and its cgroup rows.
pub trait Rows {
    /// The id of `s` in the trace's string table.
    fn intern(&mut self, s: &str) -> StringId;
    /// Add a row.
    fn push(&mut self, row: CgroupRow);
}

/// One thread's page reclaim so far, as the kernel side summed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReclaimTime {
    /// The thread.
    pub tid: u32,
    /// Its process.
    pub tgid: u32,
    /// Time in ended reclaims, ns.
    pub ns: u64,
    /// Ended reclaims.
    pub count: u64,
}

impl ReclaimTime {
    /// From an entry of the kernel side's table (`bpf/reclaim.h` of the recorder):
    /// the tid key, and the value's start, ns, count (u64 each) and tgid (u32).
    pub fn parse(key: &[u8], value: &[u8]) -> Option<ReclaimTime> {
        let word = |i: usize| Some(u64::from_ne_bytes(value.get(i..i + 8)?.try_into().ok()?));
        Some(ReclaimTime {
            tid: u32::from_ne_bytes(key.get(..4)?.try_into().ok()?),
            ns: word(8)?,
            count: word(16)?,
            tgid: u32::from_ne_bytes(value.get(24..28)?.try_into().ok()?),
        })
    }
}

/// Page reclaim per thread, written as rows when a thread's total grew since the last
/// reading (read at [`REFRESH`], and at the end).
#[derive(Debug)]
pub struct ReclaimWatch {
    last: Instant,
    seen: BTreeMap<u32, u64>,
}

impl Default for ReclaimWatch {
    fn default() -> Self {
        ReclaimWatch {
            last: Instant::now(),
            seen: BTreeMap::new(),
        }
    }
}

impl ReclaimWatch {
    /// If [`REFRESH`] has passed (or `force`), read the totals with `read` and add a
    /// row at `ts` for each thread whose count grew.
    pub fn tick(
        &mut self,
        c: &mut dyn Rows,
        read: impl FnOnce() -> Vec<ReclaimTime>,
        ts: u64,
        force: bool,
    ) {
        if !force && self.last.elapsed() < REFRESH {
            return;
        }
        self.last = Instant::now();
        for r in read() {
            if self.seen.get(&r.tid) == Some(&r.count) || r.count == 0 {
                continue;
            }
            self.seen.insert(r.tid, r.count);
            c.push(CgroupRow::Reclaim {
                ts: Timestamp(ts),
                tid: Tid(r.tid),
                tgid: Tgid(r.tgid),
                ns: r.ns,
                count: r.count,
            });
        }
    }
}

/// How often the quotas are read: throttling comes in periods of 100 ms by default,
/// and a sample per period lets the analyses place the throttled time within a
/// tenth of a second.
pub const REFRESH: Duration = Duration::from_millis(100);

/// How often the recorded processes' memberships are read again: a launcher or a
/// container runtime's shim may move a process after it started (the zoo's
/// `cpu-quota` server moves itself).
pub const MEMBERSHIP_REFRESH: Duration = Duration::from_secs(1);

/// Most processes whose membership is read per refresh (a read is ~10 µs).
const MAX_PROCESSES: usize = 512;

/// Up to this many recorded processes, memberships are read every [`REFRESH`] (a
/// process that moves itself into a limited cgroup right after it starts is then
/// seen within 0.1 s; 32 reads cost ~0.3 ms).
const FEW_PROCESSES: usize = 32;

/// Cgroups without a limit are read once per this many refreshes (once a second).
const SLOW_EVERY: u64 = 10;

/// Most cgroups read per refresh: bounds the cost on a system-wide recording of a host
/// with many units (a cgroup's read is three small files, ~15 µs).
const MAX_CGROUPS: usize = 256;

/// One watched cgroup of one controller.
#[derive(Debug)]
struct Watched<T> {
    dir: PathBuf,
    path: StringId,
    last: Option<T>,
    /// Read failures in a row: a cgroup removed while recording stops being read.
    failures: u8,
}

/// The watched cgroups of one controller, by path.
type WatchMap<T> = BTreeMap<String, Watched<T>>;

/// Most PSI sources read per refresh (three small files each, ~10 µs).
const MAX_PRESSURE: usize = 64;

/// Where pressure stall information is read: the whole system's (`/proc/pressure`)
/// or a v2 cgroup's (`<dir>/<resource>.pressure`), with the totals last written.
#[derive(Debug)]
struct PressureSource {
    /// `None`: the whole system.
    dir: Option<PathBuf>,
    path: StringId,
    last: [Option<(u64, u64)>; 3],
    failures: u8,
}

impl PressureSource {
    fn file(&self, r: PressureResource) -> PathBuf {
        match &self.dir {
            None => PathBuf::from("/proc/pressure").join(r.name()),
            Some(d) => d.join(format!("{}.pressure", r.name())),
        }
    }
}

/// A process's cgroups as last read: the CPU controller's and the memory
/// controller's (the same path on v2; separate v1 hierarchies may differ).
#[derive(Debug, Default, PartialEq, Eq)]
struct Membership {
    cpu: String,
    memory: String,
    /// The CPUs it may run on, where that is not every online CPU.
    cpus: Option<String>,
}

/// The cgroups of the recorded processes and when they were last read.
#[derive(Debug)]
pub struct CgroupWatch {
    last: Instant,
    last_members: Instant,
    /// When the processes' allowed CPUs were last read.
    last_affinity: Instant,
    /// Refreshes so far (cgroups without a limit are read every [`SLOW_EVERY`]th).
    ticks: u64,
    /// Each process's cgroups as last read.
    member: BTreeMap<u32, Membership>,
    cpu: WatchMap<CpuQuota>,
    memory: WatchMap<MemoryLimit>,
    /// Whether the controllers are on v1 hierarchies (read once).
    v1_cpu: bool,
    v1_memory: bool,
    /// The online CPUs (read once).
    online: Vec<u32>,
    /// Some recorded process may not run on every CPU: the CPUs' idle time is
    /// sampled.
    restricted: bool,
    /// PSI sources by cgroup path (`/`: the system), read at every refresh: how
    /// long tasks stalled on CPU, memory and I/O, the kernel's own measure of what
    /// a limit costs.
    pressure: BTreeMap<String, PressureSource>,
}

impl Default for CgroupWatch {
    fn default() -> Self {
        let has = |p: &str| std::path::Path::new(p).exists();
        CgroupWatch {
            last: Instant::now(),
            last_members: Instant::now(),
            last_affinity: Instant::now(),
            ticks: 0,
            member: BTreeMap::new(),
            cpu: BTreeMap::new(),
            memory: BTreeMap::new(),
            v1_cpu: has("/sys/fs/cgroup/cpu/cpu.cfs_period_us"),
            v1_memory: has("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
            online: causeway_procfs::cpus::online()
                .and_then(|l| causeway_format::cgroups::cpu_list(&l))
                .unwrap_or_default(),
            restricted: false,
            pressure: BTreeMap::new(),
        }
    }
}

/// Read each watched cgroup of a controller with `read`; `limited` says whether a
/// reading has a limit set. A cgroup with a limit is read and sampled every time, so
/// the counters of each stretch are placed in that stretch; one without is read only
/// when `slow` is due (every [`MEMBERSHIP_REFRESH`]: a system-wide recording watches
/// every unit's cgroup, and reading them all ten times a second cost several percent
/// of a CPU) and sampled only when its limit changed (or `force`, at the end).
fn sample<T: PartialEq + Copy>(
    map: &mut WatchMap<T>,
    (force, slow): (bool, bool),
    read: impl Fn(&std::path::Path) -> std::io::Result<T>,
    limited: impl Fn(&T) -> bool,
    same_limit: impl Fn(&T, &T) -> bool,
    mut row: impl FnMut(StringId, T),
) {
    for w in map.values_mut().take(MAX_CGROUPS) {
        if w.failures >= 3 || (!force && !slow && w.last.as_ref().is_some_and(|l| !limited(l))) {
            continue;
        }
        let Ok(q) = read(&w.dir) else {
            w.failures += 1;
            continue;
        };
        w.failures = 0;
        let unchanged = w.last.as_ref().is_some_and(|l| same_limit(l, &q));
        if unchanged && !limited(&q) && !force {
            continue;
        }
        w.last = Some(q);
        row(w.path, q);
    }
}

/// Watch the cgroup `path` of a controller (at `dir_of(path)`) and its ancestors.
fn watch<T>(c: &mut dyn Rows, map: &mut WatchMap<T>, path: &str, dir_of: impl Fn(&str) -> PathBuf) {
    let mut p = path;
    while p != "/" && !p.is_empty() {
        if !map.contains_key(p) {
            let id = c.intern(p);
            map.insert(
                p.to_string(),
                Watched {
                    dir: dir_of(p),
                    path: id,
                    last: None,
                    failures: 0,
                },
            );
        }
        p = p
            .rsplit_once('/')
            .map_or("/", |(a, _)| if a.is_empty() { "/" } else { a });
    }
}

impl CgroupWatch {
    /// Note the cgroups of processes not seen before (and every
    /// [`MEMBERSHIP_REFRESH`], of all), and read the watched limits if [`REFRESH`]
    /// has passed (or `force`, at the end), adding rows at `ts`.
    /// `processes` are the recorded processes.
    pub fn tick(
        &mut self,
        c: &mut dyn Rows,
        processes: impl IntoIterator<Item = u32>,
        ts: u64,
        force: bool,
    ) {
        let every = if self.member.len() <= FEW_PROCESSES {
            REFRESH
        } else {
            MEMBERSHIP_REFRESH
        };
        let again = force || self.last_members.elapsed() >= every;
        if again {
            self.last_members = Instant::now();
        }
        // Allowed CPUs rarely change after a process starts: read again once a
        // second (and at the end), not at every 0.1 s membership read (a status read
        // is ~20 µs, a third of a refresh's cost for 32 processes).
        let affinity_due = force || self.last_affinity.elapsed() >= MEMBERSHIP_REFRESH;
        if affinity_due && again {
            self.last_affinity = Instant::now();
        }
        let read: Vec<u32> = processes
            .into_iter()
            .filter(|g| again || !self.member.contains_key(g))
            .take(MAX_PROCESSES)
            .collect();
        for tgid in read {
            self.learn(c, tgid, ts, affinity_due);
        }
        if !force && self.last.elapsed() < REFRESH {
            return;
        }
        self.last = Instant::now();
        self.ticks += 1;
        if self.restricted {
            // Which CPUs a restricted process could not use sat idle, and how long.
            for (cpu, idle_ns) in causeway_procfs::cpus::idle_ns() {
                c.push(CgroupRow::Idle {
                    ts: Timestamp(ts),
                    cpu,
                    idle_ns,
                });
            }
        }
        self.read_pressure(c, Timestamp(ts), force);
        let slow = self.ticks % SLOW_EVERY == 1;
        let t = Timestamp(ts);
        let mut rows = |r| c.push(r);
        sample(
            &mut self.cpu,
            (force, slow),
            cgroup::cpu_quota,
            |q| q.quota_us.is_some(),
            |a, b| a == b,
            |path, q| {
                rows(CgroupRow::Cpu(CpuSample {
                    ts: t,
                    path,
                    quota_us: q.quota_us,
                    period_us: q.period_us,
                    periods: q.periods,
                    throttled: q.throttled,
                    throttled_ns: q.throttled_ns,
                }))
            },
        );
        sample(
            &mut self.memory,
            (force, slow),
            cgroup::memory_limit,
            |m| m.limit.is_some(),
            |a, b| a.limit == b.limit,
            |path, m| {
                rows(CgroupRow::Memory(MemorySample {
                    ts: t,
                    path,
                    limit: m.limit,
                    usage: m.usage,
                    hits: m.hits,
                    major_faults: m.major_faults,
                    refaults: m.refaults,
                }))
            },
        );
    }

    /// Read the PSI sources (the system's first, added at the first refresh where
    /// the kernel has PSI) and write a row for each total that changed (all at the
    /// end).
    fn read_pressure(&mut self, c: &mut dyn Rows, ts: Timestamp, force: bool) {
        if self.pressure.is_empty() && std::path::Path::new("/proc/pressure/cpu").exists() {
            let path = c.intern("/");
            self.pressure.insert(
                "/".to_string(),
                PressureSource {
                    dir: None,
                    path,
                    last: [None; 3],
                    failures: 0,
                },
            );
        }
        for src in self.pressure.values_mut().take(MAX_PRESSURE) {
            if src.failures >= 3 {
                continue;
            }
            for (i, r) in PressureResource::ALL.into_iter().enumerate() {
                let Ok(now) = cgroup::pressure(&src.file(r)) else {
                    src.failures += 1;
                    break;
                };
                src.failures = 0;
                if src.last[i] == Some(now) && !force {
                    continue;
                }
                src.last[i] = Some(now);
                c.push(CgroupRow::Pressure(PressureSample {
                    ts,
                    path: src.path,
                    resource: r,
                    some_us: now.0,
                    full_us: now.1,
                }));
            }
        }
    }

    /// Watch the PSI files of v2 cgroup `path`, where the kernel has them.
    fn watch_pressure(&mut self, c: &mut dyn Rows, path: &str) {
        if path == "/" || path.is_empty() || self.pressure.contains_key(path) {
            return;
        }
        let dir = cgroup::dir_of("", path, false);
        if !dir.join("cpu.pressure").exists() {
            return;
        }
        let id = c.intern(path);
        self.pressure.insert(
            path.to_string(),
            PressureSource {
                dir: Some(dir),
                path: id,
                last: [None; 3],
                failures: 0,
            },
        );
    }

    /// The CPUs process `tgid` may run on, if that is not every online CPU.
    fn restricted_cpus(&self, tgid: u32) -> Option<String> {
        let list = causeway_procfs::cpus::allowed(tgid)?;
        let mut cpus = causeway_format::cgroups::cpu_list(&list)?;
        cpus.retain(|c| self.online.contains(c));
        (!self.online.is_empty() && cpus.len() < self.online.len()).then_some(list)
    }

    /// Read `tgid`'s cgroups: membership rows when new or changed, and the cgroups
    /// and their ancestors watched.
    fn learn(&mut self, c: &mut dyn Rows, tgid: u32, ts: u64, affinity_due: bool) {
        let Ok(m) = cgroup::read(tgid) else {
            // Gone: what was read stays; not read again.
            self.member.entry(tgid).or_default();
            return;
        };
        if let Some(v2) = m.iter().find(|x| x.controllers.is_empty()) {
            let v2 = v2.path.clone();
            self.watch_pressure(c, &v2);
        }
        let path = |ctl: &str| cgroup::path_of(&m, ctl).unwrap_or("").to_string();
        let now = Membership {
            cpu: path("cpu"),
            memory: path("memory"),
            cpus: match self.member.get(&tgid) {
                Some(b) if !affinity_due => b.cpus.clone(),
                _ => self.restricted_cpus(tgid),
            },
        };
        let before = self.member.insert(tgid, now);
        let now = &self.member[&tgid];
        // The first membership holds from before the recording: a process rarely
        // moves, and the analyses need its group for the time before it was noted.
        let since = Timestamp(if before.is_some() { ts } else { 0 });
        if let Some(cpus) = now.cpus.as_ref()
            && before
                .as_ref()
                .is_none_or(|b| b.cpus.as_ref() != Some(cpus))
        {
            let id = c.intern(cpus);
            c.push(CgroupRow::Affinity {
                tgid: Tgid(tgid),
                since,
                cpus: id,
            });
            self.restricted = true;
        }
        let on_v1 = |ctl: &str| m.iter().any(|x| x.controllers.iter().any(|c| c == ctl));
        if before.as_ref().is_none_or(|b| b.cpu != now.cpu) && !now.cpu.is_empty() {
            let id = c.intern(&now.cpu);
            c.push(CgroupRow::Member {
                tgid: Tgid(tgid),
                since,
                path: id,
            });
            let v1 = self.v1_cpu && on_v1("cpu");
            watch(c, &mut self.cpu, &now.cpu, |p| cgroup::dir_of("cpu", p, v1));
        }
        if before.as_ref().is_none_or(|b| b.memory != now.memory) && !now.memory.is_empty() {
            // Only where it differs from the CPU controller's: on v2 they are one.
            if now.memory != now.cpu {
                let id = c.intern(&now.memory);
                c.push(CgroupRow::MemoryMember {
                    tgid: Tgid(tgid),
                    since,
                    path: id,
                });
            }
            let v1 = self.v1_memory && on_v1("memory");
            watch(c, &mut self.memory, &now.memory, |p| {
                cgroup::dir_of("memory", p, v1)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_table_entry_reads_as_its_thread_s_reclaim() {
        let mut v = Vec::new();
        for w in [5u64, 1_500, 3] {
            v.extend_from_slice(&w.to_ne_bytes());
        }
        v.extend_from_slice(&42u32.to_ne_bytes());
        v.extend_from_slice(&0u32.to_ne_bytes());
        let r = ReclaimTime::parse(&43u32.to_ne_bytes(), &v).unwrap();
        assert_eq!(
            r,
            ReclaimTime {
                tid: 43,
                tgid: 42,
                ns: 1_500,
                count: 3
            }
        );
        assert!(ReclaimTime::parse(&43u32.to_ne_bytes(), &v[..20]).is_none());
    }
}
