//! Signal and timer records → trace events (kept apart from `convert` so these kinds
//! stay one small piece: what the recorded signals and timers say, nothing more).

use crate::records::Body;
use causeway_format::{EventKind, Signal, SignalResult, Tgid, Tid, Timestamp};

/// The trace event of a signal or timer record (`tid`: the record header's thread);
/// `None` for any other body or a signal number out of range.
pub fn signal_timer_event(tid: u32, body: Body) -> Option<EventKind> {
    Some(match body {
        Body::Signal {
            deliver,
            target_tid,
            target_tgid,
            sig,
            result,
            group,
        } => {
            let sig = Signal(u8::try_from(sig).ok()?);
            if deliver {
                EventKind::SignalDeliver { tid: Tid(tid), sig }
            } else {
                EventKind::SignalGenerate {
                    sender: Tid(tid),
                    target: Tid(target_tid),
                    target_tgid: Tgid(target_tgid),
                    sig,
                    group,
                    result: SignalResult(u8::try_from(result).unwrap_or(u8::MAX)),
                }
            }
        }
        Body::Timer {
            expire: true,
            timer,
            ..
        } => EventKind::TimerExpire { timer },
        Body::Timer { timer, expires, .. } => EventKind::TimerArm {
            tid: Tid(tid),
            timer,
            expires: u64::try_from(expires).ok().map(Timestamp),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_become_typed_events() {
        let g = signal_timer_event(
            5,
            Body::Signal {
                deliver: false,
                target_tid: 9,
                target_tgid: 9,
                sig: 19,
                result: 0,
                group: true,
            },
        );
        assert_eq!(
            g,
            Some(EventKind::SignalGenerate {
                sender: Tid(5),
                target: Tid(9),
                target_tgid: Tgid(9),
                sig: Signal::STOP,
                group: true,
                result: SignalResult::DELIVERED,
            })
        );
        let arm = signal_timer_event(
            7,
            Body::Timer {
                expire: false,
                timer: 3,
                expires: -1,
            },
        );
        assert_eq!(
            arm,
            Some(EventKind::TimerArm {
                tid: Tid(7),
                timer: 3,
                expires: None
            })
        );
        let bad = Body::Signal {
            deliver: true,
            target_tid: 1,
            target_tgid: 1,
            sig: 300,
            result: 0,
            group: false,
        };
        assert_eq!(signal_timer_event(1, bad), None);
    }
}
