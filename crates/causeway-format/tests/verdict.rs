//! One verdict and honest salvage (issue 12): `salvage::check` and the reader agree on
//! every damaged trailer byte, and concatenated files are salvaged as separate traces
//! that never borrow each other's blocks.

mod common;

use causeway_format::salvage::{check, read_fully, write_salvaged_trace};
use causeway_format::{Header, TraceReader};

/// A small trace with its own file id (as the recorder gives every file).
fn trace_with_id(id: u64, n: usize, seed_name: &str) -> Vec<u8> {
    let built = common::build_multi_chunk(n, 32);
    let mut rd = TraceReader::from_bytes(&built.bytes).unwrap();
    let events: Vec<_> = rd.events().collect::<Result<_, _>>().unwrap();
    let mut h = Header::synthetic(4);
    h.file_id = id;
    h.command_line = vec![seed_name.to_string()];
    let mut w = causeway_format::TraceWriter::with_options(
        Vec::new(),
        &h,
        causeway_format::WriterOptions {
            chunk_events: 32,
            max_buffered_events: 96,
            zstd_level: 1,
        },
    )
    .unwrap();
    w.intern(seed_name);
    for e in &events {
        w.push(e).unwrap();
    }
    w.finish().unwrap()
}

/// Every salvaged trace of a file, read back: (command line, events, salvaged mark).
fn salvage_all(data: &[u8]) -> Vec<(Vec<String>, usize, Header)> {
    let rep = check(data);
    (0..rep.traces.len())
        .map(|t| {
            let (out, sum) = write_salvaged_trace(data, &rep, t, Vec::new()).unwrap();
            let mut rd = TraceReader::from_bytes(&out).expect("salvage opens");
            let n = rd.events().inspect(|e| assert!(e.is_ok(), "{e:?}")).count();
            assert_eq!(n as u64, sum.events);
            let h = rd.header().clone();
            (h.command_line.clone(), n, h)
        })
        .collect()
}

#[test]
fn every_trailer_byte_corrupted_gives_one_verdict() {
    let orig = trace_with_id(0x1111_2222_3333_4441, 600, "a");
    let len = orig.len();
    // The trailer, and the index block before it.
    for at in len - 120..len {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut d = orig.clone();
            d[at] ^= flip;
            let rep = check(&d);
            let reader_ok = read_fully(&d).is_ok();
            assert_eq!(
                rep.is_clean(),
                reader_ok,
                "byte {at} ^ {flip:#x}: check says clean={}, reader ok={reader_ok} ({:?} / {:?})",
                rep.is_clean(),
                rep.damage,
                rep.reader_error
            );
            // The scan on its own (without asking the reader) agrees too.
            let scan_only = causeway_format::salvage::scan(&d);
            assert_eq!(scan_only.is_clean(), reader_ok, "byte {at}: scan disagrees");
            if !reader_ok {
                // Whatever the reader refuses, salvage recovers every event chunk.
                let (out, sum) = write_salvaged_trace(&d, &rep, 0, Vec::new()).unwrap();
                assert!(read_fully(&out).is_ok(), "byte {at}: salvage does not read");
                assert_eq!(sum.events, 600, "byte {at}: events lost to trailer damage");
            }
        }
    }
}

#[test]
fn cat_a_b_salvages_two_traces_without_mixing() {
    let a = trace_with_id(0xaaaa_0000_0000_0a01, 500, "a");
    let b = trace_with_id(0xbbbb_0000_0000_0b01, 300, "b");
    let ab = [a.as_slice(), b.as_slice()].concat();
    assert!(
        TraceReader::from_bytes(&ab).is_err(),
        "reader refuses a concatenation"
    );
    let rep = check(&ab);
    assert!(!rep.is_clean());
    assert_eq!(rep.traces.len(), 2);
    let got = salvage_all(&ab);
    assert_eq!(got.len(), 2);
    assert_eq!(
        (got[0].0.as_slice(), got[0].1),
        (&["a".to_string()][..], 500)
    );
    assert_eq!(
        (got[1].0.as_slice(), got[1].1),
        (&["b".to_string()][..], 300)
    );
    // Each keeps its own string table: "a" is in a's, not in b's.
    let rep = check(&ab);
    let (out_b, _) = write_salvaged_trace(&ab, &rep, 1, Vec::new()).unwrap();
    let rd = TraceReader::from_bytes(&out_b).unwrap();
    assert!(rd.tables().strings.iter().any(|s| s == "b"));
    assert!(!rd.tables().strings.iter().any(|s| s == "a"));
}

#[test]
fn cat_a_a_salvages_two_copies_not_doubled_events() {
    let a = trace_with_id(0xaaaa_0000_0000_0a01, 400, "a");
    let aa = [a.as_slice(), a.as_slice()].concat();
    assert!(read_fully(&aa).is_err());
    let got = salvage_all(&aa);
    assert_eq!(got.len(), 2);
    assert!(
        got.iter().all(|g| g.1 == 400),
        "{:?}",
        got.iter().map(|g| g.1).collect::<Vec<_>>()
    );
}

#[test]
fn cat_a_a_with_the_second_header_damaged_keeps_each_block_once() {
    let a = trace_with_id(0xaaaa_0000_0000_0a01, 400, "a");
    let mut aa = [a.as_slice(), a.as_slice()].concat();
    // Break the second file header's magic: its blocks carry the same tag as the
    // first copy's, so only the duplicate check stops them doubling the events.
    aa[a.len()] ^= 0xff;
    let rep = check(&aa);
    assert!(!rep.is_clean());
    let got = salvage_all(&aa);
    assert_eq!(got[0].1, 400);
}

#[test]
fn interrupted_a_then_b_are_kept_apart_by_the_file_tag() {
    let a = trace_with_id(0xaaaa_0000_0000_0a01, 500, "a");
    let b = trace_with_id(0xbbbb_0000_0000_0b01, 300, "b");
    // a cut in its middle (a killed recording), then b with its header damaged.
    let mut cut_b = [&a[..a.len() / 2], b.as_slice()].concat();
    let hb = a.len() / 2;
    cut_b[hb] ^= 0xff;
    let rep = check(&cut_b);
    assert!(rep.traces.len() >= 2, "{:?}", rep.traces);
    let got = salvage_all(&cut_b);
    // The last trace is b's blocks under a synthetic header; a's part has fewer events.
    let last = got.last().unwrap();
    assert_eq!(last.1, 300);
    assert!(last.2.writer.contains("header lost"));
    assert!(got[0].1 < 500 && got[0].0 == vec!["a".to_string()]);
}

#[test]
fn salvage_of_a_damaged_complete_file_knows_the_original_length() {
    let a = trace_with_id(0xaaaa_0000_0000_0a01, 600, "a");
    let rd = TraceReader::from_bytes(&a).unwrap();
    let (first, last) = rd.time_range().unwrap();
    let chunk = rd.chunks()[3];
    let mut d = a.clone();
    d[(chunk.offset + chunk.len / 2) as usize] ^= 0x55;
    let rep = check(&d);
    let (out, sum) = write_salvaged_trace(&d, &rep, 0, Vec::new()).unwrap();
    assert_eq!(sum.events, 600 - chunk.count as u64);
    let mark = TraceReader::from_bytes(&out)
        .unwrap()
        .header()
        .salvaged
        .unwrap();
    assert_eq!(mark.original_ns, Some(last.0 - first.0));
    assert!(!mark.stats_lost);
    assert!(mark.covered_ns <= mark.span_ns);
    assert!(
        mark.summary().contains("statistics kept"),
        "{}",
        mark.summary()
    );
}
