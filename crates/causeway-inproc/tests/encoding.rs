//! Property tests of the slot encoding: the C trace point encoders (driven with chosen
//! clock values) against the Rust reference encoder and the decoder, on random call
//! trees with 32- and 64-bit ids, clocks whose low half wraps many times, resume
//! records, and ring buffers that wrap.

use causeway_inproc::calls::{balance, is_balanced};
use causeway_inproc::decode::{Record, decode, encode};
use causeway_inproc::ffi::{CwThread, cw_test_enter, cw_test_exit};
use proptest::prelude::*;

/// A random call sequence: (is_enter, id, clock step) triples made into well-formed
/// records with non-decreasing clocks.
fn calls() -> impl Strategy<Value = Vec<Record>> {
    let id = prop_oneof![4u64..1 << 32, (1u64 << 32)..u64::MAX, 0u64..4];
    // Steps: mostly small, sometimes past one or several 2^32 boundaries.
    let step = prop_oneof![
        8 => 0u64..1000,
        1 => (1u64 << 32)..(1u64 << 36),
        1 => (1u64 << 31)..(1u64 << 33),
    ];
    (
        any::<u64>().prop_map(|s| s >> 8),
        prop::collection::vec((any::<bool>(), id, step), 0..400),
    )
        .prop_map(|(start, ops)| {
            let mut t = start;
            let mut depth = 0;
            let mut out = Vec::new();
            for (enter, id, step) in ops {
                t += step;
                if enter || depth == 0 {
                    depth += 1;
                    out.push(Record::Enter { tsc: t, id });
                } else {
                    depth -= 1;
                    out.push(Record::Exit { tsc: t });
                }
            }
            out
        })
}

/// Run `recs` through the C encoders into a ring of `nslots`; returns the ring in
/// logical order (oldest first) and the thread's final high half.
fn c_encode(recs: &[Record], nslots: usize, start_hi: u32) -> (Vec<u64>, u32, u64) {
    let mut buf = vec![0u64; nslots];
    let base = buf.as_mut_ptr();
    let mut t = CwThread {
        cur: base,
        stop: 0,
        base,
        // SAFETY: one past the end of the same allocation.
        end: unsafe { base.add(nslots) },
        last_hi: start_hi,
        state: 1,
        wraps: 0,
        beat: 0,
        parked: std::ptr::null_mut(),
        rec: std::ptr::null_mut(),
        // SAFETY: as `end`.
        ring_end: unsafe { base.add(nslots) },
    };
    for r in recs {
        // SAFETY: t describes buf, which outlives the calls.
        unsafe {
            match *r {
                Record::Enter { tsc, id } => cw_test_enter(&mut t, id as usize, tsc),
                Record::Exit { tsc } => cw_test_exit(&mut t, tsc),
                Record::Resume { .. } => unreachable!("the C side writes resumes itself"),
            }
        }
    }
    // SAFETY: cur points into buf.
    let pos = unsafe { t.cur.offset_from(base) } as usize;
    let ring = if t.wraps == 0 {
        buf[..pos].to_vec()
    } else {
        [&buf[pos..], &buf[..pos]].concat()
    };
    (ring, t.last_hi, t.wraps)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn c_encoder_matches_reference_and_decodes_back(recs in calls()) {
        let (slots, hi) = encode(&recs, 0);
        let (c_slots, c_hi, wraps) = c_encode(&recs, slots.len().max(1) + 8, 0);
        prop_assert_eq!(wraps, 0);
        prop_assert_eq!(&c_slots, &slots);
        prop_assert_eq!(c_hi, hi);
        prop_assert_eq!(decode(&slots, hi).records, recs);
    }

    #[test]
    fn a_wrapped_ring_decodes_to_the_newest_records(recs in calls(), nslots in 3usize..64) {
        let (full, hi) = encode(&recs, 0);
        let (ring, c_hi, _) = c_encode(&recs, nslots, 0);
        let keep = full.len().min(nslots);
        prop_assert_eq!(&ring[..], &full[full.len() - keep..]);
        prop_assert_eq!(c_hi, hi);
        let d = decode(&ring, c_hi);
        // What survives is exactly a suffix of what was recorded.
        prop_assert!(d.records.len() <= recs.len());
        prop_assert_eq!(&d.records[..], &recs[recs.len() - d.records.len()..]);
        prop_assert!(d.dropped_slots <= 1);
        // And it balances into properly nested calls.
        let end = recs.last().map_or(0, Record::tsc);
        prop_assert!(is_balanced(&balance(&d.records, end).events));
    }

    #[test]
    fn resumes_split_stretches_that_balance(recs in calls(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..5)) {
        let mut with = recs.clone();
        for c in cuts {
            if with.is_empty() { break; }
            let i = c.index(with.len());
            let tsc = with[i].tsc();
            with.insert(i, Record::Resume { tsc });
        }
        let (slots, hi) = encode(&with, 0);
        let d = decode(&slots, hi);
        prop_assert_eq!(&d.records, &with);
        let end = with.last().map_or(0, Record::tsc);
        let b = balance(&d.records, end);
        prop_assert!(is_balanced(&b.events));
    }
}

#[test]
fn layouts_agree_with_the_c_compiler() {
    use causeway_inproc::ffi::{CwDumpReq, CwSnap, cw_test_layout};
    use std::mem::{offset_of, size_of};
    let mut v = [0u64; 16];
    // SAFETY: writes at most 16 values.
    let n = unsafe { cw_test_layout(v.as_mut_ptr(), 16) } as usize;
    let rust = [
        size_of::<CwSnap>(),
        offset_of!(CwSnap, slots),
        offset_of!(CwSnap, end_tsc),
        offset_of!(CwSnap, last_hi),
        size_of::<CwDumpReq>(),
        offset_of!(CwDumpReq, ref_tsc),
        offset_of!(CwDumpReq, snaps),
        offset_of!(CwDumpReq, kernel_dump),
        size_of::<CwThread>(),
        offset_of!(CwThread, last_hi),
        offset_of!(CwThread, parked),
        offset_of!(CwThread, ring_end),
    ];
    assert_eq!(n, rust.len());
    let rust: Vec<u64> = rust.iter().map(|&x| x as u64).collect();
    assert_eq!(&v[..n], &rust[..]);
}
