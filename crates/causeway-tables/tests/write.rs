//! Writing a synthetic trace's tables and reading them back with Parquet's own reader:
//! pairs are made where both ends are recorded, and an end without its partner is a
//! row with the other side NULL (nothing dropped); the partition is complete.

use arrow_array::{Array, Int64Array, RecordBatch, StringArray};
use causeway_format::{Header, SoftirqVec};
use causeway_model::Trace;
use causeway_tables::{Analyses, TraceTables};
use causeway_testkit::synth::{Synth, blocking_write, named_tables};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::Path;

fn read(dir: &Path, table: &str) -> Vec<RecordBatch> {
    let f = std::fs::File::open(dir.join(format!("{table}.parquet"))).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

fn ints(batches: &[RecordBatch], col: &str) -> Vec<Option<i64>> {
    batches
        .iter()
        .flat_map(|b| {
            let a = b.column_by_name(col).unwrap();
            let a = a.as_any().downcast_ref::<Int64Array>().unwrap();
            (0..a.len())
                .map(|i| (!a.is_null(i)).then(|| a.value(i)))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn strs(batches: &[RecordBatch], col: &str) -> Vec<String> {
    batches
        .iter()
        .flat_map(|b| {
            let a = b.column_by_name(col).unwrap();
            let a = a.as_any().downcast_ref::<StringArray>().unwrap();
            (0..a.len())
                .map(|i| a.value(i).to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn write(s: &Synth, root: &Path) -> causeway_tables::Written {
    let tables = named_tables(&[(1, 1, "consumer"), (2, 2, "producer")]);
    let header = Header::synthetic(2);
    let events = s.events();
    let trace = Trace::from_events(tables.clone(), header.clone(), &events);
    let mut out = TraceTables::create(root, &header, &tables, Some("host-a")).unwrap();
    for ev in &events {
        out.push(ev);
    }
    out.finish(&trace, Path::new("synthetic.cwt"), Analyses::default())
        .unwrap()
}

#[test]
fn calls_requests_and_interrupts_pair_and_lone_ends_are_kept() {
    let mut s = blocking_write(0, 3);
    // A call whose exit was not recorded, and an exit whose entry was not.
    s.syscall_enter(10_000, 0, 1, 1)
        .syscall_exit(10_050, 0, 1, 1);
    s.syscall_enter(10_100, 0, 1, 0);
    s.syscall_exit(10_200, 1, 2, 3);
    // A completion whose issue was not recorded; a softirq that never exits.
    s.block_complete(10_300, 0, (8 << 20, 999));
    s.softirq_entry(10_400, 1, SoftirqVec::NET_RX);
    let root = tempfile::tempdir().unwrap();
    let w = write(&s, root.path());
    assert!(w.dir.ends_with(format!("host=host-a/trace={}", w.trace_id)));
    assert_eq!(
        w.tables.len(),
        causeway_tables::catalog().len(),
        "every table has a file"
    );

    let calls = read(&w.dir, "syscalls");
    let enter = ints(&calls, "enter_ns");
    let exit = ints(&calls, "exit_ns");
    let dur = ints(&calls, "dur_ns");
    let pair = enter.iter().position(|&e| e == Some(10_000)).unwrap();
    assert_eq!((exit[pair], dur[pair]), (Some(10_050), Some(50)));
    let lone_enter = enter.iter().position(|&e| e == Some(10_100)).unwrap();
    assert_eq!(exit[lone_enter], None);
    let lone_exit = exit.iter().position(|&e| e == Some(10_200)).unwrap();
    assert_eq!((enter[lone_exit], dur[lone_exit]), (None, None));

    let io = read(&w.dir, "block_io");
    let issued = ints(&io, "issue_ns").iter().filter(|v| v.is_some()).count();
    let done = ints(&io, "complete_ns")
        .iter()
        .filter(|v| v.is_some())
        .count();
    let n_issue = s
        .events()
        .iter()
        .filter(|e| matches!(e.kind, causeway_format::EventKind::BlockIssue { .. }))
        .count();
    assert_eq!(issued, n_issue);
    assert_eq!(done, n_issue + 1, "the lone completion is a row too");

    let irqs = read(&w.dir, "interrupts");
    let kinds = strs(&irqs, "kind");
    let ends = ints(&irqs, "end_ns");
    let open: Vec<usize> = (0..kinds.len()).filter(|&i| ends[i].is_none()).collect();
    assert_eq!(open.len(), 1);
    assert_eq!(kinds[open[0]], "softirq");
    assert_eq!(strs(&irqs, "name")[open[0]], "NET_RX");

    // Every row carries the trace and the host.
    let sw = read(&w.dir, "switches");
    assert!(strs(&sw, "trace_id").iter().all(|t| *t == w.trace_id));
    assert!(strs(&sw, "host").iter().all(|h| h == "host-a"));
}

#[test]
fn thread_states_tile_each_threads_life_and_name_the_waker() {
    let s = blocking_write(0, 4);
    let root = tempfile::tempdir().unwrap();
    let w = write(&s, root.path());
    let st = read(&w.dir, "thread_states");
    let utid = ints(&st, "utid");
    let start = ints(&st, "start_ns");
    let dur = ints(&st, "dur_ns");
    for i in 1..utid.len() {
        if utid[i] == utid[i - 1] {
            assert_eq!(
                start[i],
                Some(start[i - 1].unwrap() + dur[i - 1].unwrap()),
                "row {i}"
            );
        }
    }
    // The producer's waits end by the consumer (tid 1).
    let tid = ints(&st, "tid");
    let state = strs(&st, "state");
    let waker = ints(&st, "waker_tid");
    let producer_waits: Vec<usize> = (0..tid.len())
        .filter(|&i| tid[i] == Some(2) && state[i] == "blocked" && waker[i].is_some())
        .collect();
    assert!(!producer_waits.is_empty());
    assert!(producer_waits.iter().all(|&i| waker[i] == Some(1)));
    let threads = read(&w.dir, "threads");
    let segs: i64 = ints(&threads, "segments").iter().map(|v| v.unwrap()).sum();
    assert_eq!(segs as usize, utid.len());
}

#[test]
fn a_failed_conversion_leaves_no_partition() {
    let root = tempfile::tempdir().unwrap();
    let tables = named_tables(&[]);
    let header = Header::synthetic(2);
    let out = TraceTables::create(root.path(), &header, &tables, Some("h")).unwrap();
    drop(out);
    let left: Vec<_> = std::fs::read_dir(root.path().join("host=h"))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
