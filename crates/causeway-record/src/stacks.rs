//! Stacks: deduplication while recording, symbolization when a trace is written.
//!
//! Addresses are symbolized once, at the end of a recording (or of a flight-recorder
//! dump), against the mappings recorded while the processes lived: the files are read,
//! not the processes, so processes that exited during the recording still get names.

use crate::jitmap::JitTable;
use crate::strings::Strings;
use blazesym::symbolize::source::{Elf, Kernel, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer};
use causeway_format::{
    Frame, FrameSpace, InlinedFrame, Mapping, Stack, StackId, Tgid, TraceWriter,
};
use std::collections::HashMap;
use std::io::Write;

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

/// Stacks numbered in first-seen order.
#[derive(Debug, Default)]
pub struct StackTable {
    /// Strips recorder frames from kernel stacks before they are numbered.
    pub glue: KernelGlue,
    list: Vec<StackKey>,
    /// Hashed once per stack event: Fx rather than SipHash (the keys are addresses).
    ids: rustc_hash::FxHashMap<StackKey, StackId>,
}

impl StackTable {
    /// The id of `k`, adding it if new.
    pub fn intern(&mut self, mut k: StackKey) -> StackId {
        if k.tgid == 0 {
            self.glue.strip(&mut k.frames);
        }
        if let Some(&id) = self.ids.get(&k) {
            return id;
        }
        let id = StackId(self.list.len() as u32);
        self.list.push(k.clone());
        self.ids.insert(k, id);
        id
    }

    /// The stack with this id.
    pub fn get(&self, id: StackId) -> Option<&StackKey> {
        self.list.get(id.0 as usize)
    }

    /// Number of distinct stacks.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// No stacks yet.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// Address ranges of the kernel functions that run a BPF program from a tracepoint
/// (`bpf_trace_run*`, `__bpf_trace_*`). Kernel stacks taken inside the recorder start
/// with the program and these; they say nothing about the traced thread.
#[derive(Debug, Default, Clone)]
pub struct KernelGlue {
    ranges: Vec<(u64, u64)>,
}

impl KernelGlue {
    /// Read the ranges from `/proc/kallsyms` (empty if unreadable).
    pub fn load() -> KernelGlue {
        let text = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
        Self::parse(&text)
    }

    /// Build from the text of a kallsyms file.
    pub fn parse(text: &str) -> KernelGlue {
        let mut syms: Vec<(u64, bool)> = text
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let addr = u64::from_str_radix(f.next()?, 16).ok()?;
                let _kind = f.next()?;
                let name = f.next()?;
                let glue = name.starts_with("bpf_trace_run") || name.starts_with("__bpf_trace_");
                Some((addr, glue))
            })
            .filter(|&(a, _)| a != 0)
            .collect();
        syms.sort_unstable_by_key(|s| s.0);
        let ranges = syms
            .windows(2)
            .filter(|w| w[0].1)
            .map(|w| (w[0].0, w[1].0))
            .collect();
        KernelGlue { ranges }
    }

    fn is_glue(&self, addr: u64) -> bool {
        let i = self.ranges.partition_point(|r| r.0 <= addr);
        i > 0 && addr < self.ranges[i - 1].1
    }

    /// Drop the recorder's own frames from the top of a kernel stack: everything up to
    /// the last glue frame among the first few.
    pub fn strip(&self, frames: &mut Vec<u64>) {
        let last = frames.iter().take(6).rposition(|&a| self.is_glue(a));
        if let Some(i) = last {
            frames.drain(..=i);
        }
    }
}

/// GNU build ID of an ELF file, empty if it has none or cannot be read.
pub fn build_id(path: &str) -> Vec<u8> {
    causeway_procfs::elf::build_id(std::path::Path::new(path)).unwrap_or_default()
}

/// A symbolized address.
#[derive(Clone, Debug, Default)]
struct Sym {
    module: String,
    name: String,
    offset: u64,
    /// Source location in `name` (of the call to the outermost inlined function when
    /// there are any), from debug information; empty and 0 if none.
    file: String,
    line: u32,
    /// Inlined functions at the address, innermost first: (name, file, line).
    inlined: Vec<(String, String, u32)>,
}

/// Name `main` and `_start` in a stripped program from where they sit: the C library's
/// start code (`__libc_start_main`, which calls `__libc_start_call_main` since glibc
/// 2.34) is called by the program's entry point and calls `main`, so the first frame
/// inward of it outside the C library is `main`, and the frame outward of it in the
/// program is `_start`. Only unnamed frames are named.
fn name_entry_frames(syms: &mut [Sym]) {
    let Some(k) = syms
        .iter()
        .position(|s| s.name.starts_with("__libc_start_main"))
    else {
        return;
    };
    let libc = syms[k].module.clone();
    if let Some(m) = syms[..k].iter().rposition(|s| s.module != libc)
        && syms[m].name.is_empty()
        && !syms[m].module.is_empty()
    {
        syms[m].name = "main".into();
    }
    if let Some(s) = syms.get_mut(k + 1)
        && s.name.is_empty()
        && !s.module.is_empty()
        && s.module != libc
    {
        s.name = "_start".into();
    }
}

/// `file:line` of a blazesym code location.
fn location(c: Option<&blazesym::symbolize::CodeInfo<'_>>) -> (String, u32) {
    match c {
        Some(c) => (c.to_path().display().to_string(), c.line.unwrap_or(0)),
        None => (String::new(), 0),
    }
}

/// A user-space symbol with its source lines and inlined calls.
fn user_sym(module: &str, s: &blazesym::symbolize::Sym<'_>) -> Sym {
    let (file, line) = location(s.code_info.as_deref());
    Sym {
        module: module.to_string(),
        name: s.name.to_string(),
        offset: (s.offset as u64) + 1,
        file,
        line,
        // blazesym lists them outermost first; frames go innermost first.
        inlined: s
            .inlined
            .iter()
            .rev()
            .map(|i| {
                let (file, line) = location(i.code_info.as_ref());
                (i.name.to_string(), file, line)
            })
            .collect(),
    }
}

/// What symbolizing the recorder's stacks reads: the stacks, the processes' mappings
/// and the strings their paths are in.
#[derive(Clone, Copy)]
pub struct StackSources<'a> {
    /// Stacks by recorder id.
    pub stacks: &'a StackTable,
    /// Mapping rows, in the order learned.
    pub mappings: &'a [Mapping],
    /// The strings the mapping paths refer to.
    pub strings: &'a Strings,
    /// JIT tables read when their processes exited.
    pub jit_at_exit: &'a HashMap<u32, JitTable>,
}

impl<'a> StackSources<'a> {
    /// The paths a process mapped executable (jitdump files among them).
    pub(crate) fn mapped_paths(&self, tgid: u32) -> Vec<&'a str> {
        self.mappings
            .iter()
            .filter(|m| m.tgid.0 == tgid)
            .map(|m| self.strings.get(m.path))
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

/// Symbolizes addresses of recorded stacks, caching per address.
pub struct Symbols {
    symbolizer: Symbolizer,
    /// Read DWARF (embedded or separate); off when the debug directories are empty.
    debug_syms: bool,
    /// By (tgid, address, symbolized as a leaf).
    cache: HashMap<(u32, u64, bool), Sym>,
    /// Where JIT-compiled code gets its names.
    jit_mode: JitSymbols,
    /// JIT tables of processes alive at symbolization, read on first need.
    jit: HashMap<u32, JitTable>,
    /// JVMs asked to write their perf map (`jcmd`), for the summary.
    pub jvms_asked: Vec<u32>,
    /// Distinct addresses in anonymous executable memory: named from a JIT table, and
    /// left unnamed.
    jit_named: u64,
    jit_unnamed: u64,
    /// Names from `.gopclntab` where a Go binary has no symbol table.
    go: causeway_goruntime::PclntabCache,
}

impl Default for Symbols {
    fn default() -> Self {
        Symbols::new(None)
    }
}

impl Symbols {
    /// A symbolizer that looks for separate debug information (`.build-id/xx/yyyy.debug`
    /// and `.gnu_debuglink` targets) in `debug_dirs`; `None` means the system's
    /// (`/usr/lib/debug`, `/lib/debug`); an empty list turns DWARF reading off (names
    /// then come from the ELF symbol tables only).
    pub fn new(debug_dirs: Option<Vec<std::path::PathBuf>>) -> Symbols {
        Symbols {
            debug_syms: debug_dirs.as_ref().is_none_or(|d| !d.is_empty()),
            symbolizer: Symbolizer::builder().set_debug_dirs(debug_dirs).build(),
            cache: HashMap::new(),
            jit_mode: JitSymbols::Auto,
            jit: HashMap::new(),
            jvms_asked: Vec::new(),
            jit_named: 0,
            jit_unnamed: 0,
            go: Default::default(),
        }
    }

    /// Counters for the trace statistics: addresses of JIT-compiled code named and left
    /// unnamed (zero ones left out).
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        [
            ("jit_addresses_named", self.jit_named),
            ("jit_addresses_unnamed", self.jit_unnamed),
            ("jit_jvms_asked", self.jvms_asked.len() as u64),
        ]
        .into_iter()
        .filter(|(_, v)| *v > 0)
        .collect()
    }

    /// Where JIT-compiled code gets its names (default [`JitSymbols::Auto`]).
    pub fn with_jit(mut self, mode: JitSymbols) -> Symbols {
        self.jit_mode = mode;
        self
    }

    /// The name of JIT-compiled code at `addr` in process `tgid`, from the table read
    /// at its exit or, for a live process, read now (a JVM asked first, in `Auto`).
    fn jit_name(&mut self, conv: StackSources<'_>, tgid: u32, addr: u64) -> Option<String> {
        if self.jit_mode == JitSymbols::Off {
            return None;
        }
        if let Some(t) = conv.jit_at_exit.get(&tgid) {
            return t.lookup(addr).map(str::to_string);
        }
        if !self.jit.contains_key(&tgid) {
            let mapped = conv.mapped_paths(tgid);
            if self.jit_mode == JitSymbols::Auto && crate::jitmap::is_hotspot(&mapped) {
                let exe = crate::procfs::exe(tgid).unwrap_or_default();
                if !exe.is_empty() && crate::jitmap::ask_jvm(tgid, &exe) {
                    self.jvms_asked.push(tgid);
                }
            }
            self.jit
                .insert(tgid, crate::jitmap::read_tables(tgid, &mapped));
        }
        self.jit[&tgid].lookup(addr).map(str::to_string)
    }

    /// Symbolize every address of these stacks that is not cached yet.
    fn resolve(&mut self, conv: StackSources<'_>, ids: &[StackId]) {
        let mut kernel: Vec<u64> = Vec::new();
        // (path, file offset) lookups grouped by file.
        let mut by_file: HashMap<&str, Vec<(u32, u64, u64, bool)>> = HashMap::new();
        for &id in ids {
            let Some(k) = conv.stacks.get(id) else {
                continue;
            };
            for (i, &a) in k.frames.iter().enumerate() {
                let leaf = k.leaf && i == 0 && k.tgid != 0;
                if self.cache.contains_key(&(k.tgid, a, leaf)) {
                    continue;
                }
                if k.tgid == 0 {
                    kernel.push(a);
                    continue;
                }
                // The latest mapping holding the address.
                let m = conv
                    .mappings
                    .iter()
                    .rev()
                    .find(|m| m.tgid.0 == k.tgid && m.start <= a && a < m.end);
                let in_file = m.filter(|m| {
                    let p = conv.strings.get(m.path);
                    p.starts_with('/') && !crate::jitmap::is_jitdump(p)
                });
                if in_file.is_none() {
                    // Anonymous executable memory (or none known): JIT-compiled code.
                    let sym = match self.jit_name(conv, k.tgid, a) {
                        Some(name) => {
                            self.jit_named += 1;
                            Sym {
                                module: JIT_MODULE.into(),
                                name,
                                ..Sym::default()
                            }
                        }
                        None => {
                            self.jit_unnamed += 1;
                            Sym::default()
                        }
                    };
                    self.cache.insert((k.tgid, a, leaf), sym);
                    continue;
                }
                match in_file {
                    Some(m) => {
                        let path = conv.strings.get(m.path);
                        // Return addresses point after the call: look up the call.
                        let at = if leaf { a } else { a.saturating_sub(1) };
                        let off = at.saturating_sub(m.start) + m.file_offset;
                        by_file
                            .entry(path)
                            .or_default()
                            .push((k.tgid, a, off, leaf));
                    }
                    None => {
                        self.cache.insert((k.tgid, a, leaf), Sym::default());
                    }
                }
            }
        }
        kernel.sort_unstable();
        kernel.dedup();
        if !kernel.is_empty() {
            let src = Source::Kernel(Kernel::default());
            let look: Vec<u64> = kernel.iter().map(|a| a.saturating_sub(1)).collect();
            let res = self.symbolizer.symbolize(&src, Input::AbsAddr(&look));
            for (i, &a) in kernel.iter().enumerate() {
                let sym = match res.as_ref().ok().and_then(|r| r.get(i)) {
                    Some(Symbolized::Sym(s)) => Sym {
                        module: "[kernel]".into(),
                        name: s.name.to_string(),
                        offset: a.saturating_sub(s.addr),
                        ..Sym::default()
                    },
                    _ => Sym {
                        module: "[kernel]".into(),
                        ..Sym::default()
                    },
                };
                self.cache.insert((0, a, false), sym);
            }
        }
        for (path, items) in by_file {
            let offs: Vec<u64> = items.iter().map(|i| i.2).collect();
            let res = if path.starts_with('/') {
                let mut elf = Elf::new(path);
                elf.debug_syms = self.debug_syms;
                let src = Source::Elf(elf);
                self.symbolizer
                    .symbolize(&src, Input::FileOffset(&offs))
                    .ok()
            } else {
                None
            };
            for (i, &(tgid, a, off, leaf)) in items.iter().enumerate() {
                let sym = match res.as_ref().and_then(|r| r.get(i)) {
                    Some(Symbolized::Sym(s)) => user_sym(path, s),
                    _ => {
                        let go = self.go.name_at_offset(path, off);
                        Sym {
                            module: path.to_string(),
                            name: go.map(|g| g.0.to_string()).unwrap_or_default(),
                            offset: go.map_or(off, |g| g.1 + 1),
                            ..Sym::default()
                        }
                    }
                };
                self.cache.insert((tgid, a, leaf), sym);
            }
        }
    }

    /// The function names of a stack's frames, innermost first (for tests).
    #[cfg(test)]
    pub(crate) fn names(&mut self, conv: StackSources<'_>, id: StackId) -> Vec<String> {
        self.resolve(conv, &[id]);
        let k = conv.stacks.get(id).expect("a known stack");
        (0..k.frames.len())
            .map(|i| {
                let leaf = k.leaf && i == 0 && k.tgid != 0;
                let key = (k.tgid, k.frames[i], leaf);
                self.cache
                    .get(&key)
                    .map(|s| s.name.clone())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Write these stacks (symbolized) into `w`; returns recorder id -> trace id.
    /// Writing every stack of a streaming recording in id order keeps the ids equal.
    pub fn write_stacks<W: Write>(
        &mut self,
        conv: StackSources<'_>,
        ids: &[StackId],
        w: &mut TraceWriter<W>,
    ) -> HashMap<StackId, StackId> {
        self.resolve(conv, ids);
        let mut map = HashMap::with_capacity(ids.len());
        for &id in ids {
            let Some(k) = conv.stacks.get(id) else {
                continue;
            };
            let space = if k.tgid == 0 {
                FrameSpace::Kernel
            } else {
                FrameSpace::User { tgid: Tgid(k.tgid) }
            };
            let mut syms: Vec<Sym> = k
                .frames
                .iter()
                .enumerate()
                .map(|(i, &a)| {
                    let leaf = k.leaf && i == 0 && k.tgid != 0;
                    self.cache
                        .get(&(k.tgid, a, leaf))
                        .cloned()
                        .unwrap_or_default()
                })
                .collect();
            if k.tgid != 0 {
                name_entry_frames(&mut syms);
            }
            let frames = k
                .frames
                .iter()
                .zip(syms)
                .map(|(&a, s)| {
                    let module = w.intern(&s.module);
                    let symbol = w.intern(&s.name);
                    let mut f = Frame::new(space, a, module, symbol, s.offset);
                    f.file = w.intern(&s.file);
                    f.line = s.line;
                    f.inlined = s
                        .inlined
                        .iter()
                        .map(|(name, file, line)| InlinedFrame {
                            symbol: w.intern(name),
                            file: w.intern(file),
                            line: *line,
                        })
                        .collect();
                    w.intern_frame(f)
                })
                .collect();
            let new = w.intern_stack(Stack {
                frames,
                truncated: k.truncated,
            });
            map.insert(id, new);
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(module: &str, name: &str) -> Sym {
        Sym {
            module: module.into(),
            name: name.into(),
            ..Sym::default()
        }
    }

    #[test]
    fn entry_frames_of_a_stripped_program_get_names() {
        let mut s = vec![
            sym("/usr/lib/libc.so.6", "read"),
            sym("/usr/bin/gzip", ""),
            sym("/usr/bin/gzip", ""),
            sym("/usr/lib/libc.so.6", ""), // __libc_start_call_main without debug info
            sym("/usr/lib/libc.so.6", "__libc_start_main"),
            sym("/usr/bin/gzip", ""),
        ];
        name_entry_frames(&mut s);
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["read", "", "main", "", "__libc_start_main", "_start"]
        );
        // Named frames keep their names; no start code, no guess.
        let mut named = vec![
            sym("/p", "real_main"),
            sym("/usr/lib/libc.so.6", "__libc_start_call_main"),
            sym("/usr/lib/libc.so.6", "__libc_start_main_impl"),
            sym("/p", "_start"),
        ];
        name_entry_frames(&mut named);
        assert_eq!(named[0].name, "real_main");
        let mut thread = vec![sym("/p", ""), sym("/usr/lib/libc.so.6", "start_thread")];
        name_entry_frames(&mut thread);
        assert_eq!(thread[0].name, "");
    }

    #[test]
    fn recorder_frames_are_stripped_from_kernel_stacks() {
        let glue = KernelGlue::parse(
            "ffffffff81000000 T __schedule\n\
             ffffffff81000400 T schedule\n\
             ffffffff81100000 T bpf_trace_run4\n\
             ffffffff81100200 T bpf_trace_run5\n\
             ffffffff81100400 t __bpf_trace_sched_switch\n\
             ffffffff81100500 T other\n",
        );
        let mut f = vec![
            0xffffffffc0001234,
            0xffffffff81100010,
            0xffffffff81000100,
            0xffffffff81000410,
        ];
        glue.strip(&mut f);
        assert_eq!(f, vec![0xffffffff81000100, 0xffffffff81000410]);
        let mut g = vec![
            0xffffffffc0001234,
            0xffffffff81100210,
            0xffffffff81100410,
            0xffffffff81100510,
        ];
        glue.strip(&mut g);
        assert_eq!(g, vec![0xffffffff81100510]);
        let mut h = vec![0xffffffff81000100];
        glue.strip(&mut h);
        assert_eq!(h, vec![0xffffffff81000100]);
    }
}
