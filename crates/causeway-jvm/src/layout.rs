//! The offsets and addresses the walk reads, resolved once per JVM from its structure
//! tables.

use crate::JvmError;
use crate::vmstructs::VmStructs;

/// Where each thing the walk reads is, in one JVM.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Address of `CodeCache::_heaps` (a `GrowableArray<CodeHeap*>*`).
    pub(crate) heaps: u64,
    pub(crate) array_len: u64,
    pub(crate) array_data: u64,
    pub(crate) heap_memory: u64,
    pub(crate) heap_segmap: u64,
    pub(crate) heap_log2_segment: u64,
    pub(crate) space_low: u64,
    pub(crate) space_high: u64,
    /// Offset of the block header's "used" flag in a `HeapBlock`.
    pub(crate) block_used: u64,
    /// `sizeof(HeapBlock)`: the blob follows its block header.
    pub(crate) block_size: u64,
    pub(crate) blob_name: u64,
    pub(crate) blob_frame_size: u64,
    pub(crate) blob_frame_complete: u64,
    pub(crate) blob_code_begin: u64,
    pub(crate) blob_code_end: u64,
    /// The `Method*` of a compiled method.
    pub(crate) compiled_method: u64,
    pub(crate) method_const: u64,
    pub(crate) const_constants: u64,
    pub(crate) const_name_index: u64,
    pub(crate) const_signature_index: u64,
    pub(crate) pool_holder: u64,
    /// `sizeof(ConstantPool)`: its entries follow it.
    pub(crate) pool_size: u64,
    pub(crate) klass_name: u64,
    pub(crate) symbol_length: u64,
    pub(crate) symbol_body: u64,
}

impl Layout {
    /// Resolve every entry; the first one missing is the error.
    pub(crate) fn of(v: &VmStructs) -> Result<Layout, JvmError> {
        Ok(Layout {
            heaps: v.address("CodeCache", "_heaps")?,
            array_len: v.offset(&["GrowableArrayBase", "GenericGrowableArray"], "_len")?,
            array_data: v.offset(&["GrowableArray<int>"], "_data")?,
            heap_memory: v.offset(&["CodeHeap"], "_memory")?,
            heap_segmap: v.offset(&["CodeHeap"], "_segmap")?,
            heap_log2_segment: v.offset(&["CodeHeap"], "_log2_segment_size")?,
            space_low: v.offset(&["VirtualSpace"], "_low")?,
            space_high: v.offset(&["VirtualSpace"], "_high")?,
            block_used: v.offset(&["HeapBlock"], "_header")?
                + v.offset(&["HeapBlock::Header"], "_used")?,
            block_size: v.size("HeapBlock")?,
            blob_name: v.offset(&["CodeBlob"], "_name")?,
            blob_frame_size: v.offset(&["CodeBlob"], "_frame_size")?,
            blob_frame_complete: v.offset(&["CodeBlob"], "_frame_complete_offset")?,
            blob_code_begin: v.offset(&["CodeBlob"], "_code_begin")?,
            blob_code_end: v.offset(&["CodeBlob"], "_code_end")?,
            compiled_method: v.offset(&["CompiledMethod", "nmethod"], "_method")?,
            method_const: v.offset(&["Method"], "_constMethod")?,
            const_constants: v.offset(&["ConstMethod"], "_constants")?,
            const_name_index: v.offset(&["ConstMethod"], "_name_index")?,
            const_signature_index: v.offset(&["ConstMethod"], "_signature_index")?,
            pool_holder: v.offset(&["ConstantPool"], "_pool_holder")?,
            pool_size: v.size("ConstantPool")?,
            klass_name: v.offset(&["Klass"], "_name")?,
            symbol_length: v.offset(&["Symbol"], "_length")?,
            symbol_body: v.offset(&["Symbol"], "_body")?,
        })
    }
}
