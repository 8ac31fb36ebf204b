//! Perfetto's protobuf trace format, written from a [`Timeline`].
//!
//! Every track becomes a `TrackDescriptor` (processes and threads with their
//! `ProcessDescriptor` / `ThreadDescriptor`, so Perfetto groups and names them), every
//! slice a `TrackEvent` begin/end pair, every instant a `TrackEvent` instant, with
//! wake-ups as flows (`flow_ids` on the waker's instant, `terminating_flow_ids` on the
//! wakee's next slice) and arguments as debug annotations.
//!
//! Timestamps are the trace's own clock and carry no clock id, so Perfetto takes them
//! as its default clock: with one clock in the file nothing needs converting. Packets
//! are streamed one by one; the file is a valid `Trace` message however long.
//!
//! Why track events and not ftrace `sched_switch` packets: the states shown must be
//! the model's (which marks what it does not know after lost events), not a second
//! derivation by Perfetto from raw switches.

pub mod proto;

use crate::error::ReportError;
use crate::timeline::{Arg, ArgValue, Slice, Timeline, Track, TrackKind};
use prost::Message;
use proto::{
    DebugAnnotation, ProcessDescriptor, ThreadDescriptor, TracePacket, TrackDescriptor, TrackEvent,
    event_type,
};
use std::io::Write;

/// The one writer sequence of the file.
const SEQUENCE: u32 = 1;
/// `TracePacket.sequence_flags`: `SEQ_INCREMENTAL_STATE_CLEARED`.
const STATE_CLEARED: u32 = 1;
/// Key of `Trace.packet` (field 1, length-delimited).
const PACKET_KEY: u8 = 0x0a;

/// Write the timeline as a Perfetto trace.
pub fn write(tl: &Timeline, out: &mut dyn Write) -> Result<(), ReportError> {
    let mut w = PacketWriter {
        out,
        buf: Vec::with_capacity(256),
        first: true,
    };
    for t in &tl.tracks {
        w.packet(TracePacket {
            track_descriptor: Some(descriptor(t)),
            ..TracePacket::default()
        })?;
    }
    for e in ordered_events(tl) {
        let (ts, ev) = match e {
            Ev::Begin(s) => (s.start_ns, begin(s)),
            Ev::End(s) => (s.end_ns, end(s)),
            Ev::Instant(i) => (
                i.ts_ns,
                TrackEvent {
                    r#type: Some(event_type::INSTANT),
                    track_uuid: Some(i.track),
                    name: Some(i.name.clone()),
                    categories: vec![i.category.name().to_string()],
                    debug_annotations: annotations(&i.args),
                    flow_ids: i.flows_out.clone(),
                    ..TrackEvent::default()
                },
            ),
        };
        w.packet(TracePacket {
            timestamp: Some(ts),
            track_event: Some(ev),
            ..TracePacket::default()
        })?;
    }
    Ok(())
}

struct PacketWriter<'o> {
    out: &'o mut dyn Write,
    buf: Vec<u8>,
    first: bool,
}

impl PacketWriter<'_> {
    fn packet(&mut self, mut p: TracePacket) -> Result<(), ReportError> {
        p.trusted_packet_sequence_id = Some(SEQUENCE);
        if self.first {
            p.sequence_flags = Some(STATE_CLEARED);
            self.first = false;
        }
        self.buf.clear();
        self.buf.push(PACKET_KEY);
        prost::encoding::encode_varint(p.encoded_len() as u64, &mut self.buf);
        p.encode(&mut self.buf)
            .map_err(|e| ReportError::Io(std::io::Error::other(e)))?;
        self.out.write_all(&self.buf)?;
        Ok(())
    }
}

fn descriptor(t: &Track) -> TrackDescriptor {
    let mut d = TrackDescriptor {
        uuid: Some(t.uuid),
        parent_uuid: t.parent,
        name: Some(t.name.clone()),
        ..TrackDescriptor::default()
    };
    let int = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
    match &t.kind {
        TrackKind::Process { pid, cmdline } => {
            // Perfetto names a process track from its descriptor.
            d.name = None;
            d.process = Some(ProcessDescriptor {
                pid: Some(int(*pid)),
                cmdline: cmdline.clone(),
                process_name: Some(t.name.clone()),
            });
        }
        TrackKind::Thread { pid, tid } => {
            d.name = None;
            d.thread = Some(ThreadDescriptor {
                pid: Some(int(*pid)),
                tid: Some(int(*tid)),
                thread_name: Some(t.name.clone()),
            });
        }
        TrackKind::Lane { .. } | TrackKind::Cpu { .. } | TrackKind::Analysis => {}
    }
    d
}

fn begin(s: &Slice) -> TrackEvent {
    TrackEvent {
        r#type: Some(event_type::SLICE_BEGIN),
        track_uuid: Some(s.track),
        name: Some(s.name.clone()),
        categories: vec![s.category.name().to_string()],
        debug_annotations: annotations(&s.args),
        terminating_flow_ids: s.flows_in.clone(),
        ..TrackEvent::default()
    }
}

fn end(s: &Slice) -> TrackEvent {
    TrackEvent {
        r#type: Some(event_type::SLICE_END),
        track_uuid: Some(s.track),
        ..TrackEvent::default()
    }
}

fn annotations(args: &[Arg]) -> Vec<DebugAnnotation> {
    args.iter()
        .map(|a| {
            let mut d = DebugAnnotation {
                name: Some(a.name.to_string()),
                ..DebugAnnotation::default()
            };
            match &a.value {
                ArgValue::Str(s) => d.string_value = Some(s.clone()),
                ArgValue::Uint(u) => d.uint_value = Some(*u),
                ArgValue::Int(i) => d.int_value = Some(*i),
            }
            d
        })
        .collect()
}

/// One event of the file.
pub(crate) enum Ev<'t> {
    Begin(&'t Slice),
    End(&'t Slice),
    Instant(&'t crate::timeline::Instant),
}

/// Every begin, end and instant in time order. At one instant: ends of slices that
/// began earlier (inner first), then begins (longer first, so a parent opens before
/// its child; a zero-length slice opens last and closes right away), then instants.
/// This keeps slices on a track properly nested for any reader that keeps the order of
/// equal timestamps.
pub(crate) fn ordered_events(tl: &Timeline) -> Vec<Ev<'_>> {
    type Key = (u64, u8, u64, u8);
    let mut keyed: Vec<(Key, Ev<'_>)> = Vec::with_capacity(tl.slices.len() * 2);
    for s in &tl.slices {
        let begin = (s.start_ns, 1, u64::MAX - s.end_ns, 0);
        keyed.push((begin, Ev::Begin(s)));
        let end = if s.end_ns > s.start_ns {
            (s.end_ns, 0, u64::MAX - s.start_ns, 0)
        } else {
            (s.end_ns, 1, u64::MAX - s.end_ns, 1)
        };
        keyed.push((end, Ev::End(s)));
    }
    for i in &tl.instants {
        keyed.push(((i.ts_ns, 2, 0, 0), Ev::Instant(i)));
    }
    keyed.sort_by_key(|(k, _)| *k);
    keyed.into_iter().map(|(_, e)| e).collect()
}
