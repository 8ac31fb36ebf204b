//! `sched_switch`: the thread leaving a CPU and the one taking it.

use super::{FirstSeen, ModelBuilder};
use crate::cpu::{Pending, StackTarget};
use crate::segment::{SegmentState, WakeInfo};
use crate::sockets::Ready;
use crate::tracker::{Life, ThreadBuild};
use causeway_format::{Cpu, TaskState, Tid, Timestamp};

impl ModelBuilder<'_> {
    pub(super) fn on_switch(
        &mut self,
        ts: Timestamp,
        c: Cpu,
        prev: Tid,
        prev_state: TaskState,
        next: Tid,
    ) {
        let believed = self.cpu(c).current;
        if let Some(y) = believed
            && y != prev
        {
            if self.partial {
                self.stats.outside_scope += 1;
            } else {
                self.stats.cpu_current_mismatch += 1;
            }
            if !y.is_idle()
                && matches!(self.threads.get(y).and_then(ThreadBuild::state),
                    Some(SegmentState::Running { cpu }) if cpu == c)
            {
                self.invalidate(y, ts);
            }
        }
        if !prev.is_idle() {
            let consistent = believed.is_none() || believed == Some(prev);
            let hint = FirstSeen::Running { cpu: c, consistent };
            let slot = self.ensure_slot(prev, ts, hint);
            let state = slot.and_then(|i| self.threads.at(i).state());
            let fits = match state {
                Some(SegmentState::Running { cpu }) => cpu == c,
                Some(SegmentState::Unknown { .. }) | None => true,
                _ => false,
            };
            if !fits && !self.invalidate(prev, ts) {
                if self.partial {
                    self.stats.outside_scope += 1;
                } else {
                    self.stats.switch_out_not_running += 1;
                }
            }
            // Invalidating moves no thread: the slot still holds `prev`.
            if let Some(th) = slot.map(|i| self.threads.at(i)) {
                if prev_state.is_exiting() {
                    th.close(ts, true);
                    th.life = Life::Ended;
                    th.exited.get_or_insert(ts);
                } else if prev_state.is_runnable() {
                    th.transition(
                        ts,
                        SegmentState::Runnable {
                            cpu: Some(c),
                            preempted: true,
                        },
                    );
                } else {
                    let syscall = th.syscall;
                    th.transition(
                        ts,
                        SegmentState::Blocked {
                            state: Some(prev_state),
                            waker: None,
                            switch_out_stack: None,
                            syscall,
                        },
                    );
                }
            }
        }
        self.cpu(c).pending = Some(Pending {
            ts,
            target: StackTarget::SwitchOut { tid: prev },
        });
        if !next.is_idle() {
            let slot = self.ensure_slot(next, ts, FirstSeen::Runnable { cpu: c });
            let state = slot.and_then(|i| self.threads.at(i).state());
            match state {
                Some(SegmentState::Runnable { .. } | SegmentState::Unknown { .. }) | None => {}
                Some(SegmentState::Blocked { .. }) => self.switch_in_unwoken(next, ts),
                Some(SegmentState::Running { .. }) => {
                    if !self.invalidate(next, ts) {
                        self.stats.switch_in_while_running += 1;
                    }
                }
            }
            if let Some(th) = slot.map(|i| self.threads.at(i)) {
                th.transition(ts, SegmentState::Running { cpu: c });
                th.wake_while_running = None;
                if th.ready_while_running.take().is_some() {
                    self.stats.data_marks_unattached += 1;
                }
            }
        }
        let cpu = self.cpu(c);
        cpu.current = Some(next);
        cpu.switch(ts, prev, next);
    }

    /// `tid` is switched in at `ts` while the model believes it blocked, with no
    /// wake-up seen since it blocked.
    pub(super) fn switch_in_unwoken(&mut self, tid: Tid, ts: Timestamp) {
        let Some(th) = self.threads.get_mut(tid) else {
            return;
        };
        let early = th.wake_while_running.take();
        let early_ready = th.ready_while_running.take();
        let since = th.open_seg().map_or(ts, |o| o.start);
        match early {
            // The wake-up raced with the switch-out: the thread never really slept.
            Some(w) if self.loss_split(since, ts).is_none() => {
                self.stats.wakeups_before_switch_out += 1;
                let Some(th) = self.threads.get_mut(tid) else {
                    return;
                };
                th.wakeups += 1;
                let runnable = SegmentState::Runnable {
                    cpu: Some(w.target_cpu),
                    preempted: false,
                };
                let blocked = th.wake(WakeInfo { ts: since, ..w }, runnable);
                if let (Some(r), Some(i)) =
                    (early_ready, blocked.and_then(|i| u32::try_from(i).ok()))
                {
                    th.readies.push(Ready { segment: i, ..r });
                }
            }
            _ => {
                if !self.invalidate(tid, ts) {
                    if self.partial {
                        self.stats.outside_scope += 1;
                    } else {
                        self.stats.switch_in_without_wakeup += 1;
                    }
                }
            }
        }
    }
}
