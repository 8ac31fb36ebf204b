//! Trace reader: header, index and tables at open; event chunks on demand, merged
//! across CPUs into one time-ordered stream.
//!
//! Every failure names the byte offset and, inside a block, the block number. Nothing
//! in the file is trusted: lengths are checked against the file size before any
//! allocation, so no input makes the reader panic or exhaust memory.

use crate::block::{BLOCK_HEADER_LEN, BlockHeader, BlockKind};
use crate::bytes::ByteReader;
use crate::codec::{DecodeFail, DecodeState, PLACEHOLDER, Stop};
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
use std::hint::select_unpredictable;
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

/// The index offset a 24-byte trailer holds, or why the trailer is not valid. The
/// reader and salvage both use it, so they agree on which trailers count.
pub(crate) fn parse_trailer(t: &[u8]) -> std::result::Result<u64, String> {
    if t.len() != TRAILER_LEN || t.get(8..16) != Some(&TRAILER_MAGIC[..]) {
        return Err("no trailer magic at the end".into());
    }
    let crc = u32::from_le_bytes([t[16], t[17], t[18], t[19]]);
    if crc32fast::hash(&t[0..16]) != crc {
        return Err("trailer checksum mismatch".into());
    }
    let mut ob = [0u8; 8];
    ob.copy_from_slice(&t[0..8]);
    Ok(u64::from_le_bytes(ob))
}

/// The blocks an index lists must follow one another from the end of the header to the
/// index block, as every writer lays them out: bytes the index does not account for
/// would be damage the reader never looks at, and `causeway check` (which walks every
/// byte) would then disagree with it.
fn check_contiguous(idx: &[IndexEntry], header_end: u64, index_offset: u64) -> Result<()> {
    let mut expect = header_end;
    for (i, e) in idx.iter().enumerate() {
        if e.offset != expect {
            return Err(FormatError::Corrupt {
                offset: e.offset,
                chunk: Some(i),
                what: "block index",
                detail: format!(
                    "block {i} starts at byte {} but the block before it ends at {expect}",
                    e.offset
                ),
            });
        }
        expect = e.offset.saturating_add(e.len);
    }
    if expect != index_offset {
        return Err(FormatError::Corrupt {
            offset: index_offset,
            chunk: None,
            what: "block index",
            detail: format!(
                "the indexed blocks end at byte {expect}, the index block starts at {index_offset}"
            ),
        });
    }
    Ok(())
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

/// Slack allowed beyond the sizes below: the rows of lost blocks in a small file.
const ID_GAP_SLACK: u64 = 1_000_000;

/// Whether a table block whose ids start at `start`, `gap` ids after the last loaded
/// row, can be loaded by padding the gap: never more rows than a lost block could
/// plausibly have held (hostile ranges), and the total capped by the file size too
/// (several index entries may name the same block). Salvage uses the same rule so it
/// never writes a file the reader rejects.
pub(crate) fn plausible_id_gap(gap: u64, start: u64, raw_len: u64, file_len: u64) -> bool {
    gap <= raw_len.saturating_add(ID_GAP_SLACK) && start <= file_len.saturating_add(ID_GAP_SLACK)
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
    let gap = start - table.len() as u64;
    if !plausible_id_gap(gap, start, raw_len as u64, file_len) {
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
        let index_offset = parse_trailer(&t).map_err(missing)?;
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
        let idx = idx?;
        check_contiguous(&idx, header_end, index_offset)?;
        Ok(idx)
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
        let tag = self.header.file_tag();
        if h.tag != tag {
            return Err(corrupt(format!(
                "block belongs to another file (file tag {:#06x}, this file's is {tag:#06x}); \
                 files concatenated? `causeway check` salvages each",
                h.tag
            )));
        }
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
        // Read into the buffer's spare capacity: no zeroing of bytes about to be read.
        self.buf.clear();
        self.buf.reserve(h.payload_len as usize);
        let got = (&mut self.src)
            .take(h.payload_len as u64)
            .read_to_end(&mut self.buf)?;
        if got != h.payload_len as usize {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        }
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
                Some(&|| {
                    Frame::new(
                        FrameSpace::Kernel,
                        0,
                        Default::default(),
                        Default::default(),
                        0,
                    )
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
            BlockKind::Flows => load_rows(
                &mut t.flows,
                &raw,
                e,
                i,
                Some(&crate::sockets::Flow::missing),
                file_len,
            ),
            BlockKind::Cgroups => load_rows(&mut t.cgroups, &raw, e, i, None, file_len),
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
        let mut batch = [PLACEHOLDER; 64];
        let r = loop {
            let (n, stop) = st.fill(&self.raw, c.cpu, &mut batch);
            out.extend_from_slice(batch.get(..n).unwrap_or(&[]));
            match stop {
                Stop::Full => {}
                Stop::End => break chunk_end(&c, &st),
                Stop::Fail(f) => break Err(chunk_corrupt(&c, f)),
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

/// Events a lane decodes at a time (a power of two).
const BATCH: usize = 32;

/// Key of an empty lane (or of a real event at the last possible time; see
/// [`MergedEvents`] for how the two are told apart).
const NO_KEY: u64 = u64::MAX;

/// One chunk taking part in the merge: its decompressed bytes, decoded a batch ahead.
struct Lane {
    raw: Vec<u8>,
    st: DecodeState,
    /// Decoded events; `buf[next..len]` are still to be merged.
    buf: Box<[Event; BATCH]>,
    next: usize,
    len: usize,
    /// True while the lane holds a chunk.
    active: bool,
    /// Position of the chunk among the merged chunks ordered by CPU, then by position
    /// in file order: the tie-break between events at the same time.
    rank: u32,
    /// What follows the buffered events: `None` more of the chunk, `Some(Ok)` nothing,
    /// `Some(Err)` an error to report.
    stop: Option<Result<()>>,
    info: ChunkInfo,
}

impl Default for Lane {
    fn default() -> Self {
        Lane {
            raw: Vec::new(),
            st: DecodeState::new(Timestamp(0)),
            buf: Box::new([PLACEHOLDER; BATCH]),
            next: 0,
            len: 0,
            active: false,
            rank: u32::MAX,
            stop: None,
            info: ChunkInfo {
                block: 0,
                cpu: Cpu(0),
                count: 0,
                first: Timestamp(0),
                last: Timestamp(0),
                offset: 0,
                len: 0,
            },
        }
    }
}

impl Lane {
    /// Time of the lane's next event, [`NO_KEY`] if it has none buffered.
    #[inline]
    fn head_key(&self) -> u64 {
        if self.next < self.len {
            self.buf[self.next % BATCH].ts.0
        } else {
            NO_KEY
        }
    }
}

/// Iterator over events merged across CPUs in time order (ties broken by CPU number,
/// then by the order in which they were written). Yields an error once and then stops.
///
/// Every chunk is a sorted run of its own. Chunks wait in `pending`, sorted by their
/// first timestamp, and are read only when that time comes up; a chunk in the merge
/// keeps its decompressed bytes and is decoded a small batch of events at a time. So
/// only the chunks overlapping the current time are in memory (normally one per CPU),
/// and chunks of one CPU that overlap in time (events that arrived late) still merge
/// into one sorted stream.
///
/// The chunks being read sit in the lanes of a loser tree, which finds the earliest
/// next event in log2(lanes) comparisons of timestamps. Lanes are kept in the order of
/// their chunks' ranks, active lanes first, so on equal times the left one wins: that
/// is the tie-break by CPU and file position, and an empty lane (key `u64::MAX`) never
/// beats an event at time `u64::MAX`.
pub struct MergedEvents<'r, R> {
    reader: &'r mut TraceReader<R>,
    range: TimeRange,
    /// Chunks overlapping `range` as (first time, rank, chunk), in that order.
    pending: Vec<(u64, u32, usize)>,
    next_pending: usize,
    lanes: Vec<Lane>,
    /// Loser tree over the lanes: `tree[n]` for `n` in `1..lanes.len()` holds the key
    /// and lane that lost the match at node `n` (children `2n` and `2n + 1`; node
    /// `lanes.len() + i` is lane `i`).
    tree: Vec<(u64, usize)>,
    /// Levels of the tree: log2(lanes.len()).
    depth: u32,
    /// The overall winner: the time and lane of the next event.
    root: (u64, usize),
    /// [`MergedEvents::next`] takes the slow path when `root.0 >= slow`: always (0)
    /// after an error, when the next pending chunk starts no later than the next event,
    /// and at time [`NO_KEY`] (the end).
    slow: u64,
    /// Byte buffers of finished chunks, for reuse.
    spare: Vec<Vec<u8>>,
    /// An error met while decoding ahead, reported after the event before it.
    deferred: Option<FormatError>,
    failed: bool,
    /// The lane whose head was yielded last and has yet to move on, or [`NO_LANE`].
    taken: usize,
}

/// No lane.
const NO_LANE: usize = usize::MAX;

impl<'r, R: Read + Seek> MergedEvents<'r, R> {
    fn new(reader: &'r mut TraceReader<R>, range: TimeRange) -> Self {
        let chunks = &reader.chunks;
        let mut by_cpu: Vec<usize> = chunks
            .iter()
            .enumerate()
            .filter(|(_, c)| c.last >= range.start && c.first <= range.end)
            .map(|(i, _)| i)
            .collect();
        by_cpu.sort_unstable_by_key(|&i| (chunks.get(i).map_or(0, |c| c.cpu.0), i));
        let mut pending: Vec<(u64, u32, usize)> = by_cpu
            .iter()
            .enumerate()
            .filter_map(|(rank, &i)| {
                let rank = rank.min(u32::MAX as usize - 1) as u32;
                chunks.get(i).map(|c| (c.first.0, rank, i))
            })
            .collect();
        pending.sort_unstable();
        let mut cpus: Vec<u32> = by_cpu
            .iter()
            .filter_map(|&i| chunks.get(i).map(|c| c.cpu.0))
            .collect();
        cpus.dedup();
        let mut m = MergedEvents {
            reader,
            range,
            pending,
            next_pending: 0,
            lanes: Vec::new(),
            tree: Vec::new(),
            depth: 0,
            root: (NO_KEY, 0),
            slow: 0,
            spare: Vec::new(),
            deferred: None,
            failed: false,
            taken: NO_LANE,
        };
        let cap = cpus.len().clamp(2, 1 << 10).next_power_of_two();
        m.lanes.resize_with(cap, Lane::default);
        m.rebuild();
        m.update_slow();
        m
    }

    /// Put the active lanes first, in rank order, and play every match again (after a
    /// lane joined or left: O(lanes), once per chunk).
    fn rebuild(&mut self) {
        // Stable, and ranks are distinct: the order is fully determined.
        self.lanes.sort_by_key(|l| (!l.active, l.rank));
        let cap = self.lanes.len();
        self.depth = cap.trailing_zeros();
        // winners[n] is the winner of the subtree at node n; leaves are cap..2cap.
        let mut winners = vec![(NO_KEY, 0usize); 2 * cap];
        for (l, (w, lane)) in winners[cap..].iter_mut().zip(&self.lanes).enumerate() {
            *w = (lane.head_key(), l);
        }
        self.tree.clear();
        self.tree.resize(cap, (NO_KEY, 0));
        for n in (1..cap).rev() {
            let (a, b) = (winners[2 * n], winners[2 * n + 1]);
            // The left side wins ties.
            let (win, lose) = if b.0 < a.0 { (b, a) } else { (a, b) };
            winners[n] = win;
            self.tree[n] = lose;
        }
        self.root = winners.get(1).copied().unwrap_or((NO_KEY, 0));
    }

    /// The winner, lane `l`, now has key `k`: replay its matches up to the root.
    #[inline(always)]
    fn replay(&mut self, l: usize, k: u64) {
        let (mut wk, mut wl) = (k, l);
        let mut child = l + self.tree.len();
        for _ in 0..self.depth {
            let n = child / 2;
            if let Some(node) = self.tree.get_mut(n) {
                let (hk, hl) = *node;
                // The key stored here comes from the other child: it wins if smaller,
                // or equal and from the left (the winner came up from the right).
                let lost = (hk < wk) | ((hk == wk) & (child & 1 == 1));
                // Which side wins is unpredictable when CPUs interleave: conditional
                // moves, not branches.
                *node = (
                    select_unpredictable(lost, wk, hk),
                    select_unpredictable(lost, wl, hl),
                );
                wk = select_unpredictable(lost, hk, wk);
                wl = select_unpredictable(lost, hl, wl);
            }
            child = n;
        }
        self.root = (wk, wl);
    }

    /// Set [`MergedEvents::slow`] from the error state and the next pending chunk.
    fn update_slow(&mut self) {
        self.slow = if self.failed || self.deferred.is_some() {
            0
        } else {
            match self.pending.get(self.next_pending) {
                Some(&(first, _, _)) => first,
                None => NO_KEY,
            }
        };
    }

    /// Read chunk `ci` and give it a lane positioned on its first event in range.
    fn activate(&mut self, ci: usize, rank: u32) -> Result<()> {
        let info = self.reader.load_chunk(ci)?;
        // Inactive lanes are at the end.
        if self.lanes.last().is_none_or(|l| l.active) {
            let cap = (self.lanes.len() * 2).max(2);
            self.lanes.resize_with(cap, Lane::default);
        }
        let l = self.lanes.iter().position(|l| !l.active).unwrap_or(0);
        let mut raw = self.spare.pop().unwrap_or_default();
        std::mem::swap(&mut raw, &mut self.reader.raw);
        if let Some(lane) = self.lanes.get_mut(l) {
            lane.raw = raw;
            lane.st = DecodeState::new(info.first);
            lane.info = info;
            lane.rank = rank;
            lane.active = true;
            lane.next = 0;
            lane.len = 0;
            lane.stop = None;
        }
        if self.refill(l).is_some() {
            self.rebuild();
        }
        Ok(())
    }

    /// Decode lane `l`'s next batch of events in range: the time of its next event, or
    /// `None` when it is done (the lane is then freed and the tree rebuilt, and an error
    /// it met deferred).
    #[inline(never)]
    fn refill(&mut self, l: usize) -> Option<u64> {
        let range = self.range;
        let lane = self.lanes.get_mut(l)?;
        loop {
            if let Some(stop) = lane.stop.take() {
                self.reader.skipped_unknown_events += lane.st.skipped_unknown;
                self.spare.push(std::mem::take(&mut lane.raw));
                lane.next = 0;
                lane.len = 0;
                lane.active = false;
                lane.rank = u32::MAX;
                if let Err(err) = stop {
                    self.deferred = Some(err);
                    self.slow = 0;
                }
                self.rebuild();
                return None;
            }
            let (n, stop) = lane.st.fill(&lane.raw, lane.info.cpu, &mut lane.buf[..]);
            lane.stop = match stop {
                Stop::Full => None,
                Stop::End => Some(chunk_end(&lane.info, &lane.st)),
                Stop::Fail(f) => Some(Err(chunk_corrupt(&lane.info, f))),
            };
            let evs = lane.buf.get(..n).unwrap_or(&[]);
            let (mut next, mut len) = (0, n);
            // Times never decrease within a chunk: skip the events before the range and
            // stop at the first one after it.
            if let (Some(first), Some(last)) = (evs.first(), evs.last())
                && (first.ts < range.start || last.ts > range.end)
            {
                len = evs.partition_point(|e| e.ts <= range.end);
                next = evs.partition_point(|e| e.ts < range.start).min(len);
                if len < n {
                    lane.stop = Some(Ok(()));
                }
            }
            lane.next = next;
            lane.len = len;
            if next < len {
                return Some(lane.head_key());
            }
        }
    }

    /// Move lane `taken` (that yielded the last event, or [`NO_LANE`]) on to its next
    /// event and replay its matches.
    #[inline(always)]
    fn advance(&mut self) {
        let l = self.taken;
        let Some(lane) = self.lanes.get_mut(l) else {
            return;
        };
        self.taken = NO_LANE;
        lane.next += 1;
        if lane.next < lane.len {
            let k = lane.buf[lane.next % BATCH].ts.0;
            self.replay(l, k);
        } else if let Some(k) = self.refill(l) {
            self.replay(l, k);
        }
    }

    /// The next event: the head of lane `w`, which moves on at the next call. Leaving
    /// the lane alone until then lets the event go straight from the lane to the caller.
    #[inline(always)]
    fn take(&mut self, w: usize) -> Option<Event> {
        self.taken = w;
        self.lanes
            .get(w)
            .filter(|lane| lane.next < lane.len)
            .map(|lane| lane.buf[lane.next % BATCH])
    }

    /// Everything but the common case: errors, chunks joining the merge, the end.
    #[cold]
    #[inline(never)]
    fn next_slow(&mut self) -> Option<Result<Event>> {
        loop {
            if self.failed {
                return None;
            }
            if let Some(err) = self.deferred.take() {
                self.failed = true;
                self.slow = 0;
                return Some(Err(err));
            }
            let (wk, w) = self.root;
            let wrank = self.lanes.get(w).map_or(u32::MAX, |l| l.rank);
            if let Some(&(first, rank, ci)) = self.pending.get(self.next_pending)
                && (first, rank) < (wk, wrank)
            {
                self.next_pending += 1;
                if let Err(err) = self.activate(ci, rank) {
                    self.failed = true;
                    self.slow = 0;
                    return Some(Err(err));
                }
                continue;
            }
            self.update_slow();
            // At time NO_KEY the winner may be an empty lane: then all are.
            return self.take(w).map(Ok);
        }
    }
}

impl<R: Read + Seek> Iterator for MergedEvents<'_, R> {
    type Item = Result<Event>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.advance();
        let (wk, w) = self.root;
        if wk >= self.slow {
            return self.next_slow();
        }
        self.take(w).map(Ok)
    }
}
