//! Trace reader: header, index and tables at open; event chunks on demand, merged
//! across CPUs into one time-ordered stream.
//!
//! Every failure names the byte offset and, inside a block, the block number. Nothing
//! in the file is trusted: lengths are checked against the file size before any
//! allocation, so no input makes the reader panic or exhaust memory.

use crate::block::{BLOCK_HEADER_LEN, BlockHeader, BlockKind};
use crate::bytes::ByteReader;
use crate::codec::{DecodeFail, DecodeState};
use crate::error::{FormatError, Result};
use crate::event::Event;
use crate::header::{Header, TraceStats};
use crate::ids::{Cpu, Timestamp};
use crate::table_codec::{Row, get_row};
use crate::tables::{Frame, FrameSpace, Stack, Tables};
use crate::writer::IndexEntry;
use crate::{
    FILE_HEADER_FIXED_LEN, FILE_MAGIC, MAX_HEADER_JSON, TRAILER_LEN, TRAILER_MAGIC, VERSION_MAJOR,
};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// A time interval `[start, end]`, both inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeRange {
    /// First included time.
    pub start: Timestamp,
    /// Last included time.
    pub end: Timestamp,
}

impl TimeRange {
    /// Everything.
    pub const ALL: TimeRange = TimeRange {
        start: Timestamp(0),
        end: Timestamp(u64::MAX),
    };
    /// True if `ts` is inside.
    pub fn contains(&self, ts: Timestamp) -> bool {
        self.start <= ts && ts <= self.end
    }
}

/// An event chunk as listed in the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkInfo {
    /// Position of the block among all blocks of the file.
    pub block: usize,
    /// The CPU.
    pub cpu: Cpu,
    /// Events in the chunk.
    pub count: u32,
    /// First event time.
    pub first: Timestamp,
    /// Last event time.
    pub last: Timestamp,
    /// Byte offset of the block.
    pub offset: u64,
    /// Length of the block in bytes.
    pub len: u64,
}

/// Parsed fixed part of the file: version and header.
pub(crate) fn parse_file_header(data: &[u8]) -> Result<(u16, Header, u64)> {
    if data.len() < 8 || data[0..8] != FILE_MAGIC {
        if data.len() < 8 && FILE_MAGIC.starts_with(data) {
            return Err(FormatError::Truncated {
                offset: data.len() as u64,
                what: "file header",
                need: FILE_HEADER_FIXED_LEN as u64,
                have: data.len() as u64,
            });
        }
        return Err(FormatError::NotATrace);
    }
    if data.len() < FILE_HEADER_FIXED_LEN {
        return Err(FormatError::Truncated {
            offset: data.len() as u64,
            what: "file header",
            need: FILE_HEADER_FIXED_LEN as u64,
            have: data.len() as u64,
        });
    }
    let major = u16::from_le_bytes([data[8], data[9]]);
    let minor = u16::from_le_bytes([data[10], data[11]]);
    if major != VERSION_MAJOR {
        return Err(FormatError::UnsupportedVersion {
            major,
            minor,
            supported: VERSION_MAJOR,
        });
    }
    let json_len = u32::from_le_bytes([data[12], data[13], data[14], data[15]]) as usize;
    let crc = u32::from_le_bytes([data[16], data[17], data[18], data[19]]);
    if json_len > MAX_HEADER_JSON {
        return Err(FormatError::Corrupt {
            offset: 12,
            chunk: None,
            what: "file header",
            detail: format!("header length {json_len} exceeds {MAX_HEADER_JSON}"),
        });
    }
    let end = FILE_HEADER_FIXED_LEN + json_len;
    let Some(json) = data.get(FILE_HEADER_FIXED_LEN..end) else {
        return Err(FormatError::Truncated {
            offset: FILE_HEADER_FIXED_LEN as u64,
            what: "file header",
            need: json_len as u64,
            have: data.len().saturating_sub(FILE_HEADER_FIXED_LEN) as u64,
        });
    };
    let corrupt = |detail: String| FormatError::Corrupt {
        offset: FILE_HEADER_FIXED_LEN as u64,
        chunk: None,
        what: "file header",
        detail,
    };
    if crc32fast::hash(json) != crc {
        return Err(corrupt("checksum mismatch".into()));
    }
    let header: Header =
        serde_json::from_slice(json).map_err(|e| corrupt(format!("bad header JSON: {e}")))?;
    Ok((minor, header, end as u64))
}

/// Decode the payload of an index block.
pub(crate) fn parse_index(raw: &[u8], offset: u64, file_len: u64) -> Result<Vec<IndexEntry>> {
    let mut r = ByteReader::new(raw);
    let mut out = Vec::new();
    while !r.is_empty() {
        let pos = r.pos();
        let e = (|| {
            Ok::<_, crate::bytes::ReadFail>(IndexEntry {
                kind: BlockKind::from_code(r.u8()?),
                cpu: r.varint_u32()?,
                count: r.varint_u32()?,
                range_start: r.varint()?,
                range_end: r.varint()?,
                offset: r.varint()?,
                len: r.varint()?,
            })
        })()
        .map_err(|f| FormatError::Corrupt {
            offset,
            chunk: None,
            what: "block index",
            detail: format!("entry at index byte {pos}: {}", f.text()),
        })?;
        if e.offset.checked_add(e.len).is_none_or(|end| end > file_len)
            || e.len < BLOCK_HEADER_LEN as u64
        {
            return Err(FormatError::Corrupt {
                offset,
                chunk: Some(out.len()),
                what: "block index",
                detail: format!(
                    "entry points at bytes {}..+{} outside the {file_len}-byte file",
                    e.offset, e.len
                ),
            });
        }
        out.push(e);
    }
    Ok(out)
}

/// Append decoded rows of a table block to `table`, padding gaps left by lost blocks.
///
/// `pad` is given for id tables (strings, frames, stacks), whose rows are referred to by
/// position; row tables (threads, processes, mappings) are not, so a gap is harmless.
fn load_rows<T: Row>(
    table: &mut Vec<T>,
    raw: &[u8],
    e: &IndexEntry,
    block: usize,
    pad: Option<&dyn Fn() -> T>,
    file_len: u64,
) -> Result<()> {
    let corrupt = |detail: String| FormatError::Corrupt {
        offset: e.offset,
        chunk: Some(block),
        what: "table block",
        detail,
    };
    let start = e.range_start;
    if let Some(pad) = pad {
        pad_to(table, start, raw.len(), file_len, pad).map_err(corrupt)?;
    }
    let mut r = ByteReader::new(raw);
    while !r.is_empty() {
        let pos = r.pos();
        let row = get_row::<T>(&mut r)
            .map_err(|f| corrupt(format!("row at payload byte {pos}: {}", f.text())))?;
        table.push(row);
    }
    Ok(())
}

fn pad_to<T>(
    table: &mut Vec<T>,
    start: u64,
    raw_len: usize,
    file_len: u64,
    pad: &dyn Fn() -> T,
) -> Result<(), String> {
    if start < table.len() as u64 {
        return Err(format!(
            "ids start at {start} but {} are already loaded",
            table.len()
        ));
    }
    // Never pad more rows than a lost block could plausibly have held (hostile ranges).
    let gap = start - table.len() as u64;
    // The total is capped too: several index entries may name the same block.
    if gap > raw_len as u64 + 1_000_000 || start > file_len + 1_000_000 {
        return Err(format!("implausible id gap of {gap}"));
    }
    for _ in 0..gap {
        table.push(pad());
    }
    Ok(())
}

/// Reads a trace.
pub struct TraceReader<R> {
    src: R,
    file_len: u64,
    minor: u16,
    header: Header,
    tables: Tables,
    stats: TraceStats,
    index: Vec<IndexEntry>,
    chunks: Vec<ChunkInfo>,
    skipped_unknown_events: u64,
    skipped_unknown_blocks: u64,
    buf: Vec<u8>,
    raw: Vec<u8>,
    /// zstd context reused for every block this reader decompresses.
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl TraceReader<BufReader<File>> {
    /// Open a trace file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let f = File::open(path.as_ref())?;
        Self::new(BufReader::with_capacity(1 << 16, f))
    }
}

impl<'a> TraceReader<std::io::Cursor<&'a [u8]>> {
    /// Read a trace held in memory.
    pub fn from_bytes(data: &'a [u8]) -> Result<Self> {
        Self::new(std::io::Cursor::new(data))
    }
}

impl<R: Read + Seek> TraceReader<R> {
    /// Read header, index and tables from `src`.
    pub fn new(mut src: R) -> Result<Self> {
        let file_len = src.seek(SeekFrom::End(0))?;
        src.seek(SeekFrom::Start(0))?;
        let mut head =
            vec![0u8; (file_len.min((FILE_HEADER_FIXED_LEN + MAX_HEADER_JSON) as u64)) as usize];
        src.read_exact(&mut head)?;
        let (minor, header, header_end) = parse_file_header(&head)?;
        drop(head);
        let mut rd = TraceReader {
            src,
            file_len,
            minor,
            header,
            tables: Tables::default(),
            stats: TraceStats::default(),
            index: Vec::new(),
            chunks: Vec::new(),
            skipped_unknown_events: 0,
            skipped_unknown_blocks: 0,
            buf: Vec::new(),
            raw: Vec::new(),
            zstd: None,
        };
        rd.index = rd.read_footer(header_end)?;
        rd.load_tables()?;
        Ok(rd)
    }

    fn read_footer(&mut self, header_end: u64) -> Result<Vec<IndexEntry>> {
        let missing = |detail: String| FormatError::MissingFooter {
            file_len: self.file_len,
            detail,
        };
        if self.file_len < header_end + TRAILER_LEN as u64 {
            return Err(missing("file is shorter than header plus trailer".into()));
        }
        let mut t = [0u8; TRAILER_LEN];
        self.src
            .seek(SeekFrom::Start(self.file_len - TRAILER_LEN as u64))?;
        self.src.read_exact(&mut t)?;
        if t[8..16] != TRAILER_MAGIC {
            return Err(missing("no trailer magic at the end".into()));
        }
        let crc = u32::from_le_bytes([t[16], t[17], t[18], t[19]]);
        if crc32fast::hash(&t[0..16]) != crc {
            return Err(missing("trailer checksum mismatch".into()));
        }
        let mut ob = [0u8; 8];
        ob.copy_from_slice(&t[0..8]);
        let index_offset = u64::from_le_bytes(ob);
        let trailer_at = self.file_len - TRAILER_LEN as u64;
        if index_offset < header_end || index_offset >= trailer_at {
            return Err(missing(format!(
                "index offset {index_offset} is outside the file"
            )));
        }
        let entry = IndexEntry {
            kind: BlockKind::Index,
            cpu: u32::MAX,
            count: 0,
            range_start: 0,
            range_end: 0,
            offset: index_offset,
            len: trailer_at - index_offset,
        };
        let (h, _) = self.read_block_raw(&entry, usize::MAX)?;
        if h.kind != BlockKind::Index {
            return Err(FormatError::Corrupt {
                offset: index_offset,
                chunk: None,
                what: "block index",
                detail: format!("trailer points at a {} block", h.kind.name()),
            });
        }
        let raw = std::mem::take(&mut self.raw);
        let idx = parse_index(&raw, index_offset, self.file_len);
        self.raw = raw;
        idx
    }

    /// Read, verify and decompress block `e` into `self.raw`.
    fn read_block_raw(&mut self, e: &IndexEntry, block: usize) -> Result<(BlockHeader, ())> {
        let chunk = (block != usize::MAX).then_some(block);
        let mut hb = [0u8; BLOCK_HEADER_LEN];
        if e.offset + BLOCK_HEADER_LEN as u64 > self.file_len {
            return Err(FormatError::Truncated {
                offset: e.offset,
                what: "block header",
                need: BLOCK_HEADER_LEN as u64,
                have: self.file_len.saturating_sub(e.offset),
            });
        }
        self.src.seek(SeekFrom::Start(e.offset))?;
        self.src.read_exact(&mut hb)?;
        let h = BlockHeader::decode(&hb, e.offset).map_err(|err| with_chunk(err, chunk))?;
        let corrupt = |detail: String| FormatError::Corrupt {
            offset: e.offset,
            chunk,
            what: "block",
            detail,
        };
        if BLOCK_HEADER_LEN as u64 + h.payload_len as u64 != e.len {
            return Err(corrupt(format!(
                "block is {} bytes but the index says {}",
                BLOCK_HEADER_LEN as u64 + h.payload_len as u64,
                e.len
            )));
        }
        if e.kind != BlockKind::Index
            && (h.kind != e.kind
                || h.count != e.count
                || h.cpu != e.cpu
                || h.range_start != e.range_start
                || h.range_end != e.range_end)
        {
            return Err(corrupt("block header disagrees with the index".into()));
        }
        self.buf.clear();
        self.buf.resize(h.payload_len as usize, 0);
        self.src.read_exact(&mut self.buf)?;
        if !h.verify(&hb, &self.buf) {
            return Err(corrupt("checksum mismatch".into()));
        }
        h.decompress_with(&self.buf, &mut self.raw, e.offset, &mut self.zstd)
            .map_err(|err| with_chunk(err, chunk))?;
        Ok((h, ()))
    }

    fn load_tables(&mut self) -> Result<()> {
        let index = std::mem::take(&mut self.index);
        let mut result = Ok(());
        for (i, e) in index.iter().enumerate() {
            let r = match e.kind {
                BlockKind::Events => {
                    self.chunks.push(ChunkInfo {
                        block: i,
                        cpu: Cpu(e.cpu),
                        count: e.count,
                        first: Timestamp(e.range_start),
                        last: Timestamp(e.range_end),
                        offset: e.offset,
                        len: e.len,
                    });
                    Ok(())
                }
                BlockKind::Index => Ok(()),
                BlockKind::Unknown(_) => {
                    self.skipped_unknown_blocks += 1;
                    Ok(())
                }
                _ => self.load_table_block(e, i),
            };
            if r.is_err() {
                result = r;
                break;
            }
        }
        self.index = index;
        result
    }

    fn load_table_block(&mut self, e: &IndexEntry, i: usize) -> Result<()> {
        self.read_block_raw(e, i)?;
        let raw = std::mem::take(&mut self.raw);
        let file_len = self.file_len;
        let t = &mut self.tables;
        let r = match e.kind {
            BlockKind::Strings => load_rows(
                &mut t.strings,
                &raw,
                e,
                i,
                Some(&|| crate::tables::MISSING.to_string()),
                file_len,
            ),
            BlockKind::Threads => load_rows(&mut t.threads, &raw, e, i, None, file_len),
            BlockKind::Processes => load_rows(&mut t.processes, &raw, e, i, None, file_len),
            BlockKind::Mappings => load_rows(&mut t.mappings, &raw, e, i, None, file_len),
            BlockKind::Frames => load_rows(
                &mut t.frames,
                &raw,
                e,
                i,
                Some(&|| Frame {
                    space: FrameSpace::Kernel,
                    addr: 0,
                    module: Default::default(),
                    symbol: Default::default(),
                    sym_offset: 0,
                }),
                file_len,
            ),
            BlockKind::Stacks => load_rows(
                &mut t.stacks,
                &raw,
                e,
                i,
                Some(&|| Stack {
                    frames: Vec::new(),
                    truncated: true,
                }),
                file_len,
            ),
            BlockKind::Stats => serde_json::from_slice(&raw)
                .map(|s| self.stats = s)
                .map_err(|err| FormatError::Corrupt {
                    offset: e.offset,
                    chunk: Some(i),
                    what: "statistics block",
                    detail: err.to_string(),
                }),
            _ => Ok(()),
        };
        self.raw = raw;
        r
    }

    /// Format minor version of the file.
    pub fn minor_version(&self) -> u16 {
        self.minor
    }
    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }
    /// All tables.
    pub fn tables(&self) -> &Tables {
        &self.tables
    }
    /// End-of-trace statistics.
    pub fn stats(&self) -> &TraceStats {
        &self.stats
    }
    /// Event chunks in file order.
    pub fn chunks(&self) -> &[ChunkInfo] {
        &self.chunks
    }
    /// The whole block index.
    pub fn index(&self) -> &[IndexEntry] {
        &self.index
    }
    /// File size in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }
    /// Events of unknown kinds skipped so far (from a newer minor version).
    pub fn skipped_unknown_events(&self) -> u64 {
        self.skipped_unknown_events
    }
    /// Blocks of unknown kinds skipped (from a newer minor version).
    pub fn skipped_unknown_blocks(&self) -> u64 {
        self.skipped_unknown_blocks
    }
    /// Number of events according to the index.
    pub fn event_count(&self) -> u64 {
        self.chunks.iter().map(|c| c.count as u64).sum()
    }
    /// First and last event time according to the index.
    pub fn time_range(&self) -> Option<(Timestamp, Timestamp)> {
        let first = self.chunks.iter().map(|c| c.first).min()?;
        let last = self.chunks.iter().map(|c| c.last).max()?;
        Some((first, last))
    }

    /// Decode chunk `i` (position in [`TraceReader::chunks`]) into `out` (appended).
    pub fn read_chunk_into(&mut self, i: usize, out: &mut Vec<Event>) -> Result<()> {
        let c = self.load_chunk(i)?;
        let mut st = DecodeState::new(c.first);
        // Every event takes at least three bytes: a hostile count cannot over-allocate.
        out.reserve((c.count as usize).min(self.raw.len() / 3));
        let r = loop {
            match st.next_event(&self.raw, c.cpu) {
                Ok(Some(ev)) => out.push(ev),
                Ok(None) => break chunk_end(&c, &st),
                Err(f) => break Err(chunk_corrupt(&c, f)),
            }
        };
        self.skipped_unknown_events += st.skipped_unknown;
        r
    }

    /// Read, check and decompress chunk `i` into `self.raw`.
    fn load_chunk(&mut self, i: usize) -> Result<ChunkInfo> {
        let Some(c) = self.chunks.get(i).copied() else {
            return Err(FormatError::Invalid(format!("no chunk {i}")));
        };
        let Some(e) = self.index.get(c.block).copied() else {
            return Err(FormatError::Invalid(format!("no block {}", c.block)));
        };
        self.read_block_raw(&e, c.block)?;
        Ok(c)
    }

    /// All events, merged over CPUs in time order (ties broken by CPU number).
    pub fn events(&mut self) -> MergedEvents<'_, R> {
        self.events_in(TimeRange::ALL)
    }

    /// Events in `range`, reading only the chunks that overlap it.
    pub fn events_in(&mut self, range: TimeRange) -> MergedEvents<'_, R> {
        MergedEvents::new(self, range)
    }
}

/// The error for an event chunk that fails to decode.
fn chunk_corrupt(c: &ChunkInfo, f: DecodeFail) -> FormatError {
    FormatError::Corrupt {
        offset: c.offset,
        chunk: Some(c.block),
        what: "event chunk",
        detail: format!("at decompressed byte {}: {}", f.pos, f.detail),
    }
}

/// Check, at the end of chunk `c`, that it held as many events as its header says.
fn chunk_end(c: &ChunkInfo, st: &DecodeState) -> Result<()> {
    let decoded = st.decoded + st.skipped_unknown;
    if decoded != c.count as u64 {
        return Err(FormatError::Corrupt {
            offset: c.offset,
            chunk: Some(c.block),
            what: "event chunk",
            detail: format!("holds {decoded} events, header says {}", c.count),
        });
    }
    Ok(())
}

fn with_chunk(err: FormatError, chunk: Option<usize>) -> FormatError {
    match err {
        FormatError::Corrupt {
            offset,
            what,
            detail,
            ..
        } => FormatError::Corrupt {
            offset,
            chunk,
            what,
            detail,
        },
        other => other,
    }
}

/// Merge key: time, then CPU, then position of the chunk in file order (so events of
/// one CPU with equal times keep the order they were written in), packed into one
/// integer as `ts << 64 | cpu << 32 | chunk` so a match is a single comparison.
type Key = u128;
/// Key of an empty lane; greater than every real key (see [`key`]).
const NO_KEY: Key = u128::MAX;

/// The merge key of an event at `ts` on `cpu` in chunk `chunk`. Chunk positions past
/// `u32::MAX - 1` (a file of over 170 GB) share one value and tie by lane instead.
#[inline]
fn key(ts: Timestamp, cpu: u32, chunk: usize) -> Key {
    let chunk = chunk.min(u32::MAX as usize - 1) as u128;
    (ts.0 as u128) << 64 | (cpu as u128) << 32 | chunk
}

/// One chunk taking part in the merge: its decompressed bytes, decoded one event ahead.
struct Lane {
    raw: Vec<u8>,
    st: DecodeState,
    /// The lane's next event (valid while its key is not [`NO_KEY`]).
    head: Event,
    info: ChunkInfo,
    /// Position of the chunk in [`TraceReader::chunks`].
    chunk: usize,
}

impl Default for Lane {
    fn default() -> Self {
        Lane {
            raw: Vec::new(),
            st: DecodeState::new(Timestamp(0)),
            head: Event {
                ts: Timestamp(0),
                cpu: Cpu(0),
                kind: crate::event::EventKind::Lost { count: 0 },
            },
            info: ChunkInfo {
                block: 0,
                cpu: Cpu(0),
                count: 0,
                first: Timestamp(0),
                last: Timestamp(0),
                offset: 0,
                len: 0,
            },
            chunk: 0,
        }
    }
}

/// Iterator over events merged across CPUs in time order (ties broken by CPU number,
/// then by the order in which they were written). Yields an error once and then stops.
///
/// Every chunk is a sorted run of its own. Chunks wait in `pending`, sorted by their
/// first timestamp, and are read only when that time comes up; a chunk in the merge
/// keeps its decompressed bytes and is decoded one event at a time. So only the chunks
/// overlapping the current time are in memory (normally one per CPU), and chunks of one
/// CPU that overlap in time (events that arrived late) still merge into one sorted
/// stream. The chunks being read sit in the lanes of a loser tree, which finds the
/// earliest next event in log2(lanes) comparisons.
pub struct MergedEvents<'r, R> {
    reader: &'r mut TraceReader<R>,
    range: TimeRange,
    /// Chunks overlapping `range` with their keys, in key order.
    pending: Vec<(Key, usize)>,
    next_pending: usize,
    lanes: Vec<Lane>,
    /// Key of each lane's next event ([`NO_KEY`] when the lane is empty).
    keys: Vec<Key>,
    /// Loser tree over the lanes: `tree[n]` for `n` in `1..lanes.len()` holds the key
    /// and lane that lost the match at node `n` (children `2n` and `2n + 1`; node
    /// `lanes.len() + i` is lane `i`), and `tree[0]` the overall winner.
    tree: Vec<(Key, usize)>,
    /// Empty lanes.
    free: Vec<usize>,
    /// Byte buffers of finished chunks, for reuse.
    spare: Vec<Vec<u8>>,
    /// An error met while decoding ahead, reported after the event before it.
    deferred: Option<FormatError>,
    failed: bool,
}

impl<'r, R: Read + Seek> MergedEvents<'r, R> {
    fn new(reader: &'r mut TraceReader<R>, range: TimeRange) -> Self {
        let mut pending: Vec<(Key, usize)> = reader
            .chunks
            .iter()
            .enumerate()
            .filter(|(_, c)| c.last >= range.start && c.first <= range.end)
            .map(|(i, c)| (key(c.first, c.cpu.0, i), i))
            .collect();
        pending.sort_unstable();
        let mut cpus: Vec<u32> = pending
            .iter()
            .filter_map(|&(_, i)| reader.chunks.get(i).map(|c| c.cpu.0))
            .collect();
        cpus.sort_unstable();
        cpus.dedup();
        let mut m = MergedEvents {
            reader,
            range,
            pending,
            next_pending: 0,
            lanes: Vec::new(),
            keys: Vec::new(),
            tree: Vec::new(),
            free: Vec::new(),
            spare: Vec::new(),
            deferred: None,
            failed: false,
        };
        m.grow(cpus.len().clamp(2, 1 << 10).next_power_of_two());
        m
    }

    /// Make room for `cap` lanes (a power of two) and rebuild the tree.
    fn grow(&mut self, cap: usize) {
        let old = self.lanes.len();
        self.lanes.resize_with(cap, Lane::default);
        self.keys.resize(cap, NO_KEY);
        self.free.extend((old..cap).rev());
        self.rebuild();
    }

    /// Play every match again from the lanes' keys (after a lane joined: O(lanes), once
    /// per chunk).
    fn rebuild(&mut self) {
        let cap = self.lanes.len();
        // winners[n] is the winner of the subtree at node n; leaves are cap..2cap.
        let mut winners = vec![(NO_KEY, 0usize); 2 * cap];
        for (l, &k) in self.keys.iter().enumerate() {
            winners[cap + l] = (k, l);
        }
        self.tree.clear();
        self.tree.resize(cap, (NO_KEY, 0));
        for n in (1..cap).rev() {
            let (a, b) = (winners[2 * n], winners[2 * n + 1]);
            let (win, lose) = if b.0 < a.0 { (b, a) } else { (a, b) };
            winners[n] = win;
            self.tree[n] = lose;
        }
        self.tree[0] = winners[1];
    }

    /// The winner, lane `l`, now has key `k`: replay its matches up to the root.
    #[inline]
    fn replay(&mut self, l: usize, k: Key) {
        let mut win = (k, l);
        let mut n = (l + self.lanes.len()) / 2;
        while n >= 1 {
            if let Some(node) = self.tree.get_mut(n) {
                // Branch-free: which side wins is unpredictable when CPUs interleave.
                let here = *node;
                let lost = here.0 < win.0;
                *node = if lost { win } else { here };
                win = if lost { here } else { win };
            }
            n /= 2;
        }
        if let Some(root) = self.tree.first_mut() {
            *root = win;
        }
    }

    /// Read chunk `ci` and give it a lane positioned on its first event in range.
    fn activate(&mut self, ci: usize) -> Result<()> {
        let info = self.reader.load_chunk(ci)?;
        let l = match self.free.pop() {
            Some(l) => l,
            None => {
                self.grow(self.lanes.len() * 2);
                self.free.pop().unwrap_or(0)
            }
        };
        let mut raw = self.spare.pop().unwrap_or_default();
        std::mem::swap(&mut raw, &mut self.reader.raw);
        let lane = &mut self.lanes[l];
        lane.raw = raw;
        lane.st = DecodeState::new(info.first);
        lane.info = info;
        lane.chunk = ci;
        self.keys[l] = self.advance(l)?;
        self.rebuild();
        Ok(())
    }

    /// Decode lane `l`'s next event in range; its key, or [`NO_KEY`] when it is done
    /// (the lane is then freed).
    #[inline]
    fn advance(&mut self, l: usize) -> Result<Key> {
        let lane = &mut self.lanes[l];
        let r = loop {
            match lane.st.next_event(&lane.raw, lane.info.cpu) {
                Ok(Some(e)) => {
                    if e.ts < self.range.start {
                        continue;
                    }
                    if e.ts > self.range.end {
                        break Ok(());
                    }
                    lane.head = e;
                    return Ok(key(e.ts, lane.info.cpu.0, lane.chunk));
                }
                Ok(None) => break chunk_end(&lane.info, &lane.st),
                Err(f) => break Err(chunk_corrupt(&lane.info, f)),
            }
        };
        self.reader.skipped_unknown_events += lane.st.skipped_unknown;
        self.spare.push(std::mem::take(&mut lane.raw));
        self.free.push(l);
        r.map(|()| NO_KEY)
    }

    #[inline]
    fn step(&mut self) -> Result<Option<Event>> {
        if let Some(err) = self.deferred.take() {
            return Err(err);
        }
        loop {
            let (wk, w) = self.tree[0];
            if let Some(&(pk, ci)) = self.pending.get(self.next_pending)
                && pk < wk
            {
                self.next_pending += 1;
                self.activate(ci)?;
                continue;
            }
            if wk == NO_KEY {
                return Ok(None);
            }
            let e = self.lanes[w].head;
            let k = match self.advance(w) {
                Ok(k) => k,
                Err(err) => {
                    self.deferred = Some(err);
                    NO_KEY
                }
            };
            self.keys[w] = k;
            self.replay(w, k);
            return Ok(Some(e));
        }
    }
}

impl<R: Read + Seek> Iterator for MergedEvents<'_, R> {
    type Item = Result<Event>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.step() {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}
