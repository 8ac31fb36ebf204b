//! Fuzz the trace reader and salvage with arbitrary bytes.
//!
//! The contract (DESIGN.md, STYLE.md §6): no input makes the reader or salvage panic or
//! exhaust memory; every failure is a [`FormatError`] whose text says where
//! (Truncated and Corrupt name the byte offset); `check` and the reader give one
//! verdict (the file is intact exactly when the reader reads it to the end); and what
//! salvage writes, for every trace found in the input, is a marked trace the reader
//! opens and reads to the end and `check` calls intact.
//!
//! Every block carries a CRC32, so random bytes almost never get past the checksums
//! to the decoders behind them. When the first input byte is odd, the harness
//! therefore recomputes every checksum of the rest before reading it (see
//! [`fix_checksums`]), which lets the fuzzer explore the event, table, index and
//! statistics decoders too. This is the one place outside `causeway-format` that
//! touches the byte layout, and only to patch checksums.

#![no_main]

use causeway_format::salvage;
use causeway_format::{FormatError, TimeRange, Timestamp, TraceReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        check(data);
        return;
    };
    if mode & 1 == 1 {
        check(&fix_checksums(rest));
    } else {
        check(rest);
    }
});

fn check(bytes: &[u8]) {
    let reader_ok = read(bytes);
    // One verdict: the scan alone (which walks every byte without the index) calls the
    // file intact exactly when the reader reads it to the end; `salvage::check`, which
    // `causeway check` runs, adds the reader's own verdict on top.
    let scanned = salvage::scan(bytes);
    assert_eq!(
        scanned.is_clean(),
        reader_ok,
        "scan says clean={} but the reader says ok={reader_ok}: damage {:?}",
        scanned.is_clean(),
        scanned.damage
    );
    let rep = salvage::check(bytes);
    assert_eq!(rep.is_clean(), reader_ok);
    // Every trace found (concatenated files hold several) salvages to a trace that
    // reads back in full, with as many events as salvage says it kept.
    for t in 0..rep.traces.len() {
        let (out, sum) = match salvage::write_salvaged_trace(bytes, &rep, t, Vec::new()) {
            Ok(x) => x,
            Err(e) => panic!("write_salvaged to memory failed: {e}"),
        };
        let mut rd = match TraceReader::from_bytes(&out) {
            Ok(rd) => rd,
            Err(e) => panic!("salvaged trace does not open: {e}"),
        };
        assert!(rd.header().salvaged.is_some(), "salvaged trace is not marked");
        let mut n = 0u64;
        for e in rd.events() {
            if let Err(e) = e {
                panic!("salvaged trace fails to read: {e}");
            }
            n += 1;
        }
        assert_eq!(n + rd.skipped_unknown_events(), sum.events);
        // And check on the salvaged trace calls it intact.
        assert!(salvage::check(&out).is_clean(), "check rejects a salvaged trace");
    }
}

/// Open and read everything; failures must be errors that say where. True if the whole
/// trace read without an error.
fn read(bytes: &[u8]) -> bool {
    let mut rd = match TraceReader::from_bytes(bytes) {
        Ok(rd) => rd,
        Err(e) => {
            check_error(&e);
            return false;
        }
    };
    let _ = rd.tables();
    for e in rd.events() {
        if let Err(e) = e {
            check_error(&e);
            return false;
        }
    }
    if let Some((first, last)) = rd.time_range() {
        let mid = Timestamp(first.0 / 2 + last.0 / 2);
        let range = TimeRange {
            start: mid,
            end: last,
        };
        for e in rd.events_in(range) {
            match e {
                Ok(e) => assert!(range.contains(e.ts), "event outside the asked range"),
                Err(e) => {
                    check_error(&e);
                    return false;
                }
            }
        }
    }
    true
}

fn check_error(e: &FormatError) {
    let text = e.to_string();
    if matches!(
        e,
        FormatError::Truncated { .. } | FormatError::Corrupt { .. }
    ) {
        assert!(text.contains("offset"), "error without offset: {text}");
    }
}

/// Recompute the header, block and trailer checksums of a would-be trace, walking the
/// blocks by their stated lengths from the end of the header.
fn fix_checksums(data: &[u8]) -> Vec<u8> {
    let mut d = data.to_vec();
    if d.len() < 20 {
        return d;
    }
    let json_len = u32::from_le_bytes([d[12], d[13], d[14], d[15]]) as usize;
    let mut pos = 20usize.saturating_add(json_len);
    if pos <= d.len() {
        let crc = crc32(&d[20..pos]);
        d[16..20].copy_from_slice(&crc.to_le_bytes());
    }
    while pos.saturating_add(44) <= d.len() && &d[pos..pos + 4] == b"CWBK" {
        let payload_len = u32::from_le_bytes([d[pos + 20], d[pos + 21], d[pos + 22], d[pos + 23]]);
        let end = pos + 44 + payload_len as usize;
        if end > d.len() {
            break;
        }
        let mut h = crc32fast::Hasher::new();
        h.update(&d[pos..pos + 40]);
        h.update(&d[pos + 44..end]);
        let crc = h.finalize();
        d[pos + 40..pos + 44].copy_from_slice(&crc.to_le_bytes());
        pos = end;
    }
    if d.len() >= 24 {
        let t = d.len() - 24;
        let crc = crc32(&d[t..t + 16]);
        d[t + 16..t + 20].copy_from_slice(&crc.to_le_bytes());
    }
    d
}

fn crc32(b: &[u8]) -> u32 {
    crc32fast::hash(b)
}
