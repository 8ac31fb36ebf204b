//! Streaming trace writer with bounded memory.
//!
//! Events are buffered per CPU and written as a compressed chunk when a CPU's buffer is
//! full or when all buffers together reach the memory limit. Table rows (strings,
//! threads, frames, ...) are interned in memory and written as table blocks just
//! before each chunk, so a file cut short still holds the rows its chunks refer to.
//! [`TraceWriter::finish`] writes the statistics, the block index and the trailer;
//! a file without them is reported as interrupted by the reader.

use crate::block::{BlockHeader, BlockKind, Codec};
use crate::bytes::ByteWriter;
use crate::codec::ChunkEncoder;
use crate::error::{FormatError, Result};
use crate::event::{Event, EventKind};
use crate::header::{Header, TraceStats};
use crate::ids::{FrameId, StackId, StringId};
use crate::sockets::{Flow, FlowId};
use crate::table_codec::{Row, put_row};
use crate::tables::{Frame, Mapping, ProcessInfo, Stack, ThreadInfo};
use crate::{FILE_MAGIC, TRAILER_MAGIC, VERSION_MAJOR, VERSION_MINOR};
use std::collections::HashMap;
use std::io::{BufWriter, Write};

/// Largest CPU number accepted (guards the per-CPU buffer table).
pub const MAX_CPU: u32 = 1 << 16;

/// Tuning of a [`TraceWriter`].
#[derive(Clone, Debug)]
pub struct WriterOptions {
    /// Events per chunk (per CPU) before it is compressed and written.
    pub chunk_events: usize,
    /// Events buffered over all CPUs before the fullest buffer is written early.
    pub max_buffered_events: usize,
    /// zstd level (1 = fastest; 3 is zstd's default).
    pub zstd_level: i32,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            chunk_events: 16 * 1024,
            max_buffered_events: 1 << 20,
            zstd_level: 3,
        }
    }
}

/// One entry of the block index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// What the block holds.
    pub kind: BlockKind,
    /// CPU of an events block (`u32::MAX` otherwise).
    pub cpu: u32,
    /// Records in the block.
    pub count: u32,
    /// First timestamp or id.
    pub range_start: u64,
    /// Last timestamp or one past the last id.
    pub range_end: u64,
    /// Byte offset of the block header in the file.
    pub offset: u64,
    /// Header plus payload length.
    pub len: u64,
}

/// Writes framed blocks, keeps the index and writes header and trailer. Used by
/// [`TraceWriter`] and by salvage, which copies intact blocks verbatim.
pub struct BlockSink<W: Write> {
    out: BufWriter<W>,
    pos: u64,
    index: Vec<IndexEntry>,
    tag: u16,
}

impl<W: Write> BlockSink<W> {
    /// Write the file header and start the block sequence.
    pub fn new(out: W, header: &Header) -> Result<Self> {
        let json = serde_json::to_vec(header)
            .map_err(|e| FormatError::Invalid(format!("header does not serialize: {e}")))?;
        let mut out = BufWriter::with_capacity(1 << 20, out);
        out.write_all(&FILE_MAGIC)?;
        out.write_all(&VERSION_MAJOR.to_le_bytes())?;
        out.write_all(&VERSION_MINOR.to_le_bytes())?;
        out.write_all(&(json.len() as u32).to_le_bytes())?;
        out.write_all(&crc32fast::hash(&json).to_le_bytes())?;
        out.write_all(&json)?;
        let pos = (crate::FILE_HEADER_FIXED_LEN + json.len()) as u64;
        Ok(BlockSink {
            out,
            pos,
            index: Vec::new(),
            tag: header.file_tag(),
        })
    }

    /// Frame and write a block whose payload is `raw` (compressed if `level` is given).
    pub fn write_block(
        &mut self,
        kind: BlockKind,
        cpu: u32,
        count: u32,
        range: (u64, u64),
        raw: &[u8],
        level: Option<i32>,
    ) -> Result<()> {
        let compressed;
        let (codec, payload) = match level {
            Some(l) => {
                compressed = zstd::bulk::compress(raw, l)?;
                (Codec::Zstd, compressed.as_slice())
            }
            None => (Codec::None, raw),
        };
        let too_big = |n: usize| n > crate::block::MAX_RAW_LEN as usize;
        if too_big(raw.len()) || too_big(payload.len()) {
            return Err(FormatError::Invalid(format!(
                "{} block of {} bytes exceeds the block size limit",
                kind.name(),
                raw.len()
            )));
        }
        let mut h = BlockHeader {
            kind,
            codec,
            tag: self.tag,
            cpu,
            count,
            raw_len: raw.len() as u32,
            payload_len: payload.len() as u32,
            range_start: range.0,
            range_end: range.1,
            crc: 0,
        };
        let hb = h.encode(payload);
        self.write_framed(&h, &hb, payload)
    }

    /// Write an already framed block (header bytes and payload) as found in a file.
    pub fn write_framed(&mut self, h: &BlockHeader, header: &[u8], payload: &[u8]) -> Result<()> {
        self.out.write_all(header)?;
        self.out.write_all(payload)?;
        let len = (header.len() + payload.len()) as u64;
        self.index.push(IndexEntry {
            kind: h.kind,
            cpu: h.cpu,
            count: h.count,
            range_start: h.range_start,
            range_end: h.range_end,
            offset: self.pos,
            len,
        });
        self.pos += len;
        Ok(())
    }

    /// Write the index block and the trailer, flush, and return the output.
    pub fn finish(mut self) -> Result<W> {
        let mut w = ByteWriter::default();
        for e in &self.index {
            w.u8(e.kind.code());
            w.varint(e.cpu as u64);
            w.varint(e.count as u64);
            w.varint(e.range_start);
            w.varint(e.range_end);
            w.varint(e.offset);
            w.varint(e.len);
        }
        let index_offset = self.pos;
        let n = self.index.len() as u32;
        self.write_block(BlockKind::Index, u32::MAX, n, (0, 0), &w.buf, None)?;
        let mut t = [0u8; crate::TRAILER_LEN];
        t[0..8].copy_from_slice(&index_offset.to_le_bytes());
        t[8..16].copy_from_slice(&TRAILER_MAGIC);
        let crc = crc32fast::hash(&t[0..16]);
        t[16..20].copy_from_slice(&crc.to_le_bytes());
        self.out.write_all(&t)?;
        self.out.flush()?;
        self.out
            .into_inner()
            .map_err(|e| FormatError::Io(e.into_error()))
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Hand everything written so far to the output (empty the write buffer) and
    /// return the output, for the caller to make it durable (`File::sync_data`).
    pub fn flush(&mut self) -> Result<&mut W> {
        self.out.flush()?;
        Ok(self.out.get_mut())
    }
}

/// Rows of one table: the in-memory dedup map (if any) and the rows not yet written.
struct PendingTable<T> {
    pending: Vec<T>,
    written: u64,
}

impl<T> PendingTable<T> {
    fn new() -> Self {
        PendingTable {
            pending: Vec::new(),
            written: 0,
        }
    }
    fn next_id(&self) -> u64 {
        self.written + self.pending.len() as u64
    }
}

/// Streaming writer of a trace file.
pub struct TraceWriter<W: Write> {
    sink: BlockSink<W>,
    opts: WriterOptions,
    cpus: Vec<Vec<Event>>,
    last_written_ts: Vec<u64>,
    buffered: usize,
    string_ids: HashMap<String, StringId>,
    frame_ids: HashMap<Frame, FrameId>,
    stack_ids: HashMap<Stack, StackId>,
    flow_ids: HashMap<Flow, FlowId>,
    strings: PendingTable<String>,
    threads: PendingTable<ThreadInfo>,
    processes: PendingTable<ProcessInfo>,
    mappings: PendingTable<Mapping>,
    frames: PendingTable<Frame>,
    stacks: PendingTable<Stack>,
    flows: PendingTable<Flow>,
    cgroups: PendingTable<crate::cgroups::CgroupRow>,
    stats: TraceStats,
}

impl<W: Write> TraceWriter<W> {
    /// Start a trace on `out` with default options.
    pub fn new(out: W, header: &Header) -> Result<Self> {
        Self::with_options(out, header, WriterOptions::default())
    }

    /// Start a trace on `out`.
    pub fn with_options(out: W, header: &Header, opts: WriterOptions) -> Result<Self> {
        if opts.chunk_events == 0 {
            return Err(FormatError::Invalid(
                "chunk_events must be at least 1".into(),
            ));
        }
        let mut w = TraceWriter {
            sink: BlockSink::new(out, header)?,
            opts,
            cpus: Vec::new(),
            last_written_ts: Vec::new(),
            buffered: 0,
            string_ids: HashMap::new(),
            frame_ids: HashMap::new(),
            stack_ids: HashMap::new(),
            flow_ids: HashMap::new(),
            strings: PendingTable::new(),
            threads: PendingTable::new(),
            processes: PendingTable::new(),
            mappings: PendingTable::new(),
            frames: PendingTable::new(),
            stacks: PendingTable::new(),
            flows: PendingTable::new(),
            cgroups: PendingTable::new(),
            stats: TraceStats::default(),
        };
        // Id 0 is the empty string, so "unknown" fields can use StringId(0).
        w.intern("");
        Ok(w)
    }

    /// The id of `s` in the string table, adding it if new.
    pub fn intern(&mut self, s: &str) -> StringId {
        if let Some(&id) = self.string_ids.get(s) {
            return id;
        }
        let id = StringId(self.strings.next_id() as u32);
        self.strings.pending.push(s.to_owned());
        self.string_ids.insert(s.to_owned(), id);
        id
    }

    /// The id of `f` in the frame table, adding it if new.
    pub fn intern_frame(&mut self, f: Frame) -> FrameId {
        if let Some(&id) = self.frame_ids.get(&f) {
            return id;
        }
        let id = FrameId(self.frames.next_id() as u32);
        self.frames.pending.push(f.clone());
        self.frame_ids.insert(f, id);
        id
    }

    /// The id of `f` in the flow table, adding it if new.
    pub fn intern_flow(&mut self, f: Flow) -> FlowId {
        if let Some(&id) = self.flow_ids.get(&f) {
            return id;
        }
        let id = FlowId(self.flows.next_id() as u32);
        self.flows.pending.push(f);
        self.flow_ids.insert(f, id);
        id
    }

    /// The id of `s` in the stack table, adding it if new.
    pub fn intern_stack(&mut self, s: Stack) -> StackId {
        if let Some(&id) = self.stack_ids.get(&s) {
            return id;
        }
        let id = StackId(self.stacks.next_id() as u32);
        self.stacks.pending.push(s.clone());
        self.stack_ids.insert(s, id);
        id
    }

    /// Add a thread row (a thread seen for the first time, or renamed).
    pub fn add_thread(&mut self, t: ThreadInfo) {
        self.threads.pending.push(t);
    }

    /// Add a process row.
    pub fn add_process(&mut self, p: ProcessInfo) {
        self.processes.pending.push(p);
    }

    /// Add a cgroup row (a membership or a limit sample).
    pub fn add_cgroup(&mut self, r: crate::cgroups::CgroupRow) {
        self.cgroups.pending.push(r);
    }

    /// Add a mapping row.
    pub fn add_mapping(&mut self, m: Mapping) {
        self.mappings.pending.push(m);
    }

    /// Record what made a flight recorder dump this trace.
    pub fn set_trigger(&mut self, t: crate::header::TriggerMark) {
        self.stats.trigger = Some(t);
    }

    /// Add to a named recorder counter stored with the trace statistics.
    pub fn add_counter(&mut self, name: &str, n: u64) {
        let c = self.stats.counters.entry(name.to_owned()).or_default();
        *c = c.saturating_add(n);
    }

    /// Statistics so far.
    pub fn stats(&self) -> &TraceStats {
        &self.stats
    }

    /// Append an event. Events of one CPU may arrive slightly out of order; each chunk
    /// is sorted before it is written.
    pub fn push(&mut self, ev: &Event) -> Result<()> {
        let cpu = ev.cpu.0;
        if cpu >= MAX_CPU {
            return Err(FormatError::Invalid(format!(
                "cpu {cpu} is beyond the supported maximum {MAX_CPU}"
            )));
        }
        let c = cpu as usize;
        if c >= self.cpus.len() {
            self.cpus.resize_with(c + 1, Vec::new);
            self.last_written_ts.resize(c + 1, 0);
        }
        if let EventKind::Lost { count } = ev.kind {
            let lost = self.stats.lost_per_cpu.entry(cpu).or_default();
            *lost = lost.saturating_add(count);
        }
        self.stats.events += 1;
        self.cpus[c].push(*ev);
        self.buffered += 1;
        if self.cpus[c].len() >= self.opts.chunk_events {
            self.flush_cpu(c)?;
        } else if self.buffered >= self.opts.max_buffered_events {
            let fullest = (0..self.cpus.len())
                .max_by_key(|&i| self.cpus[i].len())
                .unwrap_or(c);
            self.flush_cpu(fullest)?;
        }
        Ok(())
    }

    fn flush_tables(&mut self) -> Result<()> {
        fn flush<W: Write, T: Row>(
            sink: &mut BlockSink<W>,
            kind: BlockKind,
            t: &mut PendingTable<T>,
            level: i32,
        ) -> Result<()> {
            if t.pending.is_empty() {
                return Ok(());
            }
            let mut w = ByteWriter::default();
            let mut scratch = ByteWriter::default();
            for row in &t.pending {
                put_row(&mut w, &mut scratch, row);
            }
            let n = t.pending.len() as u64;
            sink.write_block(
                kind,
                u32::MAX,
                n as u32,
                (t.written, t.written + n),
                &w.buf,
                Some(level),
            )?;
            t.written += n;
            t.pending.clear();
            Ok(())
        }
        let l = self.opts.zstd_level;
        flush(&mut self.sink, BlockKind::Strings, &mut self.strings, l)?;
        flush(&mut self.sink, BlockKind::Threads, &mut self.threads, l)?;
        flush(&mut self.sink, BlockKind::Processes, &mut self.processes, l)?;
        flush(&mut self.sink, BlockKind::Mappings, &mut self.mappings, l)?;
        flush(&mut self.sink, BlockKind::Frames, &mut self.frames, l)?;
        flush(&mut self.sink, BlockKind::Stacks, &mut self.stacks, l)?;
        flush(&mut self.sink, BlockKind::Flows, &mut self.flows, l)?;
        flush(&mut self.sink, BlockKind::Cgroups, &mut self.cgroups, l)?;
        Ok(())
    }

    fn flush_cpu(&mut self, c: usize) -> Result<()> {
        let mut evs = std::mem::take(&mut self.cpus[c]);
        if evs.is_empty() {
            return Ok(());
        }
        self.buffered -= evs.len();
        self.flush_tables()?;
        // Stable: events with equal timestamps keep their order (a stack follows its event).
        evs.sort_by_key(|e| e.ts);
        let first = evs[0].ts;
        let last = evs[evs.len() - 1].ts;
        if first.0 < self.last_written_ts[c] {
            self.stats.clock_inversions += evs
                .iter()
                .take_while(|e| e.ts.0 < self.last_written_ts[c])
                .count() as u64;
        }
        self.last_written_ts[c] = self.last_written_ts[c].max(last.0);
        let mut enc = ChunkEncoder::new(first);
        for e in &evs {
            enc.push(e);
        }
        let count = enc.count;
        let raw = enc.into_bytes();
        self.sink.write_block(
            BlockKind::Events,
            c as u32,
            count,
            (first.0, last.0),
            &raw,
            Some(self.opts.zstd_level),
        )?;
        // Keep the allocation for the next chunk of this CPU.
        evs.clear();
        self.cpus[c] = evs;
        Ok(())
    }

    /// Write every buffered event (as chunks) and table row, and empty the write buffer
    /// into the output, which is returned so the caller can make it durable. A file
    /// cut short after a checkpoint keeps everything pushed before it (the recorder
    /// calls this about once a second). Costs smaller chunks: compression is per chunk.
    pub fn checkpoint(&mut self) -> Result<&mut W> {
        for c in 0..self.cpus.len() {
            self.flush_cpu(c)?;
        }
        self.flush_tables()?;
        self.sink.flush()
    }

    /// Bytes written to the output so far (buffered ones included).
    pub fn position(&self) -> u64 {
        self.sink.position()
    }

    /// Write everything buffered, the statistics, the index and the trailer.
    pub fn finish(mut self) -> Result<W> {
        for c in 0..self.cpus.len() {
            self.flush_cpu(c)?;
        }
        self.flush_tables()?;
        let json = serde_json::to_vec(&self.stats)
            .map_err(|e| FormatError::Invalid(format!("stats do not serialize: {e}")))?;
        self.sink
            .write_block(BlockKind::Stats, u32::MAX, 1, (0, 0), &json, None)?;
        self.sink.finish()
    }
}

/// Convenience: write a whole trace of `events` (and no table rows) to a byte vector.
/// Used by tests and synthetic trace builders.
pub fn write_to_vec(header: &Header, events: &[Event], opts: WriterOptions) -> Result<Vec<u8>> {
    let mut w = TraceWriter::with_options(Vec::new(), header, opts)?;
    for e in events {
        w.push(e)?;
    }
    w.finish()
}
