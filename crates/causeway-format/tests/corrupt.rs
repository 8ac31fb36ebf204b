//! Damaged traces: truncation at every offset and bit flips, read and salvaged.
//!
//! For every damaged file the reader must end in `Ok` or a clear error (Truncated and
//! Corrupt name the byte offset), never panic, and never return different events
//! without an error; salvage must produce a trace the reader opens and reads to the
//! end, holding a subset of the original events and every chunk the damage spared.

mod common;

use causeway_format::block::BlockKind;
use causeway_format::salvage::{scan, write_salvaged};
use causeway_format::{Event, FormatError, TraceReader};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// An undamaged trace, its events, and where its event chunks are.
struct Original {
    bytes: Vec<u8>,
    events: Vec<Event>,
    /// Byte ranges of the event chunks.
    chunks: Vec<(u64, u64)>,
}

fn original(built: common::Built) -> Original {
    let rd = TraceReader::from_bytes(&built.bytes).unwrap();
    let chunks = rd
        .index()
        .iter()
        .filter(|e| e.kind == BlockKind::Events)
        .map(|e| (e.offset, e.offset + e.len))
        .collect();
    Original {
        bytes: built.bytes,
        events: built.events,
        chunks,
    }
}

fn check_error(e: &FormatError, what: &str) {
    let text = e.to_string();
    assert!(!text.is_empty());
    if matches!(
        e,
        FormatError::Truncated { .. } | FormatError::Corrupt { .. }
    ) {
        assert!(
            text.contains("offset"),
            "{what}: error without offset: {text}"
        );
    }
}

/// Read a damaged file to the end. Returns the events if everything read cleanly.
fn read(bytes: &[u8], what: &str) -> Option<Vec<Event>> {
    let mut rd = match TraceReader::from_bytes(bytes) {
        Ok(rd) => rd,
        Err(e) => {
            check_error(&e, what);
            return None;
        }
    };
    let mut out = Vec::new();
    for e in rd.events() {
        match e {
            Ok(e) => out.push(e),
            Err(e) => {
                check_error(&e, what);
                return None;
            }
        }
    }
    Some(out)
}

/// True if `sub` is a subsequence of `all`.
fn is_subsequence(sub: &[Event], all: &[Event]) -> bool {
    let mut it = all.iter();
    sub.iter().all(|s| it.any(|a| a == s))
}

/// Check one damaged file; `spared` is the number of event chunks the damage left whole.
fn check_damaged(orig: &Original, damaged: &[u8], spared: usize, what: &str) {
    let r = catch_unwind(AssertUnwindSafe(|| {
        if let Some(events) = read(damaged, what) {
            // Damage the checksums miss (padding, the minor version) changes nothing.
            assert_eq!(
                events, orig.events,
                "{what}: read different events without an error"
            );
        }
        let rep = scan(damaged);
        let (out, sum) = write_salvaged(damaged, &rep, Vec::new())
            .unwrap_or_else(|e| panic!("{what}: salvage failed: {e}"));
        let mut rd = TraceReader::from_bytes(&out)
            .unwrap_or_else(|e| panic!("{what}: salvaged trace does not open: {e}"));
        let events: Vec<Event> = rd
            .events()
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{what}: salvaged trace does not read: {e}"));
        assert!(
            is_subsequence(&events, &orig.events),
            "{what}: salvage invented events"
        );
        assert_eq!(events.len() as u64, sum.events, "{what}");
        assert_eq!(sum.chunks, spared, "{what}: salvage lost intact chunks");
        let kept: usize = orig
            .chunks
            .iter()
            .filter(|c| rep.blocks.iter().any(|b| b.offset == c.0))
            .count();
        assert_eq!(kept, spared, "{what}");
    }));
    if let Err(p) = r {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        panic!("{what}: panicked: {msg}");
    }
}

fn truncate_at(orig: &Original, offsets: impl Iterator<Item = usize>) -> usize {
    let mut n = 0;
    for at in offsets {
        let spared = orig.chunks.iter().filter(|c| c.1 <= at as u64).count();
        check_damaged(
            orig,
            &orig.bytes[..at],
            spared,
            &format!("truncated at {at}"),
        );
        n += 1;
    }
    n
}

fn flip_at(orig: &Original, offsets: impl Iterator<Item = usize>) -> usize {
    let mut n = 0;
    for at in offsets {
        let mut d = orig.bytes.clone();
        d[at] ^= 1 << (at % 8);
        let hit = orig
            .chunks
            .iter()
            .any(|c| c.0 <= at as u64 && (at as u64) < c.1);
        let spared = orig.chunks.len() - hit as usize;
        check_damaged(orig, &d, spared, &format!("bit {} flipped at {at}", at % 8));
        n += 1;
    }
    n
}

#[test]
fn golden_truncated_at_every_offset() {
    let orig = original(common::build_golden());
    assert_eq!(truncate_at(&orig, 0..orig.bytes.len()), orig.bytes.len());
}

#[test]
fn golden_with_a_bit_flipped_at_every_offset() {
    let orig = original(common::build_golden());
    flip_at(&orig, 0..orig.bytes.len());
}

#[test]
fn golden_truncated_mid_last_chunk_keeps_all_earlier_chunks() {
    let orig = original(common::build_golden());
    let &(start, end) = orig.chunks.last().unwrap();
    let at = ((start + end) / 2) as usize;
    let damaged = &orig.bytes[..at];
    let err = TraceReader::from_bytes(damaged).err().expect("no footer");
    assert!(matches!(err, FormatError::MissingFooter { .. }), "{err}");
    assert!(err.to_string().contains("salvage"), "{err}");
    let rep = scan(damaged);
    assert!(!rep.is_clean());
    assert_eq!(rep.damage.len(), 1);
    assert_eq!(rep.damage[0].offset, start);
    let (out, sum) = write_salvaged(damaged, &rep, Vec::new()).unwrap();
    assert_eq!(sum.chunks, orig.chunks.len() - 1);
    let rd = TraceReader::from_bytes(&out).unwrap();
    // The tables written before the last chunk survive.
    assert!(!rd.tables().stacks.is_empty());
    let mark = rd.header().salvaged.expect("salvaged trace is marked");
    assert!(mark.stats_lost && mark.original_ns.is_none() && mark.covered_ns > 0);
    let unmarked = causeway_format::Header {
        salvaged: None,
        ..rd.header().clone()
    };
    assert_eq!(unmarked, common::golden_header());
}

#[test]
fn multi_chunk_truncated_at_many_offsets() {
    let orig = original(common::build_multi_chunk(1_500, 48));
    let len = orig.bytes.len();
    // Every block edge and its neighbours, and a stride through everything.
    let mut offsets: Vec<usize> = orig
        .chunks
        .iter()
        .flat_map(|&(s, e)| [s, s + 1, s + 43, s + 44, s + 45, e - 1, e, e + 1])
        .map(|o| o as usize)
        .chain((0..len).step_by(53))
        .chain(len.saturating_sub(30)..len)
        .filter(|&o| o <= len)
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    assert!(truncate_at(&orig, offsets.into_iter()) > 250);
}

#[test]
fn multi_chunk_with_bits_flipped_at_many_offsets() {
    let orig = original(common::build_multi_chunk(1_500, 48));
    let len = orig.bytes.len();
    let offsets = (0..len)
        .step_by(29)
        .chain(
            orig.chunks
                .iter()
                .flat_map(|&(s, _)| s as usize..s as usize + 44),
        )
        .chain(len - 24..len)
        .filter(|&o| o < len);
    assert!(flip_at(&orig, offsets) > 250);
}

#[test]
fn garbage_and_empty_input_are_clear_errors() {
    for bytes in [
        &b""[..],
        b"CAUSE",
        b"CAUSEWAY",
        b"not a trace at all, just text",
        &[0u8; 100],
    ] {
        let err = TraceReader::from_bytes(bytes).err().expect("refused");
        check_error(&err, "garbage");
        let rep = scan(bytes);
        assert!(!rep.is_clean());
        let (out, sum) = write_salvaged(bytes, &rep, Vec::new()).unwrap();
        assert_eq!(sum.chunks, 0);
        let mut rd = TraceReader::from_bytes(&out).unwrap();
        assert_eq!(rd.events().count(), 0);
        assert!(rd.header().writer.contains("salvaged"));
    }
    let err = TraceReader::from_bytes(b"garbage!").err().unwrap();
    assert!(matches!(err, FormatError::NotATrace), "{err}");
}
