//! The Chrome trace event format (JSON), written from a [`Timeline`], for tools that
//! read it rather than Perfetto's protobuf (chrome://tracing, speedscope, Perfetto's
//! legacy importer).
//!
//! Times are microseconds with nanosecond decimals, as the format defines them (this
//! is the one JSON causeway writes that does not use integer `_ns` fields: the unit is
//! the format's, not ours). Thread states and CPU slices are complete (`X`) events on
//! the thread's or the CPU's row; system calls and spans are async (`b`/`e`) events
//! because they overlap states without nesting in them; wake-ups are flow events
//! (`s`/`f`). CPUs and analysis results are shown as two made-up processes.

use crate::error::ReportError;
use crate::perfetto::{Ev, ordered_events};
use crate::timeline::{Arg, ArgValue, Category, Lane, Timeline, TrackKind};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::io::Write;

/// Made-up process holding one row per CPU.
pub const CPU_PID: u32 = 0x7fff_fff0;
/// Made-up process holding one row per bottleneck knot.
pub const ANALYSIS_PID: u32 = 0x7fff_fff1;

/// Where a track's events go: process, thread row, and whether they are async.
#[derive(Clone, Copy)]
struct Row {
    pid: u32,
    tid: u32,
    lane: Option<Lane>,
}

/// Write the timeline as a Chrome trace event JSON document.
pub fn write(tl: &Timeline, out: &mut dyn Write) -> Result<(), ReportError> {
    let (rows, meta) = rows(tl);
    out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    let mut first = true;
    let mut emit = |v: Value, out: &mut dyn Write| -> Result<(), ReportError> {
        if !first {
            out.write_all(b",\n")?;
        }
        first = false;
        serde_json::to_writer(&mut *out, &v).map_err(|source| ReportError::Json {
            view: "chrome-json",
            source,
        })
    };
    for m in meta {
        emit(m, out)?;
    }
    let mut async_id = 0u64;
    let mut open_async: HashMap<*const crate::timeline::Slice, u64> = HashMap::new();
    for e in ordered_events(tl) {
        let v = match e {
            Ev::Begin(s) => {
                let Some(r) = rows.get(&s.track).copied() else {
                    continue;
                };
                let mut v = event(r, s.start_ns, &s.name, s.category, &s.args);
                for f in &s.flows_in {
                    emit(flow("f", *f, r, s.start_ns), out)?;
                }
                if matches!(r.lane, Some(Lane::Syscalls | Lane::Calls)) {
                    async_id += 1;
                    open_async.insert(std::ptr::from_ref(s), async_id);
                    v["ph"] = json!("b");
                    v["id"] = json!(async_id);
                } else {
                    v["ph"] = json!("X");
                    v["dur"] = json!(us(s.end_ns.saturating_sub(s.start_ns)));
                }
                v
            }
            Ev::End(s) => {
                let Some(id) = open_async.remove(&std::ptr::from_ref(s)) else {
                    continue;
                };
                let Some(r) = rows.get(&s.track).copied() else {
                    continue;
                };
                let mut v = event(r, s.end_ns, &s.name, s.category, &[]);
                v["ph"] = json!("e");
                v["id"] = json!(id);
                v
            }
            Ev::Instant(i) => {
                let Some(r) = rows.get(&i.track).copied() else {
                    continue;
                };
                for f in &i.flows_out {
                    emit(flow("s", *f, r, i.ts_ns), out)?;
                }
                let mut v = event(r, i.ts_ns, &i.name, i.category, &i.args);
                v["ph"] = json!("i");
                v["s"] = json!("t");
                v
            }
        };
        emit(v, out)?;
    }
    out.write_all(b"\n]}\n")?;
    Ok(())
}

/// Row of every track, and the metadata events naming processes and threads.
fn rows(tl: &Timeline) -> (HashMap<u64, Row>, Vec<Value>) {
    let mut rows = HashMap::new();
    let mut meta = vec![
        name_meta("process_name", CPU_PID, 0, "CPUs"),
        name_meta("process_name", ANALYSIS_PID, 0, "causeway analysis"),
    ];
    for t in &tl.tracks {
        let row = match &t.kind {
            TrackKind::Process { pid, .. } => {
                meta.push(name_meta("process_name", *pid, 0, &t.name));
                continue;
            }
            TrackKind::Thread { pid, tid } => {
                meta.push(name_meta("thread_name", *pid, *tid, &t.name));
                continue;
            }
            TrackKind::Lane { pid, tid, lane } => Row {
                pid: *pid,
                tid: *tid,
                lane: Some(*lane),
            },
            TrackKind::Cpu { cpu } => {
                meta.push(name_meta("thread_name", CPU_PID, *cpu, &t.name));
                Row {
                    pid: CPU_PID,
                    tid: *cpu,
                    lane: None,
                }
            }
            TrackKind::Analysis => {
                let tid = (t.uuid & 0xffff_ffff) as u32;
                meta.push(name_meta("thread_name", ANALYSIS_PID, tid, &t.name));
                Row {
                    pid: ANALYSIS_PID,
                    tid,
                    lane: None,
                }
            }
        };
        rows.insert(t.uuid, row);
    }
    (rows, meta)
}

fn name_meta(what: &str, pid: u32, tid: u32, name: &str) -> Value {
    json!({"ph": "M", "name": what, "pid": pid, "tid": tid, "args": {"name": name}})
}

fn event(r: Row, ts_ns: u64, name: &str, cat: Category, args: &[Arg]) -> Value {
    let mut a = Map::new();
    for arg in args {
        let v = match &arg.value {
            ArgValue::Str(s) => json!(s),
            ArgValue::Uint(u) => json!(u),
            ArgValue::Int(i) => json!(i),
        };
        a.insert(arg.name.to_string(), v);
    }
    json!({"name": name, "cat": cat.name(), "pid": r.pid, "tid": r.tid, "ts": us(ts_ns), "args": a})
}

fn flow(ph: &str, id: u64, r: Row, ts_ns: u64) -> Value {
    let mut v = json!({"ph": ph, "id": id, "name": "wakeup", "cat": "wakeup", "pid": r.pid, "tid": r.tid, "ts": us(ts_ns)});
    if ph == "f" {
        v["bp"] = json!("e");
    }
    v
}

/// Nanoseconds as the format's microseconds.
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}
