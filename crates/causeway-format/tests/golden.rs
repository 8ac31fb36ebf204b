//! The golden trace: a small file committed to the repository that pins the format.
//!
//! `tests/data/golden-v1.9.cwt` must be rebuilt byte for byte by [`common::build_golden`]
//! and read back as the expected events. If either fails after a change to the crate,
//! the change altered the bytes on disk: make it deliberate (bump `VERSION_MINOR` for an
//! addition older readers skip, `VERSION_MAJOR` otherwise, update `docs/format.md`) and
//! regenerate the file with `CAUSEWAY_BLESS=1 cargo test -p causeway-format --test golden`
//! (keep the old file as `golden-v<old>.cwt` so readers are still tested against it).

mod common;

use causeway_format::block::BlockKind;
use causeway_format::{EventKindTag, TraceReader, VERSION_MAJOR, VERSION_MINOR};
use std::path::PathBuf;

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-v1.9.cwt")
}

/// The 1.8 golden file (before the pressure and reclaim rows).
fn golden_v1_8_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-v1.8.cwt")
}

/// The golden file's content as 1.8 files hold it (no pressure or reclaim rows).
fn before_1_9(mut built: common::Built) -> common::Built {
    built.tables.cgroups.retain(|r| {
        !matches!(
            r,
            causeway_format::CgroupRow::Pressure(_) | causeway_format::CgroupRow::Reclaim { .. }
        )
    });
    built
}

/// A 1.8 file still reads as the same header, tables and events (less what 1.9 added).
#[test]
fn golden_v1_8_still_reads() {
    let built = before_1_9(common::build_golden());
    let bytes = std::fs::read(golden_v1_8_path()).expect("1.8 golden file is committed");
    let mut rd = TraceReader::from_bytes(&bytes).expect("1.8 golden opens");
    assert_eq!(rd.minor_version(), 8);
    assert_eq!(rd.header(), &common::golden_header());
    assert_eq!(rd.tables(), &built.tables);
    let events: Vec<_> = rd.events().collect::<Result<_, _>>().expect("events read");
    assert_eq!(events, built.events);
}

/// The 1.7 golden file (before the affinity and idle rows).
fn golden_v1_7_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-v1.7.cwt")
}

/// The golden file's content as 1.7 files hold it (no affinity or idle rows).
fn before_1_8(built: common::Built) -> common::Built {
    let mut built = before_1_9(built);
    built.tables.cgroups.retain(|r| {
        !matches!(
            r,
            causeway_format::CgroupRow::Affinity { .. } | causeway_format::CgroupRow::Idle { .. }
        )
    });
    built
}

/// A 1.7 file still reads as the same header, tables and events (less what 1.8 added).
#[test]
fn golden_v1_7_still_reads() {
    let built = before_1_8(common::build_golden());
    let bytes = std::fs::read(golden_v1_7_path()).expect("1.7 golden file is committed");
    let mut rd = TraceReader::from_bytes(&bytes).expect("1.7 golden opens");
    assert_eq!(rd.minor_version(), 7);
    assert_eq!(rd.header(), &common::golden_header());
    assert_eq!(rd.tables(), &built.tables);
    let events: Vec<_> = rd.events().collect::<Result<_, _>>().expect("events read");
    assert_eq!(events, built.events);
}

/// The 1.6 golden file (before the cgroup table).
fn golden_v1_6_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-v1.6.cwt")
}

/// The golden file's content as files before 1.7 hold it (no cgroup rows).
fn before_1_7(mut built: common::Built) -> common::Built {
    built.tables.cgroups.clear();
    built
}

/// A 1.6 file still reads as the same header, tables and events (less what 1.7 added).
#[test]
fn golden_v1_6_still_reads() {
    let built = before_1_7(common::build_golden());
    let bytes = std::fs::read(golden_v1_6_path()).expect("1.6 golden file is committed");
    let mut rd = TraceReader::from_bytes(&bytes).expect("1.6 golden opens");
    assert_eq!(rd.minor_version(), 6);
    assert_eq!(rd.header(), &common::golden_header());
    assert_eq!(rd.tables(), &built.tables);
    let events: Vec<_> = rd.events().collect::<Result<_, _>>().expect("events read");
    assert_eq!(events, built.events);
}

/// The 1.5 golden file (before waker-stack sampling).
fn golden_v1_5_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-v1.5.cwt")
}

/// The golden file's content as files before 1.6 hold it (no sampled waker stacks).
fn before_1_6(built: common::Built) -> common::Built {
    let mut built = before_1_7(built);
    built.events.retain(|e| {
        !matches!(
            e.kind,
            causeway_format::EventKind::Stack {
                kind: causeway_format::StackKind::WakerSample,
                ..
            }
        )
    });
    built.stats.events = built.events.len() as u64;
    built
}

/// A 1.5 file still reads as the same header, tables and events (less what 1.6 added).
#[test]
fn golden_v1_5_still_reads() {
    let built = before_1_6(common::build_golden());
    let bytes = std::fs::read(golden_v1_5_path()).expect("1.5 golden file is committed");
    let mut rd = TraceReader::from_bytes(&bytes).expect("1.5 golden opens");
    assert_eq!(rd.minor_version(), 5);
    assert_eq!(rd.header(), &common::golden_header_v1_5());
    assert_eq!(rd.tables(), &built.tables);
    let events: Vec<_> = rd.events().collect::<Result<_, _>>().expect("events read");
    assert_eq!(events, built.events);
}

/// The 1.4 golden file (before the goroutine event kinds).
fn golden_v1_4_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-v1.4.cwt")
}

/// The golden file's content as files before 1.5 hold it (no goroutine kinds).
fn before_1_5(built: common::Built) -> common::Built {
    let mut built = before_1_6(built);
    let added = [
        EventKindTag::GoRun,
        EventKindTag::GoPark,
        EventKindTag::GoNetWait,
        EventKindTag::GoReady,
    ];
    built.events.retain(|e| !added.contains(&e.kind.tag()));
    built.stats.events = built.events.len() as u64;
    built
}

/// A 1.4 file still reads as the same header, tables and events (less what 1.5 added).
#[test]
fn golden_v1_4_still_reads() {
    let built = before_1_5(common::build_golden());
    let bytes = std::fs::read(golden_v1_4_path()).expect("1.4 golden file is committed");
    let mut rd = TraceReader::from_bytes(&bytes).expect("1.4 golden opens");
    assert_eq!(rd.minor_version(), 4);
    assert_eq!(rd.header(), &common::golden_header_v1_5());
    assert_eq!(rd.tables(), &built.tables);
    let events: Vec<_> = rd.events().collect::<Result<_, _>>().expect("events read");
    assert_eq!(events, built.events);
}

/// The 1.3 golden file (before the socket event kinds and the flow table).
fn golden_v1_3_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-v1.3.cwt")
}

/// The golden file's content as files before 1.4 hold it (no socket kinds, no flows).
fn before_1_4(built: common::Built) -> common::Built {
    let mut built = before_1_5(built);
    let added = [EventKindTag::SockSend, EventKindTag::SockReady];
    built.events.retain(|e| !added.contains(&e.kind.tag()));
    built.tables.flows.clear();
    built.stats.events = built.events.len() as u64;
    built
}

/// A 1.3 file still reads as the same header, tables and events (less what 1.4 added).
#[test]
fn golden_v1_3_still_reads() {
    let built = before_1_4(common::build_golden());
    let bytes = std::fs::read(golden_v1_3_path()).expect("1.3 golden file is committed");
    let mut rd = TraceReader::from_bytes(&bytes).expect("1.3 golden opens");
    assert_eq!(rd.minor_version(), 3);
    assert_eq!(rd.header(), &common::golden_header_v1_5());
    assert_eq!(rd.tables(), &built.tables);
    let events: Vec<_> = rd.events().collect::<Result<_, _>>().expect("events read");
    assert_eq!(events, built.events);
}

/// The 1.2 golden file (before the signal and timer event kinds).
fn golden_v1_2_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-v1.2.cwt")
}

/// The golden file's content as files before 1.3 hold it (without the signal and
/// timer kinds).
fn before_1_3(built: common::Built) -> common::Built {
    let mut built = before_1_4(built);
    let added = [
        EventKindTag::SignalGenerate,
        EventKindTag::SignalDeliver,
        EventKindTag::TimerArm,
        EventKindTag::TimerExpire,
    ];
    built.events.retain(|e| !added.contains(&e.kind.tag()));
    built
}

/// A 1.2 file still reads as the same header, tables and events (less the kinds 1.3
/// added).
#[test]
fn golden_v1_2_still_reads() {
    let built = before_1_3(common::build_golden());
    let bytes = std::fs::read(golden_v1_2_path()).expect("1.2 golden file is committed");
    let mut rd = TraceReader::from_bytes(&bytes).expect("1.2 golden opens");
    assert_eq!(rd.minor_version(), 2);
    assert_eq!(rd.header(), &common::golden_header_v1_5());
    assert_eq!(rd.tables(), &built.tables);
    let events: Vec<_> = rd.events().collect::<Result<_, _>>().expect("events read");
    assert_eq!(events, built.events);
}

/// The 1.1 golden file (before files had an id and blocks a file tag).
fn golden_v1_1_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-v1.1.cwt")
}

/// The previous golden file (format 1.0, before frames had source lines).
fn golden_v1_0_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-v1.0.cwt")
}

/// A 1.0 file still reads: same header and events; its frames have no source
/// information, which 1.1 readers report as empty.
#[test]
fn golden_v1_0_still_reads() {
    let built = before_1_3(common::build_golden());
    let bytes = std::fs::read(golden_v1_0_path()).expect("1.0 golden file is committed");
    let mut rd = TraceReader::from_bytes(&bytes).expect("1.0 golden opens");
    assert_eq!(rd.minor_version(), 0);
    assert_eq!(rd.header(), &common::golden_header_v1_1());
    let frames = &rd.tables().frames;
    assert!(!frames.is_empty());
    assert!(
        frames
            .iter()
            .all(|f| f.file.0 == 0 && f.line == 0 && f.inlined.is_empty())
    );
    let events: Vec<_> = rd.events().collect::<Result<_, _>>().expect("events read");
    assert_eq!(events, built.events);
}

/// A 1.1 file still reads: same events and tables; it has no file id, and its blocks'
/// tag (reserved bytes then) is 0.
#[test]
fn golden_v1_1_still_reads() {
    let built = before_1_3(common::build_golden());
    let bytes = std::fs::read(golden_v1_1_path()).expect("1.1 golden file is committed");
    let mut rd = TraceReader::from_bytes(&bytes).expect("1.1 golden opens");
    assert_eq!(rd.minor_version(), 1);
    assert_eq!(rd.header(), &common::golden_header_v1_1());
    assert_eq!(rd.tables(), &built.tables);
    let events: Vec<_> = rd.events().collect::<Result<_, _>>().expect("events read");
    assert_eq!(events, built.events);
    let rep = causeway_format::salvage::check(&bytes);
    assert!(rep.is_clean(), "{:?}", rep.damage);
}

#[test]
fn golden_file_is_rebuilt_byte_for_byte() {
    let built = common::build_golden();
    let path = golden_path();
    if std::env::var_os("CAUSEWAY_BLESS").is_some() {
        std::fs::write(&path, &built.bytes).expect("write golden");
        eprintln!("wrote {}", path.display());
        return;
    }
    let committed = std::fs::read(&path).expect("golden file is committed");
    if committed == built.bytes {
        return;
    }
    // Say whether the encoding changed or only the compressor's output did.
    let what = match (
        TraceReader::from_bytes(&committed).map(|mut r| r.events().collect::<Result<Vec<_>, _>>()),
        causeway_format::salvage::scan(&committed),
        causeway_format::salvage::scan(&built.bytes),
    ) {
        (Ok(Ok(evs)), a, b)
            if evs == built.events && a.blocks.len() == b.blocks.len() && a.header == b.header =>
        {
            "the committed file still reads as the expected events, so the difference is in \
             the compressed bytes (a zstd library change?) or in block framing"
        }
        _ => "the encoding itself differs",
    };
    panic!(
        "the trace format changed: {} bytes built vs {} committed; {what}. If this is \
         deliberate, bump VERSION_MINOR (an addition older readers skip) or VERSION_MAJOR \
         (anything else) in src/lib.rs, describe the change in docs/format.md, and \
         regenerate with CAUSEWAY_BLESS=1 cargo test -p causeway-format --test golden \
         (currently version {VERSION_MAJOR}.{VERSION_MINOR})",
        built.bytes.len(),
        committed.len()
    );
}

#[test]
fn golden_file_reads_as_expected() {
    let built = common::build_golden();
    let bytes = std::fs::read(golden_path()).expect("golden file is committed");
    let mut rd = TraceReader::from_bytes(&bytes).expect("golden opens");
    assert_eq!(rd.minor_version(), VERSION_MINOR);
    assert_eq!(rd.header(), &common::golden_header());
    // Every block carries the file's tag.
    let rep = causeway_format::salvage::check(&bytes);
    assert!(rep.is_clean(), "{:?}", rep.damage);
    assert!(rep.blocks.iter().all(|b| b.header.tag == 0x0042));
    assert_eq!(rd.tables(), &built.tables);
    let inl = rd
        .tables()
        .frames
        .iter()
        .find(|f| !f.inlined.is_empty())
        .expect("a frame with inlined calls");
    assert_eq!(
        (rd.tables().string(inl.file), inl.line, inl.inlined.len()),
        ("worker.c", 42, 2)
    );
    assert_eq!(rd.stats(), &built.stats);
    assert_eq!(rd.stats().events, built.events.len() as u64);
    assert_eq!(rd.stats().lost_total(), 17 + u64::MAX / 4);
    assert_eq!(rd.stats().counters["dropped_stacks"], 2);
    assert_eq!(rd.tables().string(causeway_format::StringId(0)), "");
    assert!(rd.tables().strings.iter().any(|s| s == "late string"));
    assert!(rd.chunks().len() >= 6, "golden has several chunks per CPU");
    let events: Vec<_> = rd.events().collect::<Result<_, _>>().expect("events read");
    assert_eq!(events, built.events);
    // Every event kind is in it, and every table has rows.
    for tag in EventKindTag::ALL {
        assert!(
            events.iter().any(|e| e.kind.tag() == tag),
            "golden lacks {}",
            tag.name()
        );
    }
    let t = rd.tables();
    assert!(!t.threads.is_empty() && !t.processes.is_empty() && !t.mappings.is_empty());
    assert!(!t.frames.is_empty() && !t.stacks.is_empty());
    for kind in [
        BlockKind::Strings,
        BlockKind::Threads,
        BlockKind::Processes,
        BlockKind::Mappings,
        BlockKind::Frames,
        BlockKind::Stacks,
        BlockKind::Flows,
        BlockKind::Stats,
        BlockKind::Events,
    ] {
        assert!(
            rd.index().iter().any(|e| e.kind == kind),
            "golden lacks a {} block",
            kind.name()
        );
    }
    assert_eq!(rd.skipped_unknown_events(), 0);
    assert_eq!(rd.skipped_unknown_blocks(), 0);
}

#[test]
fn golden_build_is_deterministic() {
    assert_eq!(common::build_golden().bytes, common::build_golden().bytes);
}

/// Writes the fuzz seed corpus (`fuzz/corpus/read_trace/`): the golden trace and a few
/// small variants, each once as is (first byte 0) and once with checksum repair (1).
/// Run with `cargo test -p causeway-format --test golden -- --ignored write_fuzz_seeds`.
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/read_trace");
    std::fs::create_dir_all(&dir).expect("corpus dir");
    let golden = common::build_golden().bytes;
    let multi = common::build_multi_chunk(400, 32).bytes;
    let mut empty =
        causeway_format::TraceWriter::new(Vec::new(), &causeway_format::Header::synthetic(1))
            .expect("writer");
    empty.intern("x");
    let empty = empty.finish().expect("finish");
    let cut = golden[..golden.len() * 2 / 3].to_vec();
    for (name, bytes) in [
        ("golden", &golden),
        ("multi-chunk", &multi),
        ("empty", &empty),
        ("truncated", &cut),
    ] {
        for mode in [0u8, 1] {
            let mut seed = vec![mode];
            seed.extend_from_slice(bytes);
            std::fs::write(dir.join(format!("{name}-{mode}")), seed).expect("write seed");
        }
    }
}
