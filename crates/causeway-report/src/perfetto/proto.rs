//! The few messages of Perfetto's trace format the export writes, declared with
//! prost's derive from the field numbers of Perfetto's published schema
//! (`protos/perfetto/trace/trace.proto`, `trace_packet.proto`,
//! `track_event/{track_descriptor,track_event,process_descriptor,thread_descriptor,debug_annotation}.proto`).
//!
//! Why not the generated `perfetto_protos` crate: it generates all of Perfetto's
//! hundreds of messages with protoc at build time (a vendored protoc binary and
//! about two minutes of build on a small machine) for the eight we write. The tests
//! decode our output with that crate, so a wrong field number here fails them.

/// `Trace`: the whole file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trace {
    /// Field 1.
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// `TracePacket`: one record.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// Field 8: nanoseconds on the packet's clock.
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// Field 10: which writer sequence the packet belongs to.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// Field 11.
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    /// Field 13: `SEQ_INCREMENTAL_STATE_CLEARED` = 1 on a sequence's first packet.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// Field 60.
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// `TrackDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    /// Field 1.
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// Field 2.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// Field 3.
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    /// Field 4.
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    /// Field 5.
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
}

/// `ProcessDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    /// Field 1.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// Field 2.
    #[prost(string, repeated, tag = "2")]
    pub cmdline: Vec<String>,
    /// Field 6.
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// `ThreadDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ThreadDescriptor {
    /// Field 1.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// Field 2.
    #[prost(int32, optional, tag = "2")]
    pub tid: Option<i32>,
    /// Field 5.
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}

/// `TrackEvent.Type`: slice begin 1, slice end 2, instant 3.
pub mod event_type {
    /// `TYPE_SLICE_BEGIN`.
    pub const SLICE_BEGIN: i32 = 1;
    /// `TYPE_SLICE_END`.
    pub const SLICE_END: i32 = 2;
    /// `TYPE_INSTANT`.
    pub const INSTANT: i32 = 3;
}

/// `TrackEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    /// Field 4.
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// Field 9: see [`event_type`].
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    /// Field 11.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// Field 22.
    #[prost(string, repeated, tag = "22")]
    pub categories: Vec<String>,
    /// Field 23.
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    /// Field 47.
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    /// Field 48.
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
}

/// `DebugAnnotation`: a named value shown in a slice's arguments.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    /// Field 3.
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    /// Field 4.
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    /// Field 6.
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
    /// Field 10.
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
}
