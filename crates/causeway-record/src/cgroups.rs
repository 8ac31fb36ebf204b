//! The recorded processes' cgroups and their CPU quotas, sampled while they run.
//!
//! A thread of a cgroup whose CPU quota ran out stays runnable while CPUs sit idle:
//! only the cgroup's counters (`cpu.stat`: periods, throttled periods, throttled
//! time) tell that wait from a wait for a busy CPU, and only while the cgroup exists.
//! So each recorded process's cgroup (of the CPU controller) is noted once, as a
//! membership row, and that cgroup and its ancestors (a quota set on a parent slice
//! limits every child) are read every [`REFRESH`]; a sample row is written when the
//! counters or the limit changed since the last one, and once more at the end, so the
//! analyses can tell how long the group was held back in each stretch.

use crate::convert::Converter;
use causeway_format::{CgroupRow, CpuSample, StringId, Tgid, Timestamp};
use causeway_procfs::cgroup::{self, CpuQuota};
/// What `record --cgroup` resolves a name with and lists its processes by.
pub use causeway_procfs::cgroup::{CgroupPathError, procs, resolve};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

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

/// Most cgroups read per refresh: bounds the cost on a system-wide recording of a host
/// with many units (a cgroup's read is three small files, ~15 µs).
const MAX_CGROUPS: usize = 256;

/// One watched cgroup.
#[derive(Debug)]
struct Watched {
    dir: PathBuf,
    path: StringId,
    last: Option<CpuQuota>,
    /// Read failures in a row: a cgroup removed while recording stops being read.
    failures: u8,
}

/// The cgroups of the recorded processes and when they were last read.
#[derive(Debug)]
pub struct CgroupWatch {
    last: Instant,
    last_members: Instant,
    /// Each process's cgroup as last read.
    member: BTreeMap<u32, String>,
    /// By cgroup path.
    watched: BTreeMap<String, Watched>,
    /// Whether the CPU controller is on a v1 hierarchy (read once).
    v1_cpu: bool,
}

impl Default for CgroupWatch {
    fn default() -> Self {
        CgroupWatch {
            last: Instant::now(),
            last_members: Instant::now(),
            member: BTreeMap::new(),
            watched: BTreeMap::new(),
            v1_cpu: std::path::Path::new("/sys/fs/cgroup/cpu/cpu.cfs_period_us").exists(),
        }
    }
}

impl CgroupWatch {
    /// Note the cgroups of processes not seen before, and read the watched quotas if
    /// [`REFRESH`] has passed (or `force`, at the end), adding rows at `ts`.
    pub fn tick(&mut self, c: &mut Converter, ts: u64, force: bool) {
        let again = force || self.last_members.elapsed() >= MEMBERSHIP_REFRESH;
        if again {
            self.last_members = Instant::now();
        }
        let read: Vec<u32> = c
            .title_candidates()
            .filter(|g| again || !self.member.contains_key(g))
            .take(MAX_PROCESSES)
            .collect();
        for tgid in read {
            self.learn(c, tgid, ts);
        }
        if !force && self.last.elapsed() < REFRESH {
            return;
        }
        self.last = Instant::now();
        for w in self.watched.values_mut().take(MAX_CGROUPS) {
            if w.failures >= 3 {
                continue;
            }
            let Ok(q) = cgroup::cpu_quota(&w.dir) else {
                w.failures += 1;
                continue;
            };
            w.failures = 0;
            // A cgroup with a quota is sampled every time, so the throttled time
            // of each stretch is placed in that stretch; one without only when its
            // limit changes.
            if w.last == Some(q) && q.quota_us.is_none() && !force {
                continue;
            }
            w.last = Some(q);
            c.cgroups.push(CgroupRow::Cpu(CpuSample {
                ts: Timestamp(ts),
                path: w.path,
                quota_us: q.quota_us,
                period_us: q.period_us,
                periods: q.periods,
                throttled: q.throttled,
                throttled_ns: q.throttled_ns,
            }));
        }
    }

    /// Read `tgid`'s cgroup: a membership row when it is new or changed, and its
    /// cgroup and ancestors watched.
    fn learn(&mut self, c: &mut Converter, tgid: u32, ts: u64) {
        let Ok(m) = cgroup::read(tgid) else {
            // Gone: what was read stays; not read again.
            self.member.entry(tgid).or_default();
            return;
        };
        let Some(path) = cgroup::path_of(&m, "cpu").map(str::to_string) else {
            self.member.entry(tgid).or_default();
            return;
        };
        let before = self.member.insert(tgid, path.clone());
        if before.as_deref() == Some(path.as_str()) {
            return;
        }
        let v1 = self.v1_cpu && m.iter().any(|x| x.controllers.iter().any(|c| c == "cpu"));
        let id = c.strings.intern(&path);
        // The first membership holds from before the recording: a process rarely
        // moves, and the analyses need its group for the time before it was noted.
        let since = if before.is_some() { ts } else { 0 };
        c.cgroups.push(CgroupRow::Member {
            tgid: Tgid(tgid),
            since: Timestamp(since),
            path: id,
        });
        let mut p = path.as_str();
        while p != "/" && !p.is_empty() {
            if !self.watched.contains_key(p) {
                let path = c.strings.intern(p);
                self.watched.insert(
                    p.to_string(),
                    Watched {
                        dir: cgroup::dir_of("cpu", p, v1),
                        path,
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
}

/// `record --cgroup`: processes that enter the recorded cgroup while it is recorded.
#[derive(Debug)]
pub struct Entering {
    dir: PathBuf,
    last: Instant,
}

impl Entering {
    /// Watch the cgroup at `dir`.
    pub fn new(dir: PathBuf) -> Entering {
        Entering {
            dir,
            last: Instant::now(),
        }
    }

    /// Every [`MEMBERSHIP_REFRESH`], record the processes in the cgroup that are not
    /// recorded yet: the kernel side follows them (and what they create) from now on,
    /// and their threads and mappings are read as for `-p`.
    pub(crate) fn poll(&mut self, c: &mut Converter, p: &crate::probes::Probes, ts: u64) {
        if self.last.elapsed() < MEMBERSHIP_REFRESH {
            return;
        }
        self.last = Instant::now();
        for pid in cgroup::procs(&self.dir) {
            if c.targets.contains(&pid) || pid == std::process::id() {
                continue;
            }
            if p.track(pid).is_err() {
                c.count("cgroup_processes_untracked", 1);
                continue;
            }
            c.targets.insert(pid);
            c.count("cgroup_processes_entered", 1);
            c.note_process_from_proc(pid, ts);
            for tid in crate::procfs::threads(pid) {
                if let Some(comm) = crate::procfs::comm(pid, tid) {
                    c.note_thread(tid, pid, &comm, ts);
                }
            }
            c.maps_pending.insert(pid);
        }
    }
}
