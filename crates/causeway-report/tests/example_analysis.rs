//! A new analysis, end to end, built only on the public API: the worked example that
//! `docs/architecture.md` points to under "Adding an analysis".
//!
//! The analysis ("the longest wait of each thread") reads a [`Trace`] that the one
//! ingestion path built, from events made in code ([`Trace::from_events`]) or from a
//! trace file ([`Trace::read`]), and returns a typed result: ids, integer nanoseconds,
//! no sentences. Its report is a [`View`], so [`render`] writes it as text or JSON like
//! any other result, and refuses DOT. Nothing in ingestion, the model or the command
//! line changed to add it; in the project the analysis would be its own crate and the
//! view a module of `causeway-report`.

use causeway_format::{
    Cpu, DurationNs, Header, StringId, Tables, TaskState, Tgid, ThreadInfo, Tid, Timestamp,
    TraceReader, Waker,
};
use causeway_model::{Model, SegmentId, SegmentState, Trace};
use causeway_report::{Format, ReportError, View, render};
use causeway_testkit::synth::Synth;
use serde::Serialize;
use std::io::Write;
use std::path::Path;

// ---------------------------------------------------------------------------------
// The analysis: model in, typed result out.

/// The longest wait of one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ThreadWait {
    /// The thread.
    tid: Tid,
    /// Its process, if known.
    tgid: Option<Tgid>,
    /// The blocked segment.
    segment: SegmentId,
    /// How long it lasted.
    duration: DurationNs,
    /// The waker's segment at the wake-up that ended it, when the waker is a thread of
    /// the model.
    waker_segment: Option<SegmentId>,
}

/// The longest wait of each thread that waited, longest first (ties in segment id
/// order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct LongestWaits {
    threads: Vec<ThreadWait>,
}

/// For each thread, its longest blocked segment whose start and end were both seen: a
/// wait cut by the edge of the recording or by lost events has only a bound for a
/// length, so it does not count.
fn longest_waits(trace: &Trace) -> LongestWaits {
    let mut threads = Vec::new();
    for (thread_index, thread) in (0u32..).zip(trace.model().threads()) {
        let mut best: Option<ThreadWait> = None;
        for (index, seg) in (0u32..).zip(&thread.segments) {
            if !seg.state.is_blocked() || !seg.start_known || !seg.end_known {
                continue;
            }
            // Strictly longer: the first of equal waits stays.
            if best.is_some_and(|b| b.duration >= seg.duration()) {
                continue;
            }
            best = Some(ThreadWait {
                tid: thread.tid,
                tgid: thread.tgid,
                segment: SegmentId {
                    thread: thread_index,
                    index,
                },
                duration: seg.duration(),
                waker_segment: trace.model().waker_segment(SegmentId {
                    thread: thread_index,
                    index,
                }),
            });
        }
        threads.extend(best);
    }
    threads.sort_by(|a, b| b.duration.cmp(&a.duration).then(a.segment.cmp(&b.segment)));
    LongestWaits { threads }
}

// ---------------------------------------------------------------------------------
// The report: names resolved once, then written as text or JSON.

/// A segment as shown: `thread:index`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
struct SegmentDoc {
    thread: u32,
    index: u32,
}

impl From<SegmentId> for SegmentDoc {
    fn from(id: SegmentId) -> SegmentDoc {
        SegmentDoc {
            thread: id.thread,
            index: id.index,
        }
    }
}

/// The waking thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
struct WakerDoc {
    tid: u32,
    segment: SegmentDoc,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
struct WaitDoc {
    tid: u32,
    /// `null` if unknown.
    pid: Option<u32>,
    comm: String,
    segment: SegmentDoc,
    wait_ns: u64,
    /// `null` unless a thread of the trace woke it.
    waker: Option<WakerDoc>,
}

/// The longest waits made readable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
struct LongestWaitsView {
    threads: Vec<WaitDoc>,
}

impl LongestWaitsView {
    /// Resolve the names the result refers to by id.
    fn new(result: &LongestWaits, model: &Model) -> LongestWaitsView {
        let threads = result
            .threads
            .iter()
            .map(|w| WaitDoc {
                tid: w.tid.0,
                pid: w.tgid.map(|g| g.0),
                comm: model
                    .thread_by_index(w.segment.thread)
                    .map(|t| t.comm.clone())
                    .unwrap_or_default(),
                segment: w.segment.into(),
                wait_ns: w.duration.0,
                waker: w.waker_segment.and_then(|s| {
                    let waker = model.thread_by_index(s.thread)?;
                    Some(WakerDoc {
                        tid: waker.tid.0,
                        segment: s.into(),
                    })
                }),
            })
            .collect();
        LongestWaitsView { threads }
    }
}

fn thread_label(comm: &str, tid: u32) -> String {
    if comm.is_empty() {
        format!("tid {tid}")
    } else {
        format!("{comm} (tid {tid})")
    }
}

impl View for LongestWaitsView {
    fn name(&self) -> &'static str {
        "longest-waits"
    }

    /// Some thread waited.
    fn found(&self) -> bool {
        !self.threads.is_empty()
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        if self.threads.is_empty() {
            writeln!(
                out,
                "no thread waited (no wait with both ends in the trace)"
            )?;
            return Ok(());
        }
        writeln!(out, "longest wait of each thread, longest first:")?;
        for w in &self.threads {
            let by = match &w.waker {
                Some(k) => format!(
                    "woken by tid {} (segment {}:{})",
                    k.tid, k.segment.thread, k.segment.index
                ),
                None => "not woken by a thread of the trace".to_string(),
            };
            writeln!(
                out,
                "  {} waited {} ns (segment {}:{}), {by}",
                thread_label(&w.comm, w.tid),
                w.wait_ns,
                w.segment.thread,
                w.segment.index
            )?;
        }
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        let mut bytes = serde_json::to_vec_pretty(self).map_err(|source| ReportError::Json {
            view: self.name(),
            source,
        })?;
        bytes.push(b'\n');
        out.write_all(&bytes)?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------
// Tests.

fn rendered(v: &dyn View, f: Format) -> Result<String, ReportError> {
    let mut out = Vec::new();
    render(v, f, &mut out)?;
    Ok(String::from_utf8(out).expect("utf-8"))
}

/// Threads 7 (`consumer`) and 9 (`producer`) of process 5.
fn tables() -> Tables {
    let mut t = Tables {
        strings: vec![String::new()],
        ..Tables::default()
    };
    for (tid, comm) in [(7, "consumer"), (9, "producer")] {
        t.strings.push(comm.to_string());
        t.threads.push(ThreadInfo {
            tid: Tid(tid),
            tgid: Tgid(5),
            since: Timestamp(0),
            comm: StringId(t.strings.len() as u32 - 1),
        });
    }
    t
}

/// Two CPUs. Thread 7 runs on CPU 0, thread 9 on CPU 1.
///
/// Thread 7 (model index 0): running 0..100 [0], blocked 100..300 [1] (9 wakes it),
/// runnable 300..350 [2], running 350..400 [3], blocked 400..1000 [4] (9 wakes it),
/// runnable 1000..1050 [5], running 1050..1200 [6], blocked from 1200 to the end of the
/// trace [7], 3800 ns but not ended.
///
/// Thread 9 (model index 1): running 0..500 [0], blocked 500..800 [1] (woken by no
/// thread), runnable 800..850 [2], running 850..5000 [3].
fn synthetic() -> Trace {
    let mut s = Synth::new();
    let by_9 = Waker::Thread { tid: Tid(9) };
    s.switch(0, 0, 0, TaskState::RUNNABLE, 7)
        .switch(0, 1, 0, TaskState::RUNNABLE, 9)
        .switch(100, 0, 7, TaskState::INTERRUPTIBLE, 0)
        .wakeup(300, 1, 7, 0, by_9)
        .switch(350, 0, 0, TaskState::RUNNABLE, 7)
        .switch(400, 0, 7, TaskState::INTERRUPTIBLE, 0)
        .switch(500, 1, 9, TaskState::INTERRUPTIBLE, 0)
        .wakeup(800, 1, 9, 1, Waker::Unknown)
        .switch(850, 1, 0, TaskState::RUNNABLE, 9)
        .wakeup(1000, 1, 7, 0, by_9)
        .switch(1050, 0, 0, TaskState::RUNNABLE, 7)
        .switch(1200, 0, 7, TaskState::INTERRUPTIBLE, 0)
        .switch(5000, 1, 9, TaskState::RUNNABLE, 0);
    Trace::from_events(tables(), Header::synthetic(2), &s.events())
}

#[test]
fn finds_each_threads_longest_ended_wait() {
    let trace = synthetic();
    let result = longest_waits(&trace);
    assert_eq!(
        result.threads,
        vec![
            // 400..1000, not the unended 3800 ns wait from 1200.
            ThreadWait {
                tid: Tid(7),
                tgid: Some(Tgid(5)),
                segment: SegmentId {
                    thread: 0,
                    index: 4
                },
                duration: DurationNs(600),
                waker_segment: Some(SegmentId {
                    thread: 1,
                    index: 3
                }),
            },
            ThreadWait {
                tid: Tid(9),
                tgid: Some(Tgid(5)),
                segment: SegmentId {
                    thread: 1,
                    index: 1
                },
                duration: DurationNs(300),
                waker_segment: None,
            },
        ]
    );
    let model = trace.model();
    assert_eq!(model.thread_index_at(Tid(7), Timestamp(400)), Some(0));
    assert_eq!(model.thread_index_at(Tid(9), Timestamp(500)), Some(1));
}

#[test]
fn the_waker_segment_is_the_waking_threads_running_segment() {
    let trace = synthetic();
    let model = trace.model();
    let wait = longest_waits(&trace).threads[0];
    let seg = model.segment(wait.segment).expect("the wait's segment");
    let wake = seg.wake().expect("an ended wait has its wake-up");
    assert_eq!(wake.ts, Timestamp(1000));
    assert_eq!(wake.waker, Waker::Thread { tid: Tid(9) });

    let id = wait.waker_segment.expect("thread 9 woke it");
    let waker_thread = model.thread_by_index(id.thread).expect("waker thread");
    assert_eq!(waker_thread.tid, Tid(9));
    let waker_seg = model.segment(id).expect("waker segment");
    assert_eq!(waker_seg.state, SegmentState::Running { cpu: Cpu(1) });
    assert!(waker_seg.start <= wake.ts && wake.ts < waker_seg.end);
    assert_eq!(
        (waker_seg.start, waker_seg.end),
        (Timestamp(850), Timestamp(5000))
    );
}

#[test]
fn text_and_json_agree() {
    let trace = synthetic();
    let view = LongestWaitsView::new(&longest_waits(&trace), trace.model());
    assert!(view.found());

    let text = rendered(&view, Format::Text).unwrap();
    assert_eq!(
        text,
        "longest wait of each thread, longest first:\n\
         \x20 consumer (tid 7) waited 600 ns (segment 0:4), woken by tid 9 (segment 1:3)\n\
         \x20 producer (tid 9) waited 300 ns (segment 1:1), not woken by a thread of the trace\n"
    );

    let json = rendered(&view, Format::Json).unwrap();
    assert!(json.ends_with("}\n"));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let entries = doc["threads"].as_array().expect("threads array");
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(entries.len(), lines.len());
    for (e, line) in entries.iter().zip(&lines) {
        let tid = format!("(tid {})", e["tid"]);
        let wait = format!("waited {} ns", e["wait_ns"]);
        let seg = format!(
            "(segment {}:{})",
            e["segment"]["thread"], e["segment"]["index"]
        );
        assert!(line.contains(&tid), "{line} lacks {tid}");
        assert!(line.contains(&wait), "{line} lacks {wait}");
        assert!(line.contains(&seg), "{line} lacks {seg}");
        assert!(line.starts_with(&format!("  {} ", e["comm"].as_str().unwrap())));
        match e["waker"].as_object() {
            Some(k) => assert!(line.ends_with(&format!(
                "woken by tid {} (segment {}:{})",
                k["tid"], k["segment"]["thread"], k["segment"]["index"]
            ))),
            None => assert!(line.ends_with("not woken by a thread of the trace")),
        }
    }
    assert_eq!(entries[0]["pid"], 5);
    assert_eq!(entries[1]["waker"], serde_json::Value::Null);
}

#[test]
fn dot_is_unsupported() {
    let trace = synthetic();
    let view = LongestWaitsView::new(&longest_waits(&trace), trace.model());
    let mut out = Vec::new();
    let err = render(&view, Format::Dot, &mut out).unwrap_err();
    assert!(matches!(
        err,
        ReportError::Unsupported {
            view: "longest-waits",
            format: Format::Dot
        }
    ));
    assert!(out.is_empty());
}

#[test]
fn nothing_found_without_an_ended_wait() {
    // Thread 7 blocks at 100 and is still blocked when the trace ends at 900.
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 7)
        .switch(100, 0, 7, TaskState::INTERRUPTIBLE, 0)
        .switch(900, 1, 0, TaskState::RUNNABLE, 9);
    let trace = Trace::from_events(tables(), Header::synthetic(2), &s.events());
    let result = longest_waits(&trace);
    assert_eq!(result, LongestWaits::default());
    let view = LongestWaitsView::new(&result, trace.model());
    assert!(!view.found());
    assert_eq!(
        rendered(&view, Format::Text).unwrap(),
        "no thread waited (no wait with both ends in the trace)\n"
    );
    assert_eq!(
        rendered(&view, Format::Json).unwrap(),
        "{\n  \"threads\": []\n}\n"
    );
}

/// Brute force: every thread with a wait whose ends were both seen is listed, with no
/// longer such wait of its own, and the list is longest first.
fn check_against_model(result: &LongestWaits, model: &Model) {
    let ended = |t: &causeway_model::Thread| -> Vec<DurationNs> {
        t.segments
            .iter()
            .filter(|s| s.state.is_blocked() && s.start_known && s.end_known)
            .map(|s| s.duration())
            .collect()
    };
    let waited = model.threads().filter(|t| !ended(t).is_empty()).count();
    assert_eq!(result.threads.len(), waited);
    for w in &result.threads {
        let thread = model.thread_by_index(w.segment.thread).expect("thread");
        assert_eq!((thread.tid, thread.tgid), (w.tid, w.tgid));
        let seg = model.segment(w.segment).expect("segment");
        assert!(seg.state.is_blocked());
        assert_eq!(seg.duration(), w.duration);
        assert_eq!(ended(thread).into_iter().max(), Some(w.duration));
    }
    assert!(
        result
            .threads
            .windows(2)
            .all(|p| p[0].duration >= p[1].duration)
    );
}

#[test]
fn the_synthetic_result_matches_brute_force() {
    let trace = synthetic();
    check_against_model(&longest_waits(&trace), trace.model());
}

/// The golden trace (see its `causeway dump`): bash (100) blocks at 1000800 and a
/// softirq wakes it at 1001050; worker (200) blocks in `D` at 1000950 and irq 24 wakes
/// it at 1001020. Bash's later waits (`T` at 1003000, `P` at 1003200) end with no
/// wake-up seen, so they do not count. No thread woke another here.
#[test]
fn reads_a_trace_file() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../causeway-format/tests/data/golden-v1.1.cwt");
    let mut reader = TraceReader::open(&path).expect("open the golden trace");
    let trace = Trace::read(&mut reader, |_| {}).expect("read the golden trace");
    let model = trace.model();
    let result = longest_waits(&trace);
    check_against_model(&result, model);
    assert_eq!(
        result.threads,
        vec![
            ThreadWait {
                tid: Tid(100),
                tgid: Some(Tgid(100)),
                segment: SegmentId {
                    thread: 0,
                    index: 1
                },
                duration: DurationNs(250),
                waker_segment: None,
            },
            ThreadWait {
                tid: Tid(200),
                tgid: Some(Tgid(200)),
                segment: SegmentId {
                    thread: 4,
                    index: 2
                },
                duration: DurationNs(70),
                waker_segment: None,
            },
        ]
    );
    let wakers: Vec<Waker> = result
        .threads
        .iter()
        .map(|w| {
            model
                .segment(w.segment)
                .and_then(|s| s.wake())
                .expect("wake-up")
                .waker
        })
        .collect();
    assert!(matches!(wakers[0], Waker::Softirq { .. }));
    assert!(matches!(wakers[1], Waker::Irq { irq: 24, .. }));

    let view = LongestWaitsView::new(&result, model);
    assert!(view.found());
    assert_eq!(
        rendered(&view, Format::Text).unwrap(),
        "longest wait of each thread, longest first:\n\
         \x20 bash (tid 100) waited 250 ns (segment 0:1), not woken by a thread of the trace\n\
         \x20 worker (tid 200) waited 70 ns (segment 4:2), not woken by a thread of the trace\n"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&rendered(&view, Format::Json).unwrap()).unwrap();
    assert_eq!(doc["threads"][0]["pid"], 100);
    assert_eq!(doc["threads"][1]["comm"], "worker");
    assert_eq!(doc["threads"][1]["wait_ns"], 70);
}
