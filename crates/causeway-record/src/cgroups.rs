//! The recorded processes' cgroups: read by `causeway_cgroups`'s watch into the
//! converter's rows, and `record --cgroup`'s processes that enter a cgroup.

use crate::convert::Converter;
pub use causeway_cgroups::{CgroupWatch, MEMBERSHIP_REFRESH, REFRESH};
use causeway_format::{CgroupRow, StringId};
use causeway_procfs::cgroup;
/// What `record --cgroup` resolves a name with and lists its processes by.
pub use causeway_procfs::cgroup::{CgroupPathError, procs, resolve};
use std::path::PathBuf;
use std::time::Instant;

impl causeway_cgroups::Rows for Converter {
    fn intern(&mut self, s: &str) -> StringId {
        self.strings.intern(s)
    }

    fn push(&mut self, row: CgroupRow) {
        self.cgroups.push(row);
    }
}

/// Note new processes' cgroups and read the watched limits (see [`CgroupWatch::tick`]).
pub(crate) fn tick(w: &mut CgroupWatch, c: &mut Converter, ts: u64, force: bool) {
    let processes: Vec<u32> = c.title_candidates().collect();
    w.tick(c, processes, ts, force);
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
