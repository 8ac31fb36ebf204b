//! Byte layout of the socket events (sized codes, format 1.4), apart from `codec` as
//! the signal and timer kinds are.
//!
//! - `sock_send`: tid (predicted), flow, bytes, seq + 1 (0: none).
//! - `sock_ready`: wakee, host, flow, seq + 1 (0: none).

use crate::bytes::{ByteReader, ByteWriter, ReadFail};
use crate::event::EventKind;
use crate::ids::Tid;
use crate::sockets::FlowId;

/// Sized event codes of this module.
pub(crate) mod code {
    pub const SOCK_SEND: u8 = 76;
    pub const SOCK_READY: u8 = 77;
}

fn put_seq(s: &mut ByteWriter, seq: Option<u32>) {
    s.varint(seq.map_or(0, |q| q as u64 + 1));
}

fn get_seq(p: &mut ByteReader<'_>) -> Result<Option<u32>, ReadFail> {
    Ok(p.varint()?
        .checked_sub(1)
        .and_then(|q| u32::try_from(q).ok()))
}

/// Encode the payload of a socket event; returns its code (0 for any other kind, which
/// never comes here).
pub(crate) fn encode(s: &mut ByteWriter, cur: u64, kind: &EventKind) -> u8 {
    match *kind {
        EventKind::SockSend {
            tid,
            flow,
            bytes,
            seq,
        } => {
            crate::predict::put_tid(s, cur, tid);
            s.varint(flow.0 as u64);
            s.varint(bytes as u64);
            put_seq(s, seq);
            code::SOCK_SEND
        }
        EventKind::SockReady {
            wakee,
            host,
            flow,
            seq,
        } => {
            s.varint(wakee.0 as u64);
            s.varint(host.0 as u64);
            s.varint(flow.0 as u64);
            put_seq(s, seq);
            code::SOCK_READY
        }
        _ => 0,
    }
}

/// Decode the payload of code `c` (one of [`code`]).
pub(crate) fn decode(p: &mut ByteReader<'_>, c: u8, cur: u64) -> Result<EventKind, ReadFail> {
    Ok(match c {
        code::SOCK_SEND => EventKind::SockSend {
            tid: crate::predict::read_tid(p, cur)?,
            flow: FlowId(p.varint_u32()?),
            bytes: p.varint_u32()?,
            seq: get_seq(p)?,
        },
        _ => EventKind::SockReady {
            wakee: Tid(p.varint_u32()?),
            host: Tid(p.varint_u32()?),
            flow: FlowId(p.varint_u32()?),
            seq: get_seq(p)?,
        },
    })
}
