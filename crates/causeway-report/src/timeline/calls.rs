//! System calls, spans and in-process method calls as slices on a thread's lanes.

use super::states::{arg_s, stack_text};
use super::tracks::{ThreadIds, lane_uuid};
use super::types::{Arg, ArgValue, Category, Lane, Slice, Timeline};
use causeway_format::{Marker, StringId, Timestamp, syscalls::syscall_label};
use causeway_model::Trace;
use causeway_stacks::Extras;
use std::collections::HashMap;

/// One slice per system call, on the calling thread's `syscalls` lane. A call whose
/// exit is not in the trace ends where the thread's timeline ends.
pub(super) fn add_syscalls(trace: &Trace, x: &Extras, _ids: &ThreadIds, tl: &mut Timeline) {
    let model = trace.model();
    for c in &x.syscalls {
        let Some(index) = model.thread_index_at(c.tid, c.start) else {
            continue;
        };
        let last = model
            .thread_by_index(index)
            .and_then(|t| t.span())
            .map_or(c.start, |s| s.end);
        let end = c.end.unwrap_or(last).max(c.start);
        let mut args = Vec::new();
        if let Some(ret) = c.ret {
            args.push(Arg {
                name: "ret",
                value: ArgValue::Int(ret),
            });
        }
        if let Some(s) = &c.stack {
            args.push(arg_s("call_site", stack_text(trace.tables(), s)));
        }
        tl.slices.push(Slice {
            track: lane_uuid(index, Lane::Syscalls),
            start_ns: c.start.0,
            end_ns: end.0,
            name: syscall_label(c.nr).into_owned(),
            category: Category::Syscall,
            args,
            flows_in: Vec::new(),
        });
    }
}

/// Spans (paired by id) and method calls (paired by nesting) as slices on the
/// thread's `calls` lane. An unended one ends with the thread's timeline.
pub(super) fn add_markers(trace: &Trace, _ids: &ThreadIds, tl: &mut Timeline) {
    let model = trace.model();
    let tables = trace.tables();
    let mut spans: HashMap<u64, (u32, Timestamp, StringId)> = HashMap::new();
    let mut methods: HashMap<u32, Vec<(Timestamp, StringId)>> = HashMap::new();
    let mut push = |index: u32, start: Timestamp, end: Timestamp, name: StringId| {
        tl.slices.push(Slice {
            track: lane_uuid(index, Lane::Calls),
            start_ns: start.0,
            end_ns: end.0.max(start.0),
            name: tables.string(name).to_string(),
            category: Category::Call,
            args: Vec::new(),
            flows_in: Vec::new(),
        });
    };
    for m in trace.facts().markers() {
        let Some(index) = model.thread_index_at(m.tid, m.ts) else {
            continue;
        };
        match m.marker {
            Marker::SpanBegin { name, id } => {
                spans.insert(id, (index, m.ts, name));
            }
            Marker::SpanEnd { id, .. } => {
                if let Some((i, start, name)) = spans.remove(&id) {
                    push(i, start, m.ts, name);
                }
            }
            Marker::MethodEnter { method } => {
                methods.entry(index).or_default().push((m.ts, method))
            }
            Marker::MethodExit { .. } => {
                if let Some((start, name)) = methods.entry(index).or_default().pop() {
                    push(index, start, m.ts, name);
                }
            }
            _ => {}
        }
    }
    let end_of = |i: u32| {
        model
            .thread_by_index(i)
            .and_then(|t| t.span())
            .map(|s| s.end)
    };
    for (_, (i, start, name)) in spans {
        push(i, start, end_of(i).unwrap_or(start), name);
    }
    for (i, open) in methods {
        for (start, name) in open {
            push(i, start, end_of(i).unwrap_or(start), name);
        }
    }
}
