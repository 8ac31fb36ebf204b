//! Thread and process tables from sample heads, side-band records and sched events.
//!
//! - A thread row ([`ThreadInfo`]) is written the first time a `(tid, tgid, comm)` is
//!   seen and again whenever its process or name changes (`since` = when the change was
//!   seen). First sightings of threads that existed before the recording get `since` 0;
//!   threads created during it get their fork time.
//! - A process row ([`ProcessInfo`]) is written when a process is first seen (`since` 0,
//!   parent from perf's synthesized fork records if present), when one is forked
//!   (`since` = fork time, parent known, executable inherited), and on every exec
//!   (`since` = exec time, executable = the exec'd file). Command lines are not in
//!   perf.data, so `cmdline` stays empty.
//!
//! This module does not emit events; [`crate::convert`] does.

use causeway_format::{ProcessInfo, StringId, Tgid, ThreadInfo, Tid, Timestamp, TraceWriter};
use std::collections::{HashMap, HashSet};
use std::io::Write;

#[derive(Debug)]
struct ThreadState {
    tgid: u32,
    comm: String,
}

/// What is known about threads and processes so far.
#[derive(Debug, Default)]
pub(crate) struct Threads {
    threads: HashMap<u32, ThreadState>,
    parent_of: HashMap<u32, u32>,
    exe_of: HashMap<u32, StringId>,
    processes: HashSet<u32>,
    /// Thread rows written.
    pub thread_rows: u64,
    /// Process rows written.
    pub process_rows: u64,
}

impl Threads {
    /// The process of `tid`, if known.
    pub fn tgid_of(&self, tid: u32) -> Option<u32> {
        self.threads.get(&tid).map(|t| t.tgid)
    }

    /// True if `tid` has been seen.
    pub fn knows(&self, tid: u32) -> bool {
        self.threads.contains_key(&tid)
    }

    /// The thread name last seen for `tid`.
    pub fn comm_of(&self, tid: u32) -> Option<&str> {
        self.threads.get(&tid).map(|t| t.comm.as_str())
    }

    /// A sighting of `tid` in process `tgid` named `comm` at `ts`. `first_since` is the
    /// `since` for a thread not seen before.
    pub fn observe<W: Write>(
        &mut self,
        w: &mut TraceWriter<W>,
        tid: u32,
        tgid: u32,
        comm: &str,
        ts: u64,
        first_since: u64,
    ) {
        let since = match self.threads.get_mut(&tid) {
            Some(t) if t.tgid == tgid && t.comm == comm => return,
            Some(t) => {
                t.tgid = tgid;
                comm.clone_into(&mut t.comm);
                ts
            }
            None => {
                self.threads.insert(
                    tid,
                    ThreadState {
                        tgid,
                        comm: comm.to_string(),
                    },
                );
                first_since
            }
        };
        let comm = w.intern(comm);
        w.add_thread(ThreadInfo {
            tid: Tid(tid),
            tgid: Tgid(tgid),
            since: Timestamp(since),
            comm,
        });
        self.thread_rows += 1;
        self.ensure_process(w, tgid);
    }

    /// Write a row for `tgid` if it has none yet (a process from before the recording).
    pub fn ensure_process<W: Write>(&mut self, w: &mut TraceWriter<W>, tgid: u32) {
        if self.processes.contains(&tgid) {
            return;
        }
        let parent = self.parent_of.get(&tgid).copied();
        let exe = self.exe_of.get(&tgid).copied().unwrap_or(StringId(0));
        self.process_row(w, tgid, parent, 0, exe);
    }

    /// A process `tgid` was forked by `parent` at `ts` (0 for a synthesized record of a
    /// process from before the recording).
    pub fn forked_process<W: Write>(
        &mut self,
        w: &mut TraceWriter<W>,
        tgid: u32,
        parent: u32,
        ts: u64,
    ) {
        let parent = (parent != 0).then_some(parent);
        if let Some(p) = parent {
            self.parent_of.insert(tgid, p);
        }
        if self.processes.contains(&tgid) {
            return;
        }
        let exe = parent
            .and_then(|p| self.exe_of.get(&p).copied())
            .unwrap_or(StringId(0));
        if exe.0 != 0 {
            self.exe_of.insert(tgid, exe);
        }
        self.process_row(w, tgid, parent, ts, exe);
    }

    /// `tgid` exec'd `exe` at `ts`.
    pub fn exec<W: Write>(&mut self, w: &mut TraceWriter<W>, tgid: u32, exe: StringId, ts: u64) {
        self.exe_of.insert(tgid, exe);
        let parent = self.parent_of.get(&tgid).copied();
        self.process_row(w, tgid, parent, ts, exe);
    }

    fn process_row<W: Write>(
        &mut self,
        w: &mut TraceWriter<W>,
        tgid: u32,
        parent: Option<u32>,
        since: u64,
        exe: StringId,
    ) {
        self.processes.insert(tgid);
        w.add_process(ProcessInfo {
            tgid: Tgid(tgid),
            parent: parent.map(Tgid),
            since: Timestamp(since),
            exe,
            cmdline: StringId(0),
        });
        self.process_rows += 1;
    }
}
