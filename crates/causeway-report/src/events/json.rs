//! JSON form of an event: the typed fields, with string-table ids replaced by the
//! strings, stack ids with their frames and thread names added, so each line stands
//! alone.

use super::names::Names;
use causeway_format::{Event, EventKind, Marker, Waker};
use serde_json::{Value, json};

/// One event as a JSON object.
pub fn event_json(names: &Names<'_>, ev: &Event) -> Value {
    let t = names.tables();
    let mut v = serde_json::to_value(ev).unwrap_or(Value::Null);
    let Value::Object(obj) = &mut v else {
        return v;
    };
    let s = |id| Value::String(t.string(id).to_string());
    match ev.kind {
        EventKind::Exec { comm, filename, .. } => {
            obj.insert("comm".into(), s(comm));
            obj.insert("filename".into(), s(filename));
        }
        EventKind::IrqEntry { name, .. } => {
            obj.insert("name".into(), s(name));
        }
        EventKind::NetXmit { dev, .. } | EventKind::NetRecv { dev, .. } => {
            obj.insert("dev".into(), s(dev));
        }
        EventKind::Marker { marker, .. } => {
            let name = match marker {
                Marker::MethodEnter { method } | Marker::MethodExit { method } => Some(method),
                Marker::SpanBegin { name, .. } | Marker::SpanEnd { name, .. } => Some(name),
                _ => None,
            };
            if let Some(n) = name {
                obj.insert("name".into(), s(n));
            }
        }
        EventKind::Stack { user, kernel, .. } => {
            // The frames themselves, innermost first, so a line needs no stack table.
            let frames = |id: Option<causeway_format::StackId>| {
                let list: Vec<Value> = id
                    .and_then(|id| t.stack(id))
                    .map(|st| {
                        st.frames
                            .iter()
                            .flat_map(|&f| t.frame_texts(f))
                            .map(Value::String)
                            .collect()
                    })
                    .unwrap_or_default();
                Value::Array(list)
            };
            if user.is_some() {
                obj.insert("user_frames".into(), frames(user));
            }
            if kernel.is_some() {
                obj.insert("kernel_frames".into(), frames(kernel));
            }
        }
        _ => {}
    }
    if let EventKind::Wakeup {
        waker: Waker::Irq { name, .. },
        ..
    }
    | EventKind::WakeupNew {
        waker: Waker::Irq { name, .. },
        ..
    } = ev.kind
        && let Some(Value::Object(w)) = obj.get_mut("waker")
    {
        w.insert("name".into(), s(name));
    }
    let comms: serde_json::Map<String, Value> = ev
        .kind
        .tids()
        .map(|tid| (tid.to_string(), json!(names.comm(tid, ev.ts))))
        .collect();
    if !comms.is_empty() {
        obj.insert("comms".into(), Value::Object(comms));
    }
    // Every time in causeway's JSON is integer ns named `_ns`; the event type's field
    // is plain `ts`.
    if let Some(ts) = obj.remove("ts") {
        obj.insert("ts_ns".into(), ts);
    }
    v
}
