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
use crate::header::{Header, TraceStats};
use crate::ids::{Cpu, Timestamp};
use crate::reader::{parse_file_header, plausible_id_gap};
use crate::table_codec::{Row, get_row};
use crate::tables::{Frame, Mapping, ProcessInfo, Stack, ThreadInfo};
use crate::writer::BlockSink;
use crate::{FILE_HEADER_FIXED_LEN, TRAILER_LEN, TRAILER_MAGIC};
use std::io::Write;

/// An intact block found by [`scan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScannedBlock {
    /// Byte offset of the block.
    pub offset: u64,
    /// Its parsed header.
    pub header: BlockHeader,
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

/// What [`scan`] found.
#[derive(Clone, Debug)]
pub struct ScanReport {
    /// File size.
    pub file_len: u64,
    /// The header, or why it could not be read.
    pub header: std::result::Result<Header, String>,
    /// Intact blocks in file order (the index block included).
    pub blocks: Vec<ScannedBlock>,
    /// Damaged ranges, in file order.
    pub damage: Vec<Damage>,
    /// True if the file ends with a valid trailer.
    pub has_trailer: bool,
}

impl ScanReport {
    /// True if nothing is damaged and the file was finished properly.
    pub fn is_clean(&self) -> bool {
        self.header.is_ok() && self.damage.is_empty() && self.has_trailer
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
}

fn find_magic(data: &[u8], from: usize) -> Option<usize> {
    let hay = data.get(from..)?;
    hay.windows(BLOCK_MAGIC.len())
        .position(|w| w == BLOCK_MAGIC)
        .map(|p| p + from)
}

fn trailer_at(data: &[u8], pos: usize) -> bool {
    pos + TRAILER_LEN == data.len() && data.get(pos + 8..pos + 16) == Some(&TRAILER_MAGIC[..])
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

/// Walk `data` (a whole trace file) and classify every byte range.
pub fn scan(data: &[u8]) -> ScanReport {
    let (header, mut pos) = match parse_file_header(data) {
        Ok((_, h, end)) => (Ok(h), end as usize),
        Err(e) => (
            Err(e.to_string()),
            find_magic(data, FILE_HEADER_FIXED_LEN.min(data.len())).unwrap_or(data.len()),
        ),
    };
    let mut rep = ScanReport {
        file_len: data.len() as u64,
        header,
        blocks: Vec::new(),
        damage: Vec::new(),
        has_trailer: false,
    };
    if let Err(detail) = &rep.header {
        rep.damage.push(Damage {
            offset: 0,
            len: pos as u64,
            detail: detail.clone(),
        });
    }
    let mut scratch = Vec::new();
    while pos < data.len() {
        if trailer_at(data, pos) {
            rep.has_trailer = true;
            break;
        }
        match check_block(data, pos, &mut scratch) {
            Ok(h) => {
                rep.blocks.push(ScannedBlock {
                    offset: pos as u64,
                    header: h,
                });
                pos += BLOCK_HEADER_LEN + h.payload_len as usize;
            }
            Err(detail) => {
                let next = find_magic(data, pos + 1).unwrap_or(data.len());
                // A trailer inside the skipped range still ends the file properly.
                let next = if data.len() >= TRAILER_LEN
                    && next == data.len()
                    && trailer_at(data, data.len() - TRAILER_LEN)
                    && data.len() - TRAILER_LEN > pos
                {
                    data.len() - TRAILER_LEN
                } else {
                    next
                };
                rep.damage.push(Damage {
                    offset: pos as u64,
                    len: (next - pos) as u64,
                    detail,
                });
                pos = next;
            }
        }
    }
    rep
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
}

/// Write a valid trace holding every intact block of `data` (as found by `scan`).
/// If the header was lost, a synthetic one marks the trace as salvaged.
pub fn write_salvaged<W: Write>(
    data: &[u8],
    rep: &ScanReport,
    out: W,
) -> Result<(W, SalvageSummary)> {
    let header = match &rep.header {
        Ok(h) => h.clone(),
        Err(_) => {
            let mut h = Header::synthetic(0);
            h.writer = "salvaged (original header lost)".into();
            h
        }
    };
    let mut sink = BlockSink::new(out, &header)?;
    let mut sum = SalvageSummary::default();
    // Next free id of the id tables (strings, frames, stacks): a block that overlaps
    // rows already kept cannot be loaded after them, so it is left out.
    let mut next_id = [0u64; 3];
    for b in &rep.blocks {
        let slot = match b.header.kind {
            BlockKind::Index => continue, // A new index is written by finish().
            BlockKind::Strings => Some(0),
            BlockKind::Frames => Some(1),
            BlockKind::Stacks => Some(2),
            _ => None,
        };
        if let Some(slot) = slot {
            let h = &b.header;
            // The reader pads a gap left by lost blocks, but only a plausible one.
            let gap = h.range_start.checked_sub(next_id[slot]);
            // The salvaged file's length is at least what is written so far plus this block.
            let file_len = sink.position() + b.len();
            match gap {
                Some(gap) if plausible_id_gap(gap, h.range_start, h.raw_len as u64, file_len) => {
                    next_id[slot] = h.range_end;
                }
                _ => {
                    sum.dropped_blocks += 1;
                    continue;
                }
            }
        }
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
