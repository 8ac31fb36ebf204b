//! Events a thread emits while running (system calls, exec, exit, markers, fork).

use super::timeline::identity_row;
use super::{FirstSeen, ModelBuilder};
use crate::segment::SegmentState;
use crate::tracker::{IdentityRow, Life, ThreadBuild};
use causeway_format::{Cpu, Tgid, Tid, Timestamp};

impl ModelBuilder<'_> {
    /// An event `tid` emitted while running on `c` (system call, exec, exit, fork,
    /// marker). Returns the thread, if it is not the idle task.
    pub(super) fn on_context(
        &mut self,
        ts: Timestamp,
        c: Cpu,
        tid: Tid,
    ) -> Option<&mut ThreadBuild> {
        if tid.is_idle() {
            return None;
        }
        let believed = self.cpu(c).current;
        let consistent = believed.is_none() || believed == Some(tid);
        let is_new = !self.threads.contains(tid);
        let hint = FirstSeen::Running { cpu: c, consistent };
        let slot = self.ensure_slot(tid, ts, hint)?;
        let th = self.threads.at(slot);
        let mut running_here = false;
        match th.state() {
            Some(SegmentState::Running { cpu }) if cpu == c => running_here = true,
            Some(SegmentState::Unknown { .. }) if consistent => {
                // The thread is running here now; when it started is still unknown.
                th.close(ts, false);
                th.open(ts, false, SegmentState::Running { cpu: c });
                running_here = true;
            }
            _ => {}
        }
        if !consistent || (!running_here && !is_new) {
            self.stats.context_mismatch += 1;
        }
        if running_here && believed.is_none() {
            self.cpu(c).current = Some(tid);
        }
        Some(self.threads.at(slot))
    }

    pub(super) fn on_fork(
        &mut self,
        ts: Timestamp,
        c: Cpu,
        parent: Tid,
        parent_tgid: Tgid,
        child: Tid,
        child_tgid: Tgid,
    ) {
        let mut parent_comm = None;
        if let Some(p) = self.on_context(ts, c, parent) {
            match p.identity.last_mut() {
                Some(row) if row.tgid.is_none() => row.tgid = Some(parent_tgid),
                Some(_) => {}
                None => p.identity.push(IdentityRow {
                    since: ts,
                    tgid: Some(parent_tgid),
                    comm: None,
                }),
            }
            parent_comm = p.identity.last().and_then(|r| r.comm);
        }
        if child_tgid != parent_tgid && child_tgid.0 != 0 {
            self.proc_events.forks.push((ts, parent_tgid, child_tgid));
        }
        if child.is_idle() {
            return;
        }
        if let Some(old) = self.threads.get(child)
            && !matches!(old.life, Life::Ended)
        {
            self.stats.tid_reused_without_exit += 1;
        }
        self.retire(child, ts);
        let mut identity = vec![IdentityRow {
            since: ts,
            tgid: Some(child_tgid),
            comm: parent_comm,
        }];
        // Rows written for the new thread; older ones belong to an earlier thread with
        // the same tid.
        for r in self
            .table_threads
            .rows(child)
            .iter()
            .filter(|r| r.since >= ts)
        {
            if r.since == ts {
                identity.clear();
            }
            identity.push(identity_row(r));
        }
        let mut th = ThreadBuild::new(child, ts, identity);
        th.created = Some(ts);
        th.parent_tid = (!parent.is_idle()).then_some(parent);
        th.life = Life::Created { at: ts };
        self.threads.insert(th);
    }
}
