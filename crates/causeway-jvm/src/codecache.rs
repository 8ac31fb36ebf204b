//! The code cache: which blob of JIT-compiled code (a compiled method, the
//! interpreter, a stub) holds an address, and what it says about its frame.
//!
//! HotSpot keeps its code in one or more code heaps. Each heap has a segment map, one
//! byte per segment (64-128 bytes of code): 0xFF for a free segment, 0 for the first
//! segment of a block, otherwise how many segments to step back towards the block's
//! first one. Walking the map back from an address's segment finds the block, whose
//! header is followed by the blob (`CodeHeap::find_start` in HotSpot does the same).

use crate::layout::Layout;
use crate::mem::Memory;

/// One code heap's address ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Heap {
    pub(crate) low: u64,
    pub(crate) high: u64,
    pub(crate) segmap: u64,
    pub(crate) log2_segment: u32,
}

/// What kind of code a blob holds, as far as walking its frames goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlobKind {
    /// A compiled Java method (or a native method's wrapper): its `Method*`.
    Compiled(u64),
    /// The template interpreter: frames are laid out around rbp.
    Interpreter,
    /// Any other stub (call stub, adapters, runtime stubs).
    Stub,
}

/// A blob of code and its frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Blob {
    pub(crate) code_begin: u64,
    pub(crate) code_end: u64,
    /// Frame size in words (return address and saved rbp included); 0 when the blob
    /// has no fixed frame.
    pub(crate) frame_size: u32,
    /// Offset from `code_begin` where the frame is set up; -1 when not known.
    pub(crate) frame_complete: i32,
    pub(crate) kind: BlobKind,
    /// The blob's own name (`nmethod`, `Interpreter`, `StubRoutines (1)`).
    pub(crate) name: String,
}

/// Segments stepped back at most while looking for a block's start: a blob of 64 MiB
/// at 64-byte segments; more means the map was misread.
const MAX_HOPS: u32 = 1 << 20;

/// The code heaps of a JVM, as listed in `CodeCache::_heaps`.
pub(crate) fn heaps(mem: &dyn Memory, l: &Layout) -> Vec<Heap> {
    let Some(array) = mem.u64(l.heaps).filter(|&a| a != 0) else {
        return Vec::new();
    };
    let len = mem.u32(array + l.array_len).unwrap_or(0).min(16);
    let Some(data) = mem.u64(array + l.array_data) else {
        return Vec::new();
    };
    (0..len as u64)
        .filter_map(|i| {
            let h = mem.u64(data + i * 8)?;
            Some(Heap {
                low: mem.u64(h + l.heap_memory + l.space_low)?,
                high: mem.u64(h + l.heap_memory + l.space_high)?,
                segmap: mem.u64(h + l.heap_segmap + l.space_low)?,
                log2_segment: mem.u32(h + l.heap_log2_segment)?,
            })
        })
        .filter(|h| h.low < h.high && h.log2_segment < 32)
        .collect()
}

/// The start of the blob holding `pc` in `heap`, if `pc` is in a used block.
pub(crate) fn blob_start(mem: &dyn Memory, l: &Layout, heap: &Heap, pc: u64) -> Option<u64> {
    if !(heap.low..heap.high).contains(&pc) {
        return None;
    }
    let mut seg = (pc - heap.low) >> heap.log2_segment;
    for _ in 0..MAX_HOPS {
        match mem.u8(heap.segmap + seg)? {
            0xFF => return None,
            0 => {
                let block = heap.low + (seg << heap.log2_segment);
                // A free block has no blob.
                return (mem.u8(block + l.block_used)? != 0).then_some(block + l.block_size);
            }
            back => seg = seg.checked_sub(back as u64)?,
        }
    }
    None
}

/// Read the blob at `start`; `pc` must lie in its code.
pub(crate) fn blob(mem: &dyn Memory, l: &Layout, start: u64, pc: u64) -> Option<Blob> {
    let code_begin = mem.u64(start + l.blob_code_begin)?;
    let code_end = mem.u64(start + l.blob_code_end)?;
    if !(code_begin..code_end).contains(&pc) {
        return None;
    }
    let name = mem
        .u64(start + l.blob_name)
        .and_then(|p| mem.cstr(p, 128))
        .unwrap_or_default();
    let kind = if name == "Interpreter" {
        BlobKind::Interpreter
    } else if name.ends_with("nmethod") {
        // `nmethod` and `native nmethod` (a native method's wrapper).
        BlobKind::Compiled(mem.u64(start + l.compiled_method)?)
    } else {
        BlobKind::Stub
    };
    Some(Blob {
        code_begin,
        code_end,
        frame_size: mem.u32(start + l.blob_frame_size)?,
        frame_complete: mem.u32(start + l.blob_frame_complete)? as i32,
        kind,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::fake::FakeMem;
    use crate::tests::layout;

    #[test]
    fn an_address_is_found_in_its_blob_by_the_segment_map() {
        let l = layout();
        let mut m = FakeMem::default();
        // One heap of 16 segments of 64 bytes at 0x10000, map at 0x9000.
        m.put_u64(0x1000, 0x2000);
        m.put_u32(0x2000, 1);
        m.put_u64(0x2008, 0x3000);
        m.put_u64(0x3000, 0x4000);
        m.put_u64(0x4010, 0x10000);
        m.put_u64(0x4018, 0x10400);
        m.put_u64(0x4040, 0x9000);
        m.put_u32(0x4070, 6);
        // Blocks: segments 0-4 (used), 5-6 (free), 7-15 unused. The map steps back
        // by more than one, as HotSpot's does for long blocks.
        m.put(
            0x9000,
            &[
                0, 1, 2, 3, 1, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            ],
        );
        m.put(0x10000, &[0u8; 8]);
        m.put(0x10008, &[1]);
        m.put(0x10140, &[0u8; 8]);
        m.put(0x10148, &[0]);
        let hs = heaps(&m, &l);
        assert_eq!(
            hs,
            [Heap {
                low: 0x10000,
                high: 0x10400,
                segmap: 0x9000,
                log2_segment: 6
            }]
        );
        let h = &hs[0];
        for pc in [0x10000, 0x10050, 0x100c0, 0x1013f] {
            assert_eq!(blob_start(&m, &l, h, pc), Some(0x10010), "{pc:#x}");
        }
        assert_eq!(blob_start(&m, &l, h, 0x10150), None, "a free block");
        assert_eq!(blob_start(&m, &l, h, 0x101c0), None, "an unused segment");
        assert_eq!(blob_start(&m, &l, h, 0x10400), None, "past the heap");
        // The blob: an nmethod whose code is 0x10040..0x10140, frame of 6 words.
        m.put_u64(0x10010, 0x20000);
        m.put_str(0x20000, "nmethod");
        m.put_u32(0x10018, 6);
        m.put_u32(0x1001c, 0x20);
        m.put_u64(0x10020, 0x10040);
        m.put_u64(0x10028, 0x10140);
        m.put_u64(0x10030, 0x7777);
        let b = blob(&m, &l, 0x10010, 0x10050).expect("a blob");
        assert_eq!(
            (b.kind, b.frame_size, b.frame_complete),
            (BlobKind::Compiled(0x7777), 6, 0x20)
        );
        assert_eq!(
            blob(&m, &l, 0x10010, 0x10020),
            None,
            "the header is not code"
        );
        m.put_str(0x20000, "Interpreter");
        assert_eq!(
            blob(&m, &l, 0x10010, 0x10050).unwrap().kind,
            BlobKind::Interpreter
        );
        m.put_str(0x20000, "StubRoutines (1)");
        assert_eq!(blob(&m, &l, 0x10010, 0x10050).unwrap().kind, BlobKind::Stub);
    }
}
