//! Names for the addresses of perf.data callchains: kernel addresses from this
//! machine's kallsyms, user addresses from the files the processes mapped (the
//! file's path and offset from the MMAP/MMAP2 records, the symbols read by
//! blazesym), cached per address. As with `perf script`, the files must still be
//! there; a frame without a name keeps its address and its file.

use blazesym::symbolize::source::{Elf, Kernel, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer};
// Fx rather than SipHash: hashed for every frame of every sample (addresses and ids).
use rustc_hash::FxHashMap as HashMap;

/// A frame's name, offset in its symbol, and file (`[kernel.kallsyms]` for the kernel).
#[derive(Clone, Debug, Default)]
pub(crate) struct Sym {
    pub symbol: String,
    pub offset: u64,
    pub dso: String,
}

/// An executable mapping of a process.
struct Map {
    start: u64,
    end: u64,
    pgoff: u64,
    path: String,
}

/// The kernel's module name in frames, as perf prints it.
pub(crate) const KERNEL_DSO: &str = "[kernel.kallsyms]";

/// Kernel addresses are in the upper half on x86-64 and arm64.
pub(crate) fn is_kernel_addr(a: u64) -> bool {
    a >= 0xffff_8000_0000_0000
}

/// Mappings learned from the file and symbols resolved so far.
#[derive(Default)]
pub(crate) struct Symbols {
    symbolizer: Option<Symbolizer>,
    maps: HashMap<u32, Vec<Map>>,
    cache: HashMap<(u32, u64), Sym>,
}

impl Symbols {
    /// An executable mapping of process `pid` (MMAP or MMAP2).
    pub fn map(&mut self, pid: u32, start: u64, len: u64, pgoff: u64, path: &str) {
        self.maps.entry(pid).or_default().push(Map {
            start,
            end: start.saturating_add(len),
            pgoff,
            path: path.to_string(),
        });
    }

    /// The process forked: the child starts with the parent's mappings.
    pub fn fork(&mut self, parent: u32, child: u32) {
        if parent == child || self.maps.contains_key(&child) {
            return;
        }
        if let Some(p) = self.maps.get(&parent) {
            let copy = p
                .iter()
                .map(|m| Map {
                    start: m.start,
                    end: m.end,
                    pgoff: m.pgoff,
                    path: m.path.clone(),
                })
                .collect();
            self.maps.insert(child, copy);
        }
    }

    /// The process exec'd: its old mappings are gone.
    pub fn exec(&mut self, pid: u32) {
        self.maps.remove(&pid);
        self.cache.retain(|(p, _), _| *p != pid);
    }

    /// The name of `addr` in process `pid` (a return address unless `leaf`: the call
    /// before it is looked up).
    pub fn resolve(&mut self, pid: u32, addr: u64, leaf: bool) -> &Sym {
        let key = (if is_kernel_addr(addr) { 0 } else { pid }, addr);
        if !self.cache.contains_key(&key) {
            let look = if leaf { addr } else { addr.saturating_sub(1) };
            let sym = if key.0 == 0 {
                self.kernel(look, addr)
            } else {
                self.user(pid, look, addr)
            };
            self.cache.insert(key, sym);
        }
        &self.cache[&key]
    }

    fn symbolizer(&mut self) -> &Symbolizer {
        self.symbolizer.get_or_insert_with(Symbolizer::new)
    }

    fn kernel(&mut self, look: u64, addr: u64) -> Sym {
        let src = Source::Kernel(Kernel::default());
        let name = match self
            .symbolizer()
            .symbolize_single(&src, Input::AbsAddr(look))
        {
            Ok(Symbolized::Sym(s)) => Some((s.name.to_string(), addr.saturating_sub(s.addr))),
            _ => None,
        };
        let (symbol, offset) = name.unwrap_or_default();
        Sym {
            symbol,
            offset,
            dso: KERNEL_DSO.to_string(),
        }
    }

    fn user(&mut self, pid: u32, look: u64, addr: u64) -> Sym {
        let Some(m) = self
            .maps
            .get(&pid)
            .and_then(|v| v.iter().rev().find(|m| m.start <= look && look < m.end))
        else {
            return Sym::default();
        };
        let path = m.path.clone();
        let off = look - m.start + m.pgoff;
        let mut sym = Sym {
            dso: path.clone(),
            ..Sym::default()
        };
        if path.starts_with('/') {
            let src = Source::Elf(Elf::new(&path));
            if let Ok(Symbolized::Sym(s)) = self
                .symbolizer()
                .symbolize_single(&src, Input::FileOffset(off))
            {
                sym.symbol = s.name.to_string();
                sym.offset = (s.offset as u64) + u64::from(look != addr);
            }
        }
        sym
    }
}
