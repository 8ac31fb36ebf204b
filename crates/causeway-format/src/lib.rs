//! The causeway trace format: typed events, tables stored once, and a versioned,
//! chunked, compressed container with a streaming writer and a merging reader.
//!
//! This crate owns the bytes on disk and their in-memory types, and how people write
//! the quantities they hold ([`units`]: durations, sizes, rates). It knows nothing of
//! how events are recorded (see the recorder crates) or what they mean for
//! performance (see the model and analysis crates). The layout is documented in
//! `docs/format.md`.
//!
//! ```
//! use causeway_format::*;
//! let header = Header::synthetic(1);
//! let ev = Event {
//!     ts: Timestamp(1_000),
//!     cpu: Cpu(0),
//!     kind: EventKind::Exit { tid: Tid(42) },
//! };
//! let bytes = write_to_vec(&header, &[ev], WriterOptions::default()).unwrap();
//! let mut rd = TraceReader::from_bytes(&bytes).unwrap();
//! let back: Vec<Event> = rd.events().collect::<Result<_, _>>().unwrap();
//! assert_eq!(back, vec![ev]);
//! ```

pub mod block;
pub mod bytes;
pub mod cgroups;
pub mod codec;
mod codec_goroutines;
mod codec_signals;
mod codec_sockets;
pub mod dataflag;
pub mod error;
pub mod event;
pub mod header;
pub mod ids;
mod predict;
pub mod reader;
pub mod salvage;
pub mod signals;
pub mod sockets;
pub mod syscalls;
pub mod table_codec;
pub mod tables;
pub mod units;
pub mod writer;

pub use cgroups::{CgroupRow, CpuSample, MemorySample, PressureResource, PressureSample};
pub use dataflag::DataFlagAccess;
pub use error::{FormatError, Result};
pub use event::{
    BlockOp, BlockOpKind, Event, EventKind, EventKindTag, Marker, Signal, SignalResult, SoftirqVec,
    StackKind, TaskState, Waker,
};
pub use header::{
    BPF_RUN_NS, BPF_RUNS, ClockSource, Header, HostInfo, SalvageMark, Scope, TraceStats,
    TriggerMark, TriggerReason, WakerStackSampling,
};
pub use ids::{Cpu, DevId, DurationNs, FrameId, StackId, StringId, Tgid, Tid, Timestamp};
pub use reader::{ChunkInfo, MergedEvents, TimeRange, TraceReader};
pub use sockets::{Endpoint, Flow, FlowId, SockFamily, SockProto};
pub use tables::{
    Frame, FrameSpace, InlinedFrame, Mapping, ProcessInfo, Stack, Tables, ThreadIndex, ThreadInfo,
};
pub use units::UnitError;
pub use writer::{TraceWriter, WriterOptions, write_to_vec};

/// First bytes of every trace file.
pub const FILE_MAGIC: [u8; 8] = *b"CAUSEWAY";
/// Major version: readers reject other majors.
pub const VERSION_MAJOR: u16 = 1;
/// Minor version: a newer minor only adds sized event kinds, table fields, block kinds
/// or header fields, all of which an older reader skips.
pub const VERSION_MINOR: u16 = 9;
/// Magic, versions, header length and header CRC.
pub const FILE_HEADER_FIXED_LEN: usize = 20;
/// Largest header JSON a reader accepts.
pub const MAX_HEADER_JSON: usize = 1 << 20;
/// Magic in the trailer.
pub const TRAILER_MAGIC: [u8; 8] = *b"CWTRAILR";
/// Index offset, magic, CRC and padding.
pub const TRAILER_LEN: usize = 24;
