//! Goroutine events as the model keeps them: in time order, beside the threads that
//! ran them, for the goroutine view ([`crate::Model::goroutine_view`]).

use crate::segment::StackRef;
use causeway_format::{FlowId, StackId, StringId, Tgid, Tid, Timestamp};
use serde::{Deserialize, Serialize};

/// One goroutine event of the trace, with the stack that followed a park.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoEvent {
    /// When.
    pub ts: Timestamp,
    /// The thread whose runtime code reported it.
    pub tid: Tid,
    /// What.
    pub kind: GoEventKind,
}

/// What a goroutine event says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GoEventKind {
    /// The thread starts running the goroutine.
    Run {
        /// The goroutine.
        goid: u64,
        /// Its creator (0: unknown); on its first run in the trace only.
        parent: u64,
        /// Its start function (one frame); on its first run in the trace only.
        start: Option<StackId>,
    },
    /// The goroutine the thread runs parks.
    Park {
        /// The goroutine.
        goid: u64,
        /// The runtime's reason.
        reason: StringId,
        /// Its stack where it parks, if recorded.
        stack: Option<StackRef>,
        /// The socket it waits to read, for a park for network reads.
        net: Option<NetWait>,
    },
    /// The goroutine is made runnable by the thread's code.
    Ready {
        /// The goroutine readied.
        goid: u64,
        /// The goroutine the thread carried (0: the scheduler itself).
        by: u64,
    },
}

/// The socket a goroutine parked for network reads waits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetWait {
    /// The socket, from the receiver's side.
    pub flow: FlowId,
    /// TCP: the next byte expected at the park.
    pub seq: Option<u32>,
    /// The recorded send that carried that byte, if one did.
    pub from: Option<SentBy>,
}

/// A recorded send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentBy {
    /// The sending thread.
    pub tid: Tid,
    /// When its send ended.
    pub sent: Timestamp,
    /// Bytes sent.
    pub bytes: u32,
}

impl GoEventKind {
    /// The goroutine the event is about.
    pub fn goid(&self) -> u64 {
        match *self {
            GoEventKind::Run { goid, .. }
            | GoEventKind::Park { goid, .. }
            | GoEventKind::Ready { goid, .. } => goid,
        }
    }
}

/// A goroutine of the goroutine view: which process, which id, and the name its
/// vertex gets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoroutineInfo {
    /// The thread id the view gives it (above every real thread id).
    pub tid: Tid,
    /// Its process.
    pub tgid: Tgid,
    /// The runtime's goroutine id.
    pub goid: u64,
    /// The goroutine that created it (0: unknown).
    pub parent: u64,
    /// Its start function, if its first run was recorded.
    pub start: Option<String>,
}
