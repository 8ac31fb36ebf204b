//! Socket records → trace events, and the recorder's flow table (flows numbered in
//! first-seen order, handed to the trace writer in that order so ids stay the same).

use crate::records::{Body, RawFlow};
use causeway_format::{Endpoint, EventKind, Flow, FlowId, SockFamily, SockProto, Tid};
use std::collections::HashMap;

/// Flows numbered in first-seen order.
#[derive(Debug, Default)]
pub struct FlowTable {
    list: Vec<Flow>,
    ids: HashMap<Flow, FlowId>,
}

impl FlowTable {
    /// The id of `f`, adding it if new.
    pub fn intern(&mut self, f: Flow) -> FlowId {
        if let Some(&id) = self.ids.get(&f) {
            return id;
        }
        let id = FlowId(self.list.len() as u32);
        self.list.push(f);
        self.ids.insert(f, id);
        id
    }

    /// All flows, by id.
    pub fn all(&self) -> &[Flow] {
        &self.list
    }
}

pub(crate) fn flow_of(r: &RawFlow) -> Flow {
    Flow {
        family: SockFamily(r.family),
        proto: SockProto(r.proto),
        local: Endpoint {
            addr: r.local_addr,
            port: r.local_port,
        },
        remote: Endpoint {
            addr: r.remote_addr,
            port: r.remote_port,
        },
    }
}

/// The trace event of a socket record (`tid`: the record header's thread); `None` for
/// any other body.
pub fn socket_event(flows: &mut FlowTable, tid: u32, body: &Body) -> Option<EventKind> {
    Some(match body {
        Body::SockSend { flow, bytes, seq } => EventKind::SockSend {
            tid: Tid(tid),
            flow: flows.intern(flow_of(flow)),
            bytes: *bytes,
            seq: *seq,
        },
        Body::SockReady {
            flow,
            wakee_tid,
            seq,
        } => EventKind::SockReady {
            wakee: Tid(*wakee_tid),
            host: Tid(tid),
            flow: flows.intern(flow_of(flow)),
            seq: *seq,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_of_a_connection_get_their_own_rows() {
        let mut t = FlowTable::default();
        let mut raw = RawFlow {
            local_port: 5000,
            remote_port: 41230,
            family: 2,
            proto: 6,
            ..Default::default()
        };
        let send = Body::SockSend {
            flow: raw,
            bytes: 10,
            seq: Some(100),
        };
        let a = socket_event(&mut t, 9, &send).unwrap();
        std::mem::swap(&mut raw.local_port, &mut raw.remote_port);
        let ready = Body::SockReady {
            flow: raw,
            wakee_tid: 4,
            seq: Some(100),
        };
        let b = socket_event(&mut t, 9, &ready).unwrap();
        let (EventKind::SockSend { flow: fa, .. }, EventKind::SockReady { flow: fb, host, .. }) =
            (a, b)
        else {
            panic!("kinds: {a:?} {b:?}");
        };
        assert_ne!(fa, fb);
        assert_eq!(host, Tid(9));
        assert_eq!(t.all()[fa.0 as usize].reversed(), t.all()[fb.0 as usize]);
        assert_eq!(socket_event(&mut t, 9, &send), Some(a));
        assert_eq!(socket_event(&mut t, 1, &Body::Exit), None);
    }
}
