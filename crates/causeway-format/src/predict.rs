//! Thread-id prediction shared by the event codecs: `0` for "the thread the last
//! `sched_switch` put on this CPU", `tid + 1` otherwise (see `codec`).

use crate::bytes::{ByteReader, ByteWriter, ReadFail};
use crate::ids::Tid;

/// Write `tid`, predicted from `current`.
#[inline(always)]
pub(crate) fn put_tid(w: &mut ByteWriter, current: u64, tid: Tid) {
    if tid.0 as u64 == current {
        w.varint(0);
    } else {
        w.varint(tid.0 as u64 + 1);
    }
}

/// Read a predicted thread id.
#[inline(always)]
pub(crate) fn read_tid(r: &mut ByteReader<'_>, current: u64) -> Result<Tid, ReadFail> {
    let t = match r.varint()? {
        0 => current,
        v => v - 1,
    };
    // One check for both a tid over 32 bits and "same as current" with no current
    // thread (the codec's `NO_CURRENT` does not fit either).
    u32::try_from(t).map(Tid).map_err(|_| ReadFail::BadVarint)
}
