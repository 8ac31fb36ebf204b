//! Wake-ups: the end of a blocked segment, or the start of a new thread's life.

use super::{FirstSeen, ModelBuilder};
use crate::cpu::{Pending, StackTarget};
use crate::segment::{SegmentState, WakeInfo};
use crate::tracker::{Life, ThreadBuild};
use causeway_format::{Cpu, Tid, Timestamp, Waker};

impl ModelBuilder<'_> {
    pub(super) fn on_wakeup(
        &mut self,
        ts: Timestamp,
        c: Cpu,
        wakee: Tid,
        target_cpu: Cpu,
        waker: Waker,
        new: bool,
    ) {
        if wakee.is_idle() {
            return;
        }
        let runnable = SegmentState::Runnable {
            cpu: Some(target_cpu),
            preempted: false,
        };
        let life = self.threads.get(wakee).map(|t| t.life);
        let starts_life = match life {
            None | Some(Life::Ended) => new,
            Some(Life::Created { .. }) => true,
            Some(Life::Live(_)) => {
                if new {
                    self.stats.wakeup_new_for_live_thread += 1;
                }
                false
            }
        };
        if starts_life {
            if matches!(life, Some(Life::Ended)) {
                self.retire(wakee, ts);
            }
            let i = match self.threads.slot(wakee) {
                Some(i) => i,
                None => {
                    let mut th = ThreadBuild::new(wakee, ts, self.table_identity(wakee));
                    th.created = Some(ts);
                    self.threads.insert(th)
                }
            };
            let th = self.threads.at(i);
            th.touch(ts);
            th.open(ts, true, runnable);
            self.cpu(c).pending = Some(Pending {
                ts,
                target: StackTarget::WakerUnused,
            });
            return;
        }
        let Some(th) = self.ensure(wakee, ts, FirstSeen::Blocked) else {
            return;
        };
        match th.state() {
            Some(SegmentState::Blocked { .. }) => {
                let wake = WakeInfo {
                    ts,
                    cpu: c,
                    target_cpu,
                    waker,
                    waker_stack: None,
                    waker_stack_weight: 1,
                };
                th.wakeups += 1;
                if let Some(seg) = th.wake(wake, runnable) {
                    self.cpu(c).pending = Some(Pending {
                        ts,
                        target: StackTarget::Waker { wakee, seg },
                    });
                }
            }
            Some(SegmentState::Unknown { .. }) => {
                th.wakeups += 1;
                th.transition(ts, runnable);
                self.cpu(c).pending = Some(Pending {
                    ts,
                    target: StackTarget::WakerUnused,
                });
            }
            state => {
                let mut mark_dropped = false;
                if matches!(state, Some(SegmentState::Running { .. })) {
                    mark_dropped = th.ready_while_running.take().is_some();
                    th.wake_while_running = Some(WakeInfo {
                        ts,
                        cpu: c,
                        target_cpu,
                        waker,
                        waker_stack: None,
                        waker_stack_weight: 1,
                    });
                }
                th.wakeups_not_blocked += 1;
                self.stats.wakeups_not_blocked += 1;
                self.stats.data_marks_unattached += u64::from(mark_dropped);
                self.cpu(c).pending = Some(Pending {
                    ts,
                    target: StackTarget::WakerUnused,
                });
            }
        }
    }
}
