//! Fuzz the trace reader and salvage with arbitrary bytes.
//!
//! The contract (DESIGN.md, STYLE.md §6): no input makes the reader or salvage panic or
//! exhaust memory; every failure is a [`FormatError`] whose text says where
//! (Truncated and Corrupt name the byte offset); and what salvage writes is a trace the
//! reader opens and reads to the end.
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
    read(bytes);
    let rep = salvage::scan(bytes);
    let (out, sum) = match salvage::write_salvaged(bytes, &rep, Vec::new()) {
        Ok(x) => x,
        Err(e) => panic!("write_salvaged to memory failed: {e}"),
    };
    // Salvage keeps only blocks it verified, so its output must read cleanly.
    let mut rd = match TraceReader::from_bytes(&out) {
        Ok(rd) => rd,
        Err(e) => panic!("salvaged trace does not open: {e}"),
    };
    let mut n = 0u64;
    for e in rd.events() {
        if let Err(e) = e {
            panic!("salvaged trace fails to read: {e}");
        }
        n += 1;
    }
    assert_eq!(n + rd.skipped_unknown_events(), sum.events);
}

/// Open and read everything; failures must be errors that say where.
fn read(bytes: &[u8]) {
    let mut rd = match TraceReader::from_bytes(bytes) {
        Ok(rd) => rd,
        Err(e) => return check_error(&e),
    };
    let _ = rd.tables();
    for e in rd.events() {
        if let Err(e) = e {
            return check_error(&e);
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
                Err(e) => return check_error(&e),
            }
        }
    }
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
