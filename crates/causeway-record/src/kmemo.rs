//! The kernel's half of the unwind memo as the BPF side holds it: the entries
//! `causeway-kmemo` decides on ([`KernelMemo`]: which unwinds get one, what each
//! checks, their ids), written as the `ustack_memo` map's keys and values.

use crate::skel::types::{memo_key, memo_val};
pub use causeway_kmemo::{Checks, Entry, KernelMemo, Key, MEMO_WORDS, MemoOp};

// The decisions' limits are the BPF side's.
const _: () = assert!(MEMO_WORDS == crate::skel::types::abi_sizes::MEMO_WORDS.0 as usize);

const MEMO_CHECK_BP: u16 = crate::skel::types::memo_check::MEMO_CHECK_BP.0 as u16;
const MEMO_CHECK_EXTENT: u16 = crate::skel::types::memo_check::MEMO_CHECK_EXTENT.0 as u16;

/// The map key of an entry's start.
pub fn map_key((tgid, ip, sp): Key) -> memo_key {
    memo_key {
        tgid,
        ip,
        sp,
        ..memo_key::default()
    }
}

/// The map value of an entry: its id, the words by offset, what else it checks.
pub fn map_val(e: &Entry) -> memo_val {
    let c = &e.checks;
    let (len, flags) = c.extent.unwrap_or((0, 0));
    let mut v = memo_val {
        id: e.id,
        n: c.words.len() as u16,
        span: c.words.iter().map(|w| w.0 + 8).max().unwrap_or(0),
        len,
        flags,
        check: c.bp.map_or(0, |_| MEMO_CHECK_BP) | c.extent.map_or(0, |_| MEMO_CHECK_EXTENT),
        bp: c.bp.unwrap_or(0),
        ..memo_val::default()
    };
    for (i, &(off, val)) in c.words.iter().enumerate() {
        v.off[i] = off;
        v.val[i] = val;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::copy_flags;

    #[test]
    fn a_value_holds_the_words_by_offset_and_what_else_it_checks() {
        let entry = |bp, extent| Entry {
            id: 5,
            checks: Checks {
                bp,
                extent,
                words: vec![(8, 0x401234), (40, 0x401500)],
            },
        };
        let v = map_val(&entry(None, Some((256, copy_flags::TOP as u16))));
        assert_eq!((v.id, v.n, v.span), (5, 2, 48));
        // The unwind ran into the copy's end: its length and flags are checked too.
        assert_eq!(
            (v.check, v.len, v.flags),
            (MEMO_CHECK_EXTENT, 256, copy_flags::TOP as u16)
        );
        assert_eq!(
            (v.off[0], v.val[0], v.off[1], v.val[1]),
            (8, 0x401234, 40, 0x401500)
        );
        let v = map_val(&entry(Some(0x7ff0_0100), None));
        assert_eq!(
            (v.check, v.bp, v.len, v.flags),
            (MEMO_CHECK_BP, 0x7ff0_0100, 0, 0)
        );
        let k = map_key((7, 0x401000, 0x7ff0_0000));
        assert_eq!((k.tgid, k.ip, k.sp), (7, 0x401000, 0x7ff0_0000));
    }
}
