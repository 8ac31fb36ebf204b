//! Record the zoo's `blocking-write` with perf, convert it with `causeway import`, and
//! check in the thread model that the consumer's fsync waits are blocked segments ended
//! from the disk interrupt path.
//!
//! On the test machine (ext4 on virtio-blk, see crates/causeway-import/tests/
//! perf_record.rs for the details) the virtio interrupt defers request completion to
//! the BLOCK softirq, so an fsync wait is ended either by `Softirq{BLOCK}` directly or
//! by a kworker running ext4's end-of-I/O work that the BLOCK softirq woke. A hard IRQ
//! waker counts too (other block drivers complete in the handler). Needs root, perf and
//! the built workloads; skipped without them unless `CAUSEWAY_REQUIRE_ROOT=1`.

use causeway_format::{SoftirqVec, Timestamp, TraceReader, Waker};
use causeway_model::{Model, SegmentState, Thread};
use std::path::{Path, PathBuf};
use std::process::Command;

fn unavailable(reason: &str) {
    if std::env::var_os("CAUSEWAY_REQUIRE_ROOT").is_some_and(|v| v == "1") {
        panic!("CAUSEWAY_REQUIRE_ROOT=1 but {reason}");
    }
    eprintln!("skipping: {reason}");
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("Uid:"))?;
            l.split_whitespace().nth(2).map(|euid| euid == "0")
        })
        .unwrap_or(false)
}

fn workload() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/bin/blocking-write")
}

/// True if the wake-up came from the block device: its interrupt, the BLOCK softirq, or
/// a thread that the interrupt or softirq woke for this wake-up's work.
fn from_disk_path(model: &Model, waker: &Waker, ts: Timestamp) -> bool {
    let direct = |w: &Waker| match w {
        Waker::Irq { .. } => true,
        Waker::Softirq { vec } => *vec == SoftirqVec::BLOCK,
        _ => false,
    };
    if direct(waker) {
        return true;
    }
    let Waker::Thread { tid } = waker else {
        return false;
    };
    let Some(kworker) = model.thread(*tid) else {
        return false;
    };
    if !kworker.comm.starts_with("kworker") {
        return false;
    }
    // The kworker's most recent wake-up before `ts`.
    kworker
        .segments
        .iter()
        .rev()
        .filter(|s| s.start <= ts)
        .find_map(|s| s.wake().filter(|w| w.ts <= ts))
        .is_some_and(|w| direct(&w.waker))
}

fn fsync_frames(reader_tables: &causeway_format::Tables, s: &causeway_model::StackRef) -> bool {
    let Some(k) = s.kernel.and_then(|k| reader_tables.stack(k)) else {
        return false;
    };
    k.frames.iter().any(|f| {
        let sym = reader_tables
            .frame(*f)
            .map(|fr| reader_tables.string(fr.symbol))
            .unwrap_or("");
        sym.contains("fsync") || sym == "ext4_sync_file" || sym == "file_write_and_wait_range"
    })
}

#[test]
fn consumer_fsync_waits_are_woken_from_the_disk_path() {
    if !is_root() {
        return unavailable("not root");
    }
    if Command::new("perf").arg("--version").output().is_err() {
        return unavailable("perf is not installed");
    }
    let bin = workload();
    if !bin.is_file() {
        return unavailable("workloads are not built (make workloads)");
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("bw.perf.data");
    let trace = dir.path().join("bw.cwt");
    let mut rec = Command::new("perf");
    rec.args(["record", "-q", "-g", "-a"]);
    for e in [
        "sched:sched_switch",
        "sched:sched_waking",
        "sched:sched_wakeup_new",
        "sched:sched_process_fork",
        "sched:sched_process_exit",
        "irq:irq_handler_entry",
        "irq:irq_handler_exit",
        "irq:softirq_entry",
        "irq:softirq_exit",
        "block:block_rq_issue",
        "block:block_rq_complete",
    ] {
        rec.args(["-e", e]);
    }
    rec.arg("-o").arg(&data).arg("--").arg(&bin);
    rec.args(["--seconds", "1.5", "--dir"]).arg(dir.path());
    let st = rec.status().expect("run perf record");
    assert!(st.success(), "perf record failed: {st}");

    let out = Command::new(env!("CARGO_BIN_EXE_causeway"))
        .args(["import"])
        .arg(&data)
        .arg("-o")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "import failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut rd = TraceReader::open(&trace).unwrap();
    let model = Model::from_reader(&mut rd).unwrap();
    let tables = rd.tables();
    let consumers: Vec<&Thread> = model.threads().filter(|t| t.comm == "consumer").collect();
    assert_eq!(consumers.len(), 1, "exactly one consumer thread");
    let consumer = consumers[0];
    assert!(model.threads().any(|t| t.comm == "producer"));

    let mut fsync_waits = 0;
    let mut with_waker = 0;
    let mut disk = 0;
    let mut other: Vec<String> = Vec::new();
    for seg in &consumer.segments {
        let SegmentState::Blocked {
            waker,
            switch_out_stack: Some(stack),
            ..
        } = &seg.state
        else {
            continue;
        };
        if !fsync_frames(tables, stack) {
            continue;
        }
        fsync_waits += 1;
        let Some(w) = waker else { continue };
        with_waker += 1;
        if from_disk_path(&model, &w.waker, w.ts) {
            disk += 1;
        } else if other.len() < 5 {
            other.push(format!("{:?} at {}", w.waker, w.ts));
        }
    }
    assert!(
        fsync_waits >= 100,
        "only {fsync_waits} fsync waits recorded"
    );
    // perf occasionally drops an idle CPU's burst of events (interrupt, wake-up,
    // switch-in) without a lost record; the model then leaves the waker unknown.
    assert!(
        with_waker * 10 >= fsync_waits * 8,
        "{with_waker} of {fsync_waits} fsync waits have a waker"
    );
    // A few wake-ups come from elsewhere (stale futex wake-queue entries).
    assert!(
        disk * 100 >= with_waker * 95,
        "{disk} of {with_waker} fsync wake-ups from the disk path; others: {other:?}"
    );
}
