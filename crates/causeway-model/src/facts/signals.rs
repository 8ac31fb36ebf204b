//! Signals and timers: who sent which signal to whom, where it was taken, and which
//! timer-context wake-ups were the expiry of a timer a recorded thread armed (and who
//! armed it). Records only, in time order; which of them explains a stop or a wait is
//! the analysis's call.

use causeway_format::{Cpu, Signal, SignalResult, StackId, Tgid, Tid, Timestamp, Waker};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// A wake-up on a CPU this long (ns) after a timer expired there is its callback's.
const EXPIRY_WINDOW_NS: u64 = 1_000_000;

/// One generated signal (`signal_generate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalSent {
    /// When.
    pub ts: Timestamp,
    /// Sending thread; `None` when the kernel sent it from an interrupt or timer.
    pub sender: Option<Tid>,
    /// Thread it was queued on.
    pub target: Tid,
    /// Process of the target.
    pub target_tgid: Tgid,
    /// The signal.
    pub sig: Signal,
    /// Process-wide.
    pub group: bool,
    /// What the kernel did with it.
    pub result: SignalResult,
    /// The sender's user stack at the send (the `Stack` event of kind `Other` the
    /// recorder writes after the send; `None` from older recorders, or from the
    /// kernel).
    pub stack: Option<StackId>,
}

/// One signal taken by its thread (`signal_deliver`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalTaken {
    /// When.
    pub ts: Timestamp,
    /// Receiving thread.
    pub tid: Tid,
    /// The signal.
    pub sig: Signal,
}

/// A wake-up made by the expiry of a timer a recorded thread armed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerWake {
    /// The timer's identity in the trace.
    pub timer: u64,
    /// Thread that armed it.
    pub armed_by: Tid,
    /// When it was armed.
    pub armed_at: Timestamp,
    /// When it expired.
    pub expired_at: Timestamp,
}

/// The signal and timer tracker.
#[derive(Clone, Debug, Default)]
pub(crate) struct Signals {
    sent: Vec<SignalSent>,
    taken: Vec<SignalTaken>,
    /// Last arm of each timer: `(when, by whom)`.
    arms: FxHashMap<u64, (Timestamp, Tid)>,
    /// Per CPU: the timer that expired last and when, until a wake-up claims it.
    expiring: FxHashMap<Cpu, (u64, Timestamp)>,
    /// Timer wake-ups by `(wakee, wake-up time)`.
    wakes: BTreeMap<(Tid, Timestamp), TimerWake>,
    arm_count: u64,
}

impl Signals {
    pub(crate) fn sent(&mut self, s: SignalSent) {
        self.sent.push(s);
    }

    /// The stack the recorder took at a send: it follows the send's event, same thread.
    pub(crate) fn sender_stack(&mut self, tid: Tid, user: Option<StackId>) {
        if let Some(s) = self.sent.last_mut()
            && s.sender == Some(tid)
            && s.stack.is_none()
        {
            s.stack = user;
        }
    }

    pub(crate) fn taken(&mut self, t: SignalTaken) {
        self.taken.push(t);
    }

    pub(crate) fn armed(&mut self, ts: Timestamp, tid: Tid, timer: u64) {
        self.arms.insert(timer, (ts, tid));
        self.arm_count += 1;
    }

    pub(crate) fn expired(&mut self, ts: Timestamp, cpu: Cpu, timer: u64) {
        self.expiring.insert(cpu, (timer, ts));
    }

    /// A wake-up: claim the expiry just before it on its CPU when a timer (not a
    /// thread) woke.
    pub(crate) fn wakeup(&mut self, ts: Timestamp, cpu: Cpu, wakee: Tid, waker: Waker) {
        if matches!(waker, Waker::Thread { .. }) {
            return;
        }
        let Some(&(timer, at)) = self.expiring.get(&cpu) else {
            return;
        };
        if ts < at || ts.0 - at.0 > EXPIRY_WINDOW_NS {
            return;
        }
        self.expiring.remove(&cpu);
        if let Some(&(armed_at, armed_by)) = self.arms.get(&timer) {
            self.wakes.insert(
                (wakee, ts),
                TimerWake {
                    timer,
                    armed_by,
                    armed_at,
                    expired_at: at,
                },
            );
        }
    }

    pub(crate) fn sent_all(&self) -> &[SignalSent] {
        &self.sent
    }

    pub(crate) fn taken_all(&self) -> &[SignalTaken] {
        &self.taken
    }

    pub(crate) fn timer_wake(&self, wakee: Tid, ts: Timestamp) -> Option<&TimerWake> {
        self.wakes.get(&(wakee, ts))
    }

    pub(crate) fn arm_count(&self) -> u64 {
        self.arm_count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_format::StringId;

    #[test]
    fn a_timer_wakeup_names_who_armed_the_timer() {
        let mut s = Signals::default();
        s.armed(Timestamp(100), Tid(7), 42);
        s.armed(Timestamp(150), Tid(8), 43);
        s.expired(Timestamp(1_000), Cpu(1), 42);
        let timer = Waker::Irq {
            irq: u32::MAX,
            name: StringId(0),
        };
        // A thread's wake-up on that CPU is not the timer's.
        s.wakeup(
            Timestamp(1_001),
            Cpu(1),
            Tid(9),
            Waker::Thread { tid: Tid(3) },
        );
        s.wakeup(Timestamp(1_002), Cpu(0), Tid(9), timer);
        s.wakeup(Timestamp(1_003), Cpu(1), Tid(7), timer);
        let w = s.timer_wake(Tid(7), Timestamp(1_003)).expect("claimed");
        assert_eq!(
            (w.armed_by, w.armed_at, w.expired_at),
            (Tid(7), Timestamp(100), Timestamp(1_000))
        );
        assert!(s.timer_wake(Tid(9), Timestamp(1_002)).is_none());
        // One expiry, one wake-up; a late one is not claimed.
        s.wakeup(Timestamp(1_004), Cpu(1), Tid(8), timer);
        assert!(s.timer_wake(Tid(8), Timestamp(1_004)).is_none());
        s.expired(Timestamp(2_000), Cpu(1), 43);
        s.wakeup(
            Timestamp(2_000 + EXPIRY_WINDOW_NS + 1),
            Cpu(1),
            Tid(8),
            timer,
        );
        assert!(
            s.timer_wake(Tid(8), Timestamp(2_000 + EXPIRY_WINDOW_NS + 1))
                .is_none()
        );
        assert_eq!(s.arm_count(), 2);
    }
}
