//! The symbolizer: every address of the stacks to write named once, cached per
//! address, and the named stacks interned into a trace.

use crate::sym::{Sym, name_entry_frames, user_sym};
use crate::{JIT_MODULE, JitSymbols, StackSources};
use blazesym::symbolize::source::{Elf, Kernel, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer};
use causeway_format::{Frame, FrameSpace, InlinedFrame, Stack, StackId, Tgid, TraceWriter};
use causeway_procfs::jit::{self, JitTable};
use std::collections::HashMap;
use std::io::Write;

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

/// One address to look up in a file: (process, address, file offset, leaf, the path
/// the process mapped the file at).
type FileLookup<'a> = (u32, u64, u64, bool, &'a str);

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
        if let Some(name) = conv.frame_names.frame_name(tgid, addr) {
            return Some(name);
        }
        if let Some(t) = conv.jit_at_exit.get(&tgid) {
            return t.lookup(addr).map(str::to_string);
        }
        if !self.jit.contains_key(&tgid) {
            let mapped = conv.mapped_paths(tgid);
            if self.jit_mode == JitSymbols::Auto && jit::is_hotspot(&mapped) {
                let exe = causeway_procfs::process::exe(tgid).unwrap_or_default();
                if !exe.is_empty() && jit::ask_jvm(tgid, &exe) {
                    self.jvms_asked.push(tgid);
                }
            }
            self.jit.insert(tgid, jit::read_tables(tgid, &mapped));
        }
        self.jit[&tgid].lookup(addr).map(str::to_string)
    }

    /// Symbolize every address of these stacks that is not cached yet.
    fn resolve(&mut self, conv: StackSources<'_>, ids: &[StackId]) {
        let mut kernel: Vec<u64> = Vec::new();
        // (path, file offset) lookups grouped by the file to open (a process in
        // another mount namespace maps files its paths do not name here), each with
        // the path the process mapped, which names the frames' module.
        let mut by_file: HashMap<&str, Vec<FileLookup<'_>>> = HashMap::new();
        for &id in ids {
            let Some(k) = conv.stacks.stack(id) else {
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
                    let p = conv.strings.path(m.path);
                    p.starts_with('/') && !jit::is_jitdump(p)
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
                        let path = conv.strings.path(m.path);
                        // Return addresses point after the call: look up the call.
                        let at = if leaf { a } else { a.saturating_sub(1) };
                        let off = at.saturating_sub(m.start) + m.file_offset;
                        let open = conv.files.map_or(path, |f| f.open_path(k.tgid, path));
                        by_file
                            .entry(open)
                            .or_default()
                            .push((k.tgid, a, off, leaf, path));
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
        for (open, items) in by_file {
            let offs: Vec<u64> = items.iter().map(|i| i.2).collect();
            let res = if open.starts_with('/') {
                let mut elf = Elf::new(open);
                elf.debug_syms = self.debug_syms;
                let src = Source::Elf(elf);
                self.symbolizer
                    .symbolize(&src, Input::FileOffset(&offs))
                    .ok()
            } else {
                None
            };
            for (i, &(tgid, a, off, leaf, path)) in items.iter().enumerate() {
                let sym = match res.as_ref().and_then(|r| r.get(i)) {
                    Some(Symbolized::Sym(s)) => user_sym(path, s),
                    _ => {
                        let go = self.go.name_at_offset(open, off);
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
    fn names(&mut self, conv: StackSources<'_>, id: StackId) -> Vec<String> {
        self.resolve(conv, &[id]);
        let k = conv.stacks.stack(id).expect("a known stack");
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
            let Some(k) = conv.stacks.stack(id) else {
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
    use crate::{PathLookup, StackKey, StackLookup};
    use causeway_format::{Mapping, StringId, Timestamp};

    struct Table(Vec<StackKey>);

    impl StackLookup for Table {
        fn stack(&self, id: StackId) -> Option<&StackKey> {
            self.0.get(id.0 as usize)
        }
    }

    struct Paths(Vec<String>);

    impl PathLookup for Paths {
        fn path(&self, id: StringId) -> &str {
            self.0.get(id.0 as usize).map_or("", String::as_str)
        }
    }

    /// A function of this test binary, never inlined, for the leaf test below.
    #[inline(never)]
    #[unsafe(no_mangle)]
    pub extern "C" fn causeway_leaf_probe_target(x: u64) -> u64 {
        std::hint::black_box(x).wrapping_mul(31) ^ 7
    }

    #[test]
    fn a_thread_stopped_on_a_functions_first_byte_is_named_for_that_function() {
        let pid = std::process::id();
        let maps: Vec<_> = causeway_procfs::maps::read(pid)
            .expect("own maps")
            .into_iter()
            .filter(|m| m.exec)
            .collect();
        let paths = Paths(maps.iter().map(|m| m.path.clone()).collect());
        let mappings: Vec<Mapping> = maps
            .iter()
            .enumerate()
            .map(|(i, m)| Mapping {
                tgid: Tgid(pid),
                since: Timestamp(0),
                start: m.start,
                end: m.end,
                file_offset: m.offset,
                path: StringId(i as u32),
                build_id: Vec::new(),
            })
            .collect();
        let a = causeway_leaf_probe_target as *const () as u64;
        assert_eq!(causeway_leaf_probe_target(1), 24);
        let key = |leaf| StackKey {
            tgid: pid,
            frames: vec![a],
            truncated: false,
            leaf,
        };
        let stacks = Table(vec![key(true), key(false)]);
        let jit_at_exit = HashMap::new();
        let conv = StackSources {
            stacks: &stacks,
            mappings: &mappings,
            strings: &paths,
            jit_at_exit: &jit_at_exit,
            frame_names: &causeway_unwind::NoFrameNames,
            files: None,
        };
        let mut syms = Symbols::new(Some(Vec::new()));
        let names = syms.names(conv, StackId(0));
        assert_eq!(names, ["causeway_leaf_probe_target"]);
        // The same address as a return address is looked up in the call before it:
        // outside this function.
        let names = syms.names(conv, StackId(1));
        assert_ne!(names, ["causeway_leaf_probe_target"]);
    }
}
