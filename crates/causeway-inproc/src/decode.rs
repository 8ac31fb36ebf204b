//! Decoding a thread's slots (Hubble §5.1, newest first) into timed records.
//!
//! The low half of a slot says what it is: 0 an exit, 1 the second half of a wide entry
//! (the slot before holds the id), 2 a sync and 3 a resume (the slot before holds the
//! full clock; the high half holds the clock's previous high half), any other value a
//! one-slot entry whose id it is. Decoding from the newest slot is unambiguous; the
//! oldest slot may be the first half of a pair whose second half was overwritten, and
//! is then dropped. Clock high halves come from the sync records, so a thread asleep for
//! hours between two trace points still gets exact times.

/// Low-half tags of the encoding (`CW_TAG_*` in `causeway.h`).
pub mod tag {
    /// Exit.
    pub const EXIT: u32 = 0;
    /// Second slot of an entry whose id is in the slot before.
    pub const WIDE: u32 = 1;
    /// Clock sync: full clock in the slot before.
    pub const SYNC: u32 = 2;
    /// Tracing (re)started: full clock in the slot before.
    pub const RESUME: u32 = 3;
    /// Smallest id an entry stores in one slot.
    pub const FIRST_ID: u64 = 4;
}

/// One decoded record with its full clock value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// A call to `id` began.
    Enter {
        /// Clock.
        tsc: u64,
        /// Function address or id.
        id: u64,
    },
    /// The innermost open call returned.
    Exit {
        /// Clock.
        tsc: u64,
    },
    /// Tracing started again after a pause: what was open before is unknown after.
    Resume {
        /// Clock.
        tsc: u64,
    },
}

impl Record {
    /// The record's clock value.
    pub fn tsc(&self) -> u64 {
        match *self {
            Record::Enter { tsc, .. } | Record::Exit { tsc } | Record::Resume { tsc } => tsc,
        }
    }
}

/// A decoded buffer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decoded {
    /// Records, oldest first. Syncs are consumed (they only carry the clock).
    pub records: Vec<Record>,
    /// Slots at the old end that could not be decoded (half of a pair).
    pub dropped_slots: u64,
}

/// Decode `slots` (oldest first); `last_hi` is the high half of the clock of the newest
/// record, as the thread's state held it when the copy was taken.
pub fn decode(slots: &[u64], last_hi: u32) -> Decoded {
    let mut out = Vec::with_capacity(slots.len());
    let mut hi = u64::from(last_hi);
    let mut dropped = 0;
    let mut i = slots.len();
    while i > 0 {
        let s = slots[i - 1];
        let low = s as u32;
        let top = s >> 32;
        match low {
            tag::EXIT => {
                out.push(Record::Exit {
                    tsc: (hi << 32) | top,
                });
                i -= 1;
            }
            tag::WIDE | tag::SYNC | tag::RESUME => {
                if i < 2 {
                    dropped += 1;
                    break;
                }
                let prev = slots[i - 2];
                match low {
                    tag::WIDE => out.push(Record::Enter {
                        tsc: (hi << 32) | top,
                        id: prev,
                    }),
                    tag::SYNC => hi = top,
                    _ => {
                        out.push(Record::Resume { tsc: prev });
                        hi = top;
                    }
                }
                i -= 2;
            }
            id => {
                out.push(Record::Enter {
                    tsc: (hi << 32) | top,
                    id: u64::from(id),
                });
                i -= 1;
            }
        }
    }
    out.reverse();
    Decoded {
        records: out,
        dropped_slots: dropped,
    }
}

/// Encode records the way the C trace points do (a reference for tests and tools:
/// the C encoder is checked against it). `last_hi` starts at `start_hi`; returns the
/// slots and the final `last_hi`.
pub fn encode(records: &[Record], start_hi: u32) -> (Vec<u64>, u32) {
    let mut out = Vec::with_capacity(records.len() * 2);
    let mut last_hi = start_hi;
    for r in records {
        let ts = r.tsc();
        if let Record::Resume { tsc } = *r {
            out.push(tsc);
            out.push((u64::from(last_hi) << 32) | u64::from(tag::RESUME));
            last_hi = (tsc >> 32) as u32;
            continue;
        }
        if (ts >> 32) as u32 != last_hi {
            out.push(ts);
            out.push((u64::from(last_hi) << 32) | u64::from(tag::SYNC));
            last_hi = (ts >> 32) as u32;
        }
        match *r {
            Record::Enter { id, .. } if (tag::FIRST_ID..1 << 32).contains(&id) => {
                out.push((ts << 32) | id)
            }
            Record::Enter { id, .. } => {
                out.push(id);
                out.push((ts << 32) | u64::from(tag::WIDE));
            }
            Record::Exit { .. } => out.push(ts << 32),
            Record::Resume { .. } => {}
        }
    }
    (out, last_hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_and_two_slot_entries_and_exits_round_trip() {
        let recs = vec![
            Record::Resume { tsc: 5 },
            Record::Enter {
                tsc: 10,
                id: 0x1234,
            },
            Record::Enter {
                tsc: 11,
                id: 0x5555_0000_1000,
            },
            Record::Exit { tsc: 12 },
            Record::Enter { tsc: 13, id: 2 },
            Record::Exit { tsc: 14 },
            Record::Exit { tsc: 15 },
        ];
        let (slots, hi) = encode(&recs, 0);
        assert_eq!(decode(&slots, hi).records, recs);
    }

    #[test]
    fn sync_records_give_exact_high_halves_across_long_sleeps() {
        let recs = vec![
            Record::Enter { tsc: 7, id: 100 },
            Record::Exit { tsc: (5 << 32) | 3 },
            Record::Enter {
                tsc: (9 << 32) | 1,
                id: 100,
            },
        ];
        let (slots, hi) = encode(&recs, 0);
        assert_eq!(hi, 9);
        assert_eq!(decode(&slots, hi).records, recs);
    }

    #[test]
    fn an_orphaned_second_half_at_the_old_end_is_dropped() {
        let recs = vec![
            Record::Enter {
                tsc: 1,
                id: 1 << 40,
            },
            Record::Exit { tsc: 2 },
        ];
        let (slots, hi) = encode(&recs, 0);
        let d = decode(&slots[1..], hi);
        assert_eq!(d.records, vec![Record::Exit { tsc: 2 }]);
        assert_eq!(d.dropped_slots, 1);
    }
}
