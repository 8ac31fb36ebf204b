//! Byte layout of the signal and timer events (sized codes, format 1.3): kept apart
//! from `codec` so kinds added by other features stay a union with these.
//!
//! - `signal_generate`: sender (predicted tid), target, target tgid, signal, flags
//!   (bit 0: process-wide), result.
//! - `signal_deliver`: tid (predicted), signal.
//! - `timer_arm`: tid (predicted), timer, expiry + 1 (0: none).
//! - `timer_expire`: timer.

use crate::bytes::{ByteReader, ByteWriter, ReadFail};
use crate::event::EventKind;
use crate::ids::{Tgid, Tid, Timestamp};
use crate::signals::{Signal, SignalResult};

/// Sized event codes of this module.
pub(crate) mod code {
    pub const SIGNAL_GENERATE: u8 = 72;
    pub const SIGNAL_DELIVER: u8 = 73;
    pub const TIMER_ARM: u8 = 74;
    pub const TIMER_EXPIRE: u8 = 75;
}

/// Encode the payload of a signal or timer event; returns its code (0 for any other
/// kind, which never comes here).
pub(crate) fn encode(s: &mut ByteWriter, cur: u64, kind: &EventKind) -> u8 {
    let tid = crate::predict::put_tid;
    match *kind {
        EventKind::SignalGenerate {
            sender,
            target,
            target_tgid,
            sig,
            group,
            result,
        } => {
            tid(s, cur, sender);
            s.varint(target.0 as u64);
            s.varint(target_tgid.0 as u64);
            s.u8(sig.0);
            s.u8(group as u8);
            s.u8(result.0);
            code::SIGNAL_GENERATE
        }
        EventKind::SignalDeliver { tid: t, sig } => {
            tid(s, cur, t);
            s.u8(sig.0);
            code::SIGNAL_DELIVER
        }
        EventKind::TimerArm {
            tid: t,
            timer,
            expires,
        } => {
            tid(s, cur, t);
            s.varint(timer);
            s.varint(expires.map_or(0, |e| e.0.saturating_add(1)));
            code::TIMER_ARM
        }
        EventKind::TimerExpire { timer } => {
            s.varint(timer);
            code::TIMER_EXPIRE
        }
        _ => 0,
    }
}

/// Decode the payload of code `c` (one of [`code`]).
pub(crate) fn decode(p: &mut ByteReader<'_>, c: u8, cur: u64) -> Result<EventKind, ReadFail> {
    let tid = crate::predict::read_tid;
    Ok(match c {
        code::SIGNAL_GENERATE => EventKind::SignalGenerate {
            sender: tid(p, cur)?,
            target: Tid(p.varint_u32()?),
            target_tgid: Tgid(p.varint_u32()?),
            sig: Signal(p.u8()?),
            group: p.u8()? & 1 != 0,
            result: SignalResult(p.u8()?),
        },
        code::SIGNAL_DELIVER => EventKind::SignalDeliver {
            tid: tid(p, cur)?,
            sig: Signal(p.u8()?),
        },
        code::TIMER_ARM => EventKind::TimerArm {
            tid: tid(p, cur)?,
            timer: p.varint()?,
            expires: p.varint()?.checked_sub(1).map(Timestamp),
        },
        _ => EventKind::TimerExpire { timer: p.varint()? },
    })
}
