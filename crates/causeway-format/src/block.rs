//! Block framing: every piece of a trace after the file header is a block with a
//! fixed 44-byte header, a CRC32 and a (usually zstd-compressed) payload.
//!
//! Blocks are self-contained: an event chunk decodes without any other chunk, and a
//! table block says which ids it holds, so intact blocks can be salvaged from a file
//! whose other parts are damaged.

use crate::error::{FormatError, Result};

/// Bytes that start every block.
pub const BLOCK_MAGIC: [u8; 4] = *b"CWBK";
/// Size of a block header.
pub const BLOCK_HEADER_LEN: usize = 44;
/// Largest decompressed payload a reader accepts (protects against hostile headers).
pub const MAX_RAW_LEN: u32 = 64 << 20;

/// What a block holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlockKind {
    /// Events of one CPU; range = first and last timestamp.
    Events,
    /// Strings; range = ids `[start, end)`.
    Strings,
    /// Thread rows; range = row numbers.
    Threads,
    /// Process rows; range = row numbers.
    Processes,
    /// Mapping rows; range = row numbers.
    Mappings,
    /// Frames; range = ids.
    Frames,
    /// Stacks; range = ids.
    Stacks,
    /// Socket flows; range = ids (format 1.4).
    Flows,
    /// End-of-trace statistics (JSON).
    Stats,
    /// Cgroup rows (format 1.7): memberships and limit samples; range = row numbers.
    Cgroups,
    /// The index of all blocks (last block of a finished trace).
    Index,
    /// A kind from a newer minor version; skipped.
    Unknown(u8),
}

impl BlockKind {
    /// On-disk code.
    pub fn code(self) -> u8 {
        match self {
            BlockKind::Events => 1,
            BlockKind::Strings => 2,
            BlockKind::Threads => 3,
            BlockKind::Processes => 4,
            BlockKind::Mappings => 5,
            BlockKind::Frames => 6,
            BlockKind::Stacks => 7,
            BlockKind::Stats => 8,
            BlockKind::Index => 9,
            BlockKind::Flows => 10,
            BlockKind::Cgroups => 11,
            BlockKind::Unknown(c) => c,
        }
    }
    /// From the on-disk code.
    pub fn from_code(c: u8) -> BlockKind {
        match c {
            1 => BlockKind::Events,
            2 => BlockKind::Strings,
            3 => BlockKind::Threads,
            4 => BlockKind::Processes,
            5 => BlockKind::Mappings,
            6 => BlockKind::Frames,
            7 => BlockKind::Stacks,
            8 => BlockKind::Stats,
            9 => BlockKind::Index,
            10 => BlockKind::Flows,
            11 => BlockKind::Cgroups,
            c => BlockKind::Unknown(c),
        }
    }
    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            BlockKind::Events => "events",
            BlockKind::Strings => "strings",
            BlockKind::Threads => "threads",
            BlockKind::Processes => "processes",
            BlockKind::Mappings => "mappings",
            BlockKind::Frames => "frames",
            BlockKind::Stacks => "stacks",
            BlockKind::Stats => "stats",
            BlockKind::Index => "index",
            BlockKind::Flows => "flows",
            BlockKind::Cgroups => "cgroups",
            BlockKind::Unknown(_) => "unknown",
        }
    }
}

/// Payload compression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// Stored as is.
    None,
    /// zstd frame.
    Zstd,
}

/// A parsed block header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockHeader {
    /// What the block holds.
    pub kind: BlockKind,
    /// Payload compression.
    pub codec: Codec,
    /// Low 16 bits of the file id of the trace the block was written for (bytes 6..8,
    /// reserved and zero before 1.2): tells blocks of concatenated files apart.
    pub tag: u16,
    /// CPU of an events block (`u32::MAX` otherwise).
    pub cpu: u32,
    /// Records in the block.
    pub count: u32,
    /// Payload size after decompression.
    pub raw_len: u32,
    /// Payload size on disk.
    pub payload_len: u32,
    /// First timestamp (events) or first id / row (tables).
    pub range_start: u64,
    /// Last timestamp (events) or one past the last id / row (tables).
    pub range_end: u64,
    /// CRC32 of the header's first 40 bytes and the payload.
    pub crc: u32,
}

impl BlockHeader {
    /// Serialize, computing the CRC over the header and `payload`.
    pub fn encode(&mut self, payload: &[u8]) -> [u8; BLOCK_HEADER_LEN] {
        let mut h = [0u8; BLOCK_HEADER_LEN];
        h[0..4].copy_from_slice(&BLOCK_MAGIC);
        h[4] = self.kind.code();
        h[5] = match self.codec {
            Codec::None => 0,
            Codec::Zstd => 1,
        };
        h[6..8].copy_from_slice(&self.tag.to_le_bytes());
        h[8..12].copy_from_slice(&self.cpu.to_le_bytes());
        h[12..16].copy_from_slice(&self.count.to_le_bytes());
        h[16..20].copy_from_slice(&self.raw_len.to_le_bytes());
        h[20..24].copy_from_slice(&self.payload_len.to_le_bytes());
        h[24..32].copy_from_slice(&self.range_start.to_le_bytes());
        h[32..40].copy_from_slice(&self.range_end.to_le_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(&h[0..40]);
        crc.update(payload);
        self.crc = crc.finalize();
        h[40..44].copy_from_slice(&self.crc.to_le_bytes());
        h
    }

    /// Parse a header found at file offset `offset`. Checks magic and sanity of
    /// lengths; the CRC is checked by [`BlockHeader::verify`] once the payload is read.
    pub fn decode(h: &[u8], offset: u64) -> Result<BlockHeader> {
        let corrupt = |detail: String| FormatError::Corrupt {
            offset,
            chunk: None,
            what: "block header",
            detail,
        };
        if h.len() < BLOCK_HEADER_LEN {
            return Err(FormatError::Truncated {
                offset,
                what: "block header",
                need: BLOCK_HEADER_LEN as u64,
                have: h.len() as u64,
            });
        }
        if h[0..4] != BLOCK_MAGIC {
            return Err(corrupt(format!("bad block magic {:02x?}", &h[0..4])));
        }
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[i..i + 8]);
            u64::from_le_bytes(b)
        };
        let codec = match h[5] {
            0 => Codec::None,
            1 => Codec::Zstd,
            c => return Err(corrupt(format!("unknown compression code {c}"))),
        };
        let hdr = BlockHeader {
            kind: BlockKind::from_code(h[4]),
            codec,
            tag: u16::from_le_bytes([h[6], h[7]]),
            cpu: u32_at(8),
            count: u32_at(12),
            raw_len: u32_at(16),
            payload_len: u32_at(20),
            range_start: u64_at(24),
            range_end: u64_at(32),
            crc: u32_at(40),
        };
        if hdr.raw_len > MAX_RAW_LEN || hdr.payload_len > MAX_RAW_LEN {
            return Err(corrupt(format!(
                "block claims {} bytes ({} compressed), more than the {MAX_RAW_LEN} allowed",
                hdr.raw_len, hdr.payload_len
            )));
        }
        Ok(hdr)
    }

    /// Check the CRC of this header (as raw bytes `h`) and its payload.
    pub fn verify(&self, h: &[u8], payload: &[u8]) -> bool {
        let mut crc = crc32fast::Hasher::new();
        crc.update(h.get(0..40).unwrap_or(&[]));
        crc.update(payload);
        crc.finalize() == self.crc
    }

    /// Decompress `payload` into `out` (cleared first), checking the size.
    pub fn decompress_into(&self, payload: &[u8], out: &mut Vec<u8>, offset: u64) -> Result<()> {
        self.decompress_with(payload, out, offset, &mut None)
    }

    /// [`BlockHeader::decompress_into`] with a zstd context kept by the caller (created
    /// on first use), so a reader does not set one up for every block.
    pub(crate) fn decompress_with(
        &self,
        payload: &[u8],
        out: &mut Vec<u8>,
        offset: u64,
        dec: &mut Option<zstd::bulk::Decompressor<'static>>,
    ) -> Result<()> {
        out.clear();
        let corrupt = |detail: String| FormatError::Corrupt {
            offset,
            chunk: None,
            what: "block payload",
            detail,
        };
        match self.codec {
            Codec::None => out.extend_from_slice(payload),
            Codec::Zstd => {
                out.reserve(self.raw_len as usize);
                let dec = match dec {
                    Some(d) => d,
                    None => dec.insert(
                        zstd::bulk::Decompressor::new()
                            .map_err(|e| corrupt(format!("zstd init: {e}")))?,
                    ),
                };
                // Writes at most `out.capacity()` (= raw_len) bytes: a payload that
                // inflates beyond what the header says fails instead of growing.
                let n = dec
                    .decompress_to_buffer(payload, out)
                    .map_err(|e| corrupt(format!("zstd: {e}")))?;
                out.truncate(n);
            }
        }
        if out.len() != self.raw_len as usize {
            return Err(corrupt(format!(
                "payload is {} bytes after decompression, header says {}",
                out.len(),
                self.raw_len
            )));
        }
        Ok(())
    }
}
