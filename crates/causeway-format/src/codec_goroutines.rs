//! Byte layout of the goroutine events (sized codes, format 1.5), apart from `codec`
//! as the signal and socket kinds are.
//!
//! - `go_run`: tid (predicted), goid, parent, start stack id + 1 (0: none).
//! - `go_park`: tid (predicted), goid, reason string id.
//! - `go_ready`: tid (predicted), goid, by.
//! - `go_net_wait`: tid (predicted), goid, flow id, seq + 1 (0: none).

use crate::bytes::{ByteReader, ByteWriter, ReadFail};
use crate::event::EventKind;
use crate::ids::{StackId, StringId};

/// Sized event codes of this module.
pub(crate) mod code {
    pub const GO_RUN: u8 = 78;
    pub const GO_PARK: u8 = 79;
    pub const GO_READY: u8 = 80;
    pub const GO_NET_WAIT: u8 = 81;
}

/// Encode the payload of a goroutine event; returns its code (0 for any other kind,
/// which never comes here).
pub(crate) fn encode(s: &mut ByteWriter, cur: u64, kind: &EventKind) -> u8 {
    match *kind {
        EventKind::GoRun {
            tid,
            goid,
            parent,
            start,
        } => {
            crate::predict::put_tid(s, cur, tid);
            s.varint(goid);
            s.varint(parent);
            s.varint(start.map_or(0, |id| u64::from(id.0) + 1));
            code::GO_RUN
        }
        EventKind::GoPark { tid, goid, reason } => {
            crate::predict::put_tid(s, cur, tid);
            s.varint(goid);
            s.varint(u64::from(reason.0));
            code::GO_PARK
        }
        EventKind::GoNetWait {
            tid,
            goid,
            flow,
            seq,
        } => {
            crate::predict::put_tid(s, cur, tid);
            s.varint(goid);
            s.varint(u64::from(flow.0));
            s.varint(seq.map_or(0, |q| u64::from(q) + 1));
            code::GO_NET_WAIT
        }
        EventKind::GoReady { tid, goid, by } => {
            crate::predict::put_tid(s, cur, tid);
            s.varint(goid);
            s.varint(by);
            code::GO_READY
        }
        _ => 0,
    }
}

/// Decode the payload of code `c` (one of [`code`]).
pub(crate) fn decode(p: &mut ByteReader<'_>, c: u8, cur: u64) -> Result<EventKind, ReadFail> {
    let tid = crate::predict::read_tid(p, cur)?;
    let goid = p.varint()?;
    Ok(match c {
        code::GO_RUN => EventKind::GoRun {
            tid,
            goid,
            parent: p.varint()?,
            start: p.varint_u32()?.checked_sub(1).map(StackId),
        },
        code::GO_PARK => EventKind::GoPark {
            tid,
            goid,
            reason: StringId(p.varint_u32()?),
        },
        code::GO_NET_WAIT => EventKind::GoNetWait {
            tid,
            goid,
            flow: crate::sockets::FlowId(p.varint_u32()?),
            seq: p
                .varint()?
                .checked_sub(1)
                .and_then(|q| u32::try_from(q).ok()),
        },
        _ => EventKind::GoReady {
            tid,
            goid,
            by: p.varint()?,
        },
    })
}
