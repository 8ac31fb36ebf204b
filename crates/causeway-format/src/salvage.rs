//! Integrity check and salvage of damaged traces.
//!
//! [`scan`] walks the file block by block without trusting the index, verifies every
//! block's checksum (and decodes event chunks), and resynchronizes on the next block
//! magic after damage. [`write_salvaged`] copies every intact block into a new, valid
//! trace with a fresh index, so an interrupted or partly overwritten recording keeps
//! everything that can be trusted.

use crate::block::{BLOCK_HEADER_LEN, BLOCK_MAGIC, BlockHeader, BlockKind};
use crate::bytes::ByteReader;
use crate::codec::ChunkDecoder;
use crate::error::Result;
use crate::header::{Header, SalvageMark, TraceStats};
use crate::ids::{Cpu, Timestamp};
use crate::reader::{parse_file_header, parse_index, parse_trailer, plausible_id_gap};
use crate::table_codec::{Row, get_row};
use crate::tables::{Frame, Mapping, ProcessInfo, Stack, ThreadInfo};
use crate::writer::BlockSink;
use crate::{FILE_HEADER_FIXED_LEN, FILE_MAGIC, TRAILER_LEN};
use std::io::Write;

/// An intact block found by [`scan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScannedBlock {
    /// Byte offset of the block.
    pub offset: u64,
    /// Its parsed header.
    pub header: BlockHeader,
    /// Which of [`ScanReport::traces`] it belongs to.
    pub trace: usize,
}

impl ScannedBlock {
    /// Header plus payload length.
    pub fn len(&self) -> u64 {
        BLOCK_HEADER_LEN as u64 + self.header.payload_len as u64
    }
    /// Never empty (a block has at least its header).
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// A damaged byte range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// First damaged byte.
    pub offset: u64,
    /// Number of bytes skipped.
    pub len: u64,
    /// What was wrong at `offset`.
    pub detail: String,
}

/// One trace found in the file. A file normally holds one; concatenated files (`cat a
/// b`) hold several, told apart by their file headers and by the file tag every block
/// carries, and salvaged separately so that no trace gets another's blocks.
#[derive(Clone, Debug)]
pub struct ScannedTrace {
    /// Byte offset of its file header (or of its first block when the header is lost).
    pub offset: u64,
    /// Its header, or why it could not be read.
    pub header: std::result::Result<Header, String>,
    /// The file tag of its blocks.
    pub tag: u16,
    /// True if it ends with a valid trailer pointing at its intact index.
    pub has_trailer: bool,
    /// First and last event time of every chunk its intact index lists (the span of the
    /// whole original, damaged chunks included).
    pub index_span: Option<(u64, u64)>,
    /// True if its index lists exactly its intact blocks, as the reader requires.
    pub index_ok: bool,
    /// Table blocks whose ids overlap rows before them or leave an implausible gap:
    /// the reader refuses such a file (salvage leaves those blocks out).
    pub id_clashes: usize,
    /// Next free id of the id tables (strings, frames, stacks) while scanning.
    next_id: [u64; 4],
}

/// What [`scan`] found.
#[derive(Clone, Debug)]
pub struct ScanReport {
    /// File size.
    pub file_len: u64,
    /// The header of the first trace, or why it could not be read.
    pub header: std::result::Result<Header, String>,
    /// Intact blocks in file order (index blocks included), of every trace.
    pub blocks: Vec<ScannedBlock>,
    /// Damaged ranges, in file order.
    pub damage: Vec<Damage>,
    /// True if every trace in the file ends with a valid trailer.
    pub has_trailer: bool,
    /// The traces in the file, in file order (at least one).
    pub traces: Vec<ScannedTrace>,
    /// What the trace reader said when it refused the file (set by [`check`] only).
    pub reader_error: Option<String>,
}

impl ScanReport {
    /// True if the file is one trace, nothing is damaged, it was finished properly,
    /// and (after [`check`]) the reader reads it to the end.
    pub fn is_clean(&self) -> bool {
        self.header.is_ok()
            && self.damage.is_empty()
            && self.has_trailer
            && self.traces.len() == 1
            && self.traces.iter().all(|t| t.index_ok && t.id_clashes == 0)
            && self.reader_error.is_none()
    }
    /// Intact blocks of one kind.
    pub fn blocks_of(&self, kind: BlockKind) -> impl Iterator<Item = &ScannedBlock> {
        self.blocks.iter().filter(move |b| b.header.kind == kind)
    }
    /// Events in intact chunks.
    pub fn intact_events(&self) -> u64 {
        self.blocks_of(BlockKind::Events)
            .map(|b| b.header.count as u64)
            .sum()
    }
    /// Damaged bytes in all.
    pub fn damaged_bytes(&self) -> u64 {
        self.damage.iter().map(|d| d.len).sum()
    }
}

fn find_magic(data: &[u8], from: usize) -> Option<usize> {
    let hay = data.get(from..)?;
    hay.windows(BLOCK_MAGIC.len())
        .position(|w| w == BLOCK_MAGIC || w == &FILE_MAGIC[..BLOCK_MAGIC.len()])
        .map(|p| p + from)
}

/// Which id table (strings, frames, stacks) a block kind fills, if any.
fn id_slot(kind: BlockKind) -> Option<usize> {
    match kind {
        BlockKind::Strings => Some(0),
        BlockKind::Frames => Some(1),
        BlockKind::Stacks => Some(2),
        BlockKind::Flows => Some(3),
        _ => None,
    }
}

/// Where the next block or file header may start after damage at `pos`.
fn resync(data: &[u8], pos: usize) -> usize {
    find_magic(data, pos + 1).unwrap_or(data.len())
}

/// Check one block at `pos`; `Ok` holds its header, `Err` what is wrong.
fn check_block(
    data: &[u8],
    pos: usize,
    scratch: &mut Vec<u8>,
) -> std::result::Result<BlockHeader, String> {
    let hb = data
        .get(pos..pos + BLOCK_HEADER_LEN)
        .ok_or("truncated block header")?;
    let h = BlockHeader::decode(hb, pos as u64).map_err(|e| e.to_string())?;
    let end = pos + BLOCK_HEADER_LEN + h.payload_len as usize;
    let payload = data.get(pos + BLOCK_HEADER_LEN..end).ok_or_else(|| {
        format!(
            "block payload of {} bytes runs past the end of the file",
            h.payload_len
        )
    })?;
    if !h.verify(hb, payload) {
        return Err("block checksum mismatch".into());
    }
    h.decompress_into(payload, scratch, pos as u64)
        .map_err(|e| e.to_string())?;
    match h.kind {
        BlockKind::Events => {
            let mut dec = ChunkDecoder::new(scratch, Cpu(h.cpu), Timestamp(h.range_start));
            let mut n = 0u64;
            loop {
                match dec.next_event() {
                    Ok(Some(_)) => n += 1,
                    Ok(None) => break,
                    Err(f) => {
                        return Err(format!(
                            "event at decompressed byte {}: {}",
                            f.pos, f.detail
                        ));
                    }
                }
            }
            if n + dec.skipped_unknown != h.count as u64 {
                return Err(format!("chunk holds {n} events, header says {}", h.count));
            }
        }
        BlockKind::Strings => check_rows::<String>(scratch, &h)?,
        BlockKind::Threads => check_rows::<ThreadInfo>(scratch, &h)?,
        BlockKind::Processes => check_rows::<ProcessInfo>(scratch, &h)?,
        BlockKind::Mappings => check_rows::<Mapping>(scratch, &h)?,
        BlockKind::Frames => check_rows::<Frame>(scratch, &h)?,
        BlockKind::Stacks => check_rows::<Stack>(scratch, &h)?,
        BlockKind::Flows => check_rows::<crate::sockets::Flow>(scratch, &h)?,
        BlockKind::Cgroups => check_rows::<crate::cgroups::CgroupRow>(scratch, &h)?,
        BlockKind::Stats => {
            serde_json::from_slice::<TraceStats>(scratch)
                .map_err(|e| format!("statistics do not parse: {e}"))?;
        }
        BlockKind::Index | BlockKind::Unknown(_) => {}
    }
    Ok(h)
}

/// Check that a table block's rows decode and that there are as many as it says.
fn check_rows<T: Row>(raw: &[u8], h: &BlockHeader) -> std::result::Result<(), String> {
    let mut r = ByteReader::new(raw);
    let mut n = 0u64;
    while !r.is_empty() {
        let pos = r.pos();
        get_row::<T>(&mut r).map_err(|f| format!("row at payload byte {pos}: {}", f.text()))?;
        n += 1;
    }
    if n != h.count as u64 || h.range_end.checked_sub(h.range_start) != Some(n) {
        return Err(format!(
            "table block holds {n} rows, header says {} (ids {}..{})",
            h.count, h.range_start, h.range_end
        ));
    }
    Ok(())
}

/// Scanning state: the report being built and the trace the next block belongs to.
struct Scanner<'d> {
    data: &'d [u8],
    rep: ScanReport,
    /// The open trace (last of `rep.traces`), if any.
    open: bool,
}

impl Scanner<'_> {
    /// Start a new trace at `offset`.
    fn begin(&mut self, offset: usize, header: std::result::Result<Header, String>, tag: u16) {
        self.rep.traces.push(ScannedTrace {
            offset: offset as u64,
            header,
            tag,
            has_trailer: false,
            index_span: None,
            index_ok: false,
            id_clashes: 0,
            next_id: [0; 4],
        });
        self.open = true;
    }

    /// Is there a valid trailer at `pos` for the open trace: its index offset (relative
    /// to the trace's start) names the intact index block that ends right at `pos`?
    fn trailer_at(&self, pos: usize) -> bool {
        let Some(t) = self.data.get(pos..pos + TRAILER_LEN) else {
            return false;
        };
        let (Some(tr), true) = (self.rep.traces.last(), self.open) else {
            return false;
        };
        let Ok(rel) = parse_trailer(t) else {
            return false;
        };
        let n = self.rep.traces.len() - 1;
        self.rep.blocks.last().is_some_and(|b| {
            b.trace == n
                && b.header.kind == BlockKind::Index
                && tr.offset.checked_add(rel) == Some(b.offset)
                && b.offset + b.len() == pos as u64
        })
    }

    /// A file header at `pos` (of a concatenated file): its parsed header and end.
    fn file_header_at(&self, pos: usize) -> Option<(Header, usize)> {
        let d = self.data.get(pos..)?;
        if !d.starts_with(&FILE_MAGIC) {
            return None;
        }
        parse_file_header(d)
            .ok()
            .map(|(_, h, end)| (h, pos + end as usize))
    }

    /// An intact index block of trace `n` (payload in `raw`): the span it records, and
    /// whether it lists exactly the trace's blocks before it, as the reader checks.
    fn index(&mut self, n: usize, raw: &[u8]) {
        let Some(tr) = self.rep.traces.get_mut(n) else {
            return;
        };
        let Ok(idx) = parse_index(raw, 0, u64::MAX) else {
            return;
        };
        let ev = idx.iter().filter(|e| e.kind == BlockKind::Events);
        let first = ev.clone().map(|e| e.range_start).min();
        let last = ev.map(|e| e.range_end).max();
        tr.index_span = first.zip(last);
        let base = tr.offset;
        let blocks: Vec<&ScannedBlock> = self
            .rep
            .blocks
            .iter()
            .filter(|b| b.trace == n && b.header.kind != BlockKind::Index)
            .collect();
        tr.index_ok = blocks.len() == idx.len()
            && blocks.iter().zip(&idx).all(|(b, e)| {
                let h = &b.header;
                e.kind == h.kind
                    && e.cpu == h.cpu
                    && e.count == h.count
                    && e.range_start == h.range_start
                    && e.range_end == h.range_end
                    && Some(e.offset) == b.offset.checked_sub(base)
                    && e.len == b.len()
            });
    }

    /// Record an intact block at `pos`, starting a trace if it belongs to none open.
    fn block(&mut self, pos: usize, h: BlockHeader, scratch: &[u8]) {
        let fits = self.open && self.rep.traces.last().is_some_and(|t| t.tag == h.tag);
        if !fits {
            self.begin(
                pos,
                Err(format!("header lost (blocks from byte {pos} on)")),
                h.tag,
            );
        }
        let n = self.rep.traces.len() - 1;
        if h.kind == BlockKind::Index {
            self.index(n, scratch);
        }
        let file_len = self.data.len() as u64;
        if let (Some(slot), Some(tr)) = (id_slot(h.kind), self.rep.traces.last_mut()) {
            let gap = h.range_start.checked_sub(tr.next_id[slot]);
            match gap {
                Some(g) if plausible_id_gap(g, h.range_start, h.raw_len as u64, file_len) => {
                    tr.next_id[slot] = h.range_end;
                }
                _ => tr.id_clashes += 1,
            }
        }
        self.rep.blocks.push(ScannedBlock {
            offset: pos as u64,
            header: h,
            trace: n,
        });
    }
}

/// Walk `data` (a whole file) and classify every byte range, without the index. See
/// [`check`] for the verdict `causeway check` gives, which also asks the reader.
pub fn scan(data: &[u8]) -> ScanReport {
    let mut sc = Scanner {
        data,
        rep: ScanReport {
            file_len: data.len() as u64,
            header: Err(String::new()),
            blocks: Vec::new(),
            damage: Vec::new(),
            has_trailer: false,
            traces: Vec::new(),
            reader_error: None,
        },
        open: false,
    };
    let mut pos = match parse_file_header(data) {
        Ok((_, h, end)) => {
            let tag = h.file_tag();
            sc.begin(0, Ok(h), tag);
            end as usize
        }
        Err(e) => {
            let next =
                find_magic(data, FILE_HEADER_FIXED_LEN.min(data.len())).unwrap_or(data.len());
            sc.rep.damage.push(Damage {
                offset: 0,
                len: next as u64,
                detail: e.to_string(),
            });
            // The trace begins with its first intact block, under the lost header.
            next
        }
    };
    let mut scratch = Vec::new();
    while pos < data.len() {
        if sc.trailer_at(pos) {
            if let Some(t) = sc.rep.traces.last_mut() {
                t.has_trailer = true;
            }
            sc.open = false;
            pos += TRAILER_LEN;
            continue;
        }
        if let Some((h, end)) = sc.file_header_at(pos) {
            let tag = h.file_tag();
            sc.begin(pos, Ok(h), tag);
            pos = end;
            continue;
        }
        match check_block(data, pos, &mut scratch) {
            Ok(h) => {
                sc.block(pos, h, &scratch);
                pos += BLOCK_HEADER_LEN + h.payload_len as usize;
            }
            Err(detail) => {
                let next = resync(data, pos);
                sc.rep.damage.push(Damage {
                    offset: pos as u64,
                    len: (next - pos) as u64,
                    detail,
                });
                pos = next;
            }
        }
    }
    let mut rep = sc.rep;
    if rep.traces.is_empty() {
        let why = rep.damage.first().map(|d| d.detail.clone());
        rep.traces.push(ScannedTrace {
            offset: 0,
            header: Err(why.unwrap_or_else(|| "empty file".into())),
            tag: 0,
            has_trailer: false,
            index_span: None,
            index_ok: false,
            id_clashes: 0,
            next_id: [0; 4],
        });
    }
    if let Some(first) = rep.traces.first() {
        rep.header = first.header.clone();
    }
    rep.has_trailer = rep.traces.iter().all(|t| t.has_trailer);
    rep
}

/// The verdict of `causeway check`: [`scan`], then the same reader every other command
/// uses, opened on the file and read to the end. What the reader refuses is never
/// called intact: its error is kept in [`ScanReport::reader_error`] (and the file can
/// be salvaged), so `check` and the commands that read traces give one verdict.
pub fn check(data: &[u8]) -> ScanReport {
    let mut rep = scan(data);
    if let Err(e) = read_fully(data) {
        rep.reader_error = Some(e.to_string());
    }
    rep
}

/// Open `data` with the reader and decode every event.
pub fn read_fully(data: &[u8]) -> Result<()> {
    let mut rd = crate::reader::TraceReader::from_bytes(data)?;
    for e in rd.events() {
        e?;
    }
    Ok(())
}

/// What [`write_salvaged`] kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SalvageSummary {
    /// Blocks copied.
    pub blocks: usize,
    /// Event chunks copied.
    pub chunks: usize,
    /// Events in the copied chunks.
    pub events: u64,
    /// Intact table blocks left out because their ids overlap rows already kept or
    /// leave an implausible gap (the reader would reject the file with them).
    pub dropped_blocks: usize,
    /// Blocks left out because the same block (kind, range and checksum) was already
    /// kept: a file concatenated with itself without its second header.
    pub duplicate_blocks: usize,
    /// The mark written into the salvaged trace's header.
    pub mark: SalvageMark,
}

/// Write a valid trace holding every intact block of the first trace in `data` (as
/// found by [`scan`]). See [`write_salvaged_trace`].
pub fn write_salvaged<W: Write>(
    data: &[u8],
    rep: &ScanReport,
    out: W,
) -> Result<(W, SalvageSummary)> {
    write_salvaged_trace(data, rep, 0, out)
}

/// Time covered by the union of the `[first, last]` ranges.
fn covered(mut ranges: Vec<(u64, u64)>) -> u64 {
    ranges.sort_unstable();
    let mut total = 0u64;
    let mut cur: Option<(u64, u64)> = None;
    for (a, b) in ranges {
        cur = match cur {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                total = total.saturating_add(e - s);
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((s, e)) = cur {
        total = total.saturating_add(e - s);
    }
    total
}

/// The salvage mark of trace `t`, from the blocks that will be kept.
fn mark_for(rep: &ScanReport, t: usize, kept: &[&ScannedBlock]) -> SalvageMark {
    let chunks: Vec<(u64, u64)> = kept
        .iter()
        .filter(|b| b.header.kind == BlockKind::Events)
        .map(|b| {
            (
                b.header.range_start,
                b.header.range_end.max(b.header.range_start),
            )
        })
        .collect();
    let first = chunks.iter().map(|c| c.0).min().unwrap_or(0);
    let last = chunks.iter().map(|c| c.1).max().unwrap_or(0);
    let tr = rep.traces.get(t);
    SalvageMark {
        covered_ns: covered(chunks),
        original_ns: tr
            .and_then(|tr| tr.index_span)
            .map(|(a, b)| b.saturating_sub(a)),
        span_ns: last.saturating_sub(first),
        stats_lost: !kept.iter().any(|b| b.header.kind == BlockKind::Stats),
        damaged_bytes: rep.damaged_bytes(),
    }
}

/// Write a valid trace holding every intact block of trace `t` of `data`, in file
/// order: blocks of the other traces in the file are never mixed in, a block repeated
/// verbatim is kept once, and table blocks whose ids clash with rows already kept are
/// left out. The header is the original's (or a synthetic one whose `writer` says
/// `salvaged (original header lost)`) with a [`SalvageMark`] saying what the trace
/// covers, so every report can tell it is not the whole recording.
pub fn write_salvaged_trace<W: Write>(
    data: &[u8],
    rep: &ScanReport,
    t: usize,
    out: W,
) -> Result<(W, SalvageSummary)> {
    let mut sum = SalvageSummary::default();
    let kept = select_blocks(rep, t, &mut sum);
    let mut header = match rep.traces.get(t).map(|tr| &tr.header) {
        Some(Ok(h)) => h.clone(),
        _ => {
            let mut h = Header::synthetic(0);
            h.writer = "salvaged (original header lost)".into();
            h.file_id = rep.traces.get(t).map_or(0, |tr| tr.tag as u64);
            h
        }
    };
    sum.mark = mark_for(rep, t, &kept);
    header.salvaged = Some(sum.mark);
    let mut sink = BlockSink::new(out, &header)?;
    for b in kept {
        let start = b.offset as usize;
        let mid = start + BLOCK_HEADER_LEN;
        let end = start + b.len() as usize;
        let (Some(hb), Some(payload)) = (data.get(start..mid), data.get(mid..end)) else {
            sum.dropped_blocks += 1;
            continue;
        };
        sink.write_framed(&b.header, hb, payload)?;
        sum.blocks += 1;
        if b.header.kind == BlockKind::Events {
            sum.chunks += 1;
            sum.events += b.header.count as u64;
        }
    }
    Ok((sink.finish()?, sum))
}

/// The blocks of trace `t` a salvage keeps, in file order.
fn select_blocks<'r>(
    rep: &'r ScanReport,
    t: usize,
    sum: &mut SalvageSummary,
) -> Vec<&'r ScannedBlock> {
    let mut kept = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // Next free id of the id tables (strings, frames, stacks): a block that overlaps
    // rows already kept cannot be loaded after them, so it is left out.
    let mut next_id = [0u64; 4];
    // A lower bound of the salvaged file's length so far (the reader checks the gap
    // against the whole file, which is longer).
    let mut pos = FILE_HEADER_FIXED_LEN as u64;
    for b in rep.blocks.iter().filter(|b| b.trace == t) {
        let h = &b.header;
        let slot = match h.kind {
            BlockKind::Index => continue, // A new index is written by finish().
            BlockKind::Strings => Some(0),
            BlockKind::Frames => Some(1),
            BlockKind::Stacks => Some(2),
            BlockKind::Flows => Some(3),
            _ => None,
        };
        if !seen.insert((h.kind, h.cpu, h.range_start, h.range_end, h.count, h.crc)) {
            sum.duplicate_blocks += 1;
            continue;
        }
        if let Some(slot) = slot {
            // The reader pads a gap left by lost blocks, but only a plausible one.
            let gap = h.range_start.checked_sub(next_id[slot]);
            match gap {
                Some(gap)
                    if plausible_id_gap(gap, h.range_start, h.raw_len as u64, pos + b.len()) =>
                {
                    next_id[slot] = h.range_end;
                }
                _ => {
                    sum.dropped_blocks += 1;
                    continue;
                }
            }
        }
        pos += b.len();
        kept.push(b);
    }
    kept
}
