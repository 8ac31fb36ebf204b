//! Names of the addresses of recorded stacks, and the symbolized stacks written into a
//! trace.
//!
//! Addresses are symbolized once, at the end of a recording (or of a flight-recorder
//! dump), against the mappings recorded while the processes lived: the files are read,
//! not the processes, so processes that exited during the recording still get names.
//! ELF files and the kernel are read through blazesym, JIT-compiled code is named from
//! perf maps and jitdump files (`causeway-procfs`'s `jit`), functions of stripped Go
//! programs from their `.gopclntab` (`causeway-goruntime`).
//!
//! It knows stacks, mappings and files, not how they were recorded: the recorder hands
//! over its tables through [`StackSources`] ([`StackLookup`] for its stack table,
//! [`PathLookup`] for the strings the mapping paths are in).

mod sym;
mod symbols;

pub use symbols::Symbols;

use causeway_format::{Mapping, StackId, StringId};
use causeway_procfs::jit::JitTable;
use std::collections::HashMap;

/// A raw stack as recorded: process (0 for kernel stacks) and return addresses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StackKey {
    /// Process whose address space the frames are in; 0 for the kernel.
    pub tgid: u32,
    /// Addresses, innermost first.
    pub frames: Vec<u64>,
    /// The walk did not reach the outermost frame.
    pub truncated: bool,
    /// The first frame is the interrupted instruction (the unwind's start), not a
    /// return address: it is symbolized at its own address. A return address is looked
    /// up one byte back, inside its call; doing that to a thread stopped on the first
    /// instruction of a function (a page fault there) named the bytes before it.
    pub leaf: bool,
}

/// The recorded stacks, by the recorder's ids.
pub trait StackLookup {
    /// The stack with this id.
    fn stack(&self, id: StackId) -> Option<&StackKey>;
}

/// The strings the mapping rows' paths refer to.
pub trait PathLookup {
    /// The string with this id (empty if unknown).
    fn path(&self, id: StringId) -> &str;
}

/// What symbolizing recorded stacks reads: the stacks, the processes' mappings and the
/// strings their paths are in.
#[derive(Clone, Copy)]
pub struct StackSources<'a> {
    /// Stacks by recorder id.
    pub stacks: &'a dyn StackLookup,
    /// Mapping rows, in the order learned.
    pub mappings: &'a [Mapping],
    /// The strings the mapping paths refer to.
    pub strings: &'a dyn PathLookup,
    /// JIT tables read when their processes exited.
    pub jit_at_exit: &'a HashMap<u32, JitTable>,
    /// Names of the frames runtime walkers reported while unwinding (a JVM's
    /// compiled and interpreted methods, read from the live process): first choice
    /// for code outside the mapped files, before perf maps and jitdump files.
    pub frame_names: &'a dyn causeway_unwind::FrameNames,
    /// Where to open the files processes mapped (one in another mount namespace is
    /// opened through it, or a descriptor kept since); `None`: by their paths.
    pub files: Option<&'a causeway_procfs::files::ProcessFiles>,
}

impl<'a> StackSources<'a> {
    /// The paths a process mapped executable (jitdump files among them).
    pub fn mapped_paths(&self, tgid: u32) -> Vec<&'a str> {
        self.mappings
            .iter()
            .filter(|m| m.tgid.0 == tgid)
            .map(|m| self.strings.path(m.path))
            .collect()
    }
}

/// The module name of frames named from a JIT table (perf map or jitdump).
pub const JIT_MODULE: &str = "[jit]";

/// Where JIT-compiled code (anonymous executable memory) gets its names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JitSymbols {
    /// Perf maps and jitdump files, and a running HotSpot JVM without a perf map is
    /// asked to write one (`jcmd PID Compiler.perfmap`).
    #[default]
    Auto,
    /// Only the perf maps and jitdump files that exist.
    Read,
    /// Unnamed (bare addresses).
    Off,
}

/// GNU build ID of an ELF file, empty if it has none or cannot be read.
pub fn build_id(path: &str) -> Vec<u8> {
    causeway_procfs::elf::build_id(std::path::Path::new(path)).unwrap_or_default()
}
