//! Which function an address of a running process is the start of: the targets of
//! indirect calls, read at run time, become [`Site`]s to probe by name.
//!
//! The address is found in `/proc/PID/maps`, turned into an offset in the mapped file,
//! then into the file's own address through its loadable segments, and matched against
//! the start of a function symbol (static table first, then the dynamic one).

use crate::callees::Site;
use crate::error::ProbeError;
use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};
use std::collections::HashMap;
use std::path::PathBuf;

/// One executable mapping: `[start, end)` of the process at `offset` of `path`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mapping {
    start: u64,
    end: u64,
    offset: u64,
    path: PathBuf,
}

/// A file's loadable segments (file offset, file size, address) and its function
/// symbols by address.
#[derive(Debug, Default)]
struct FileSyms {
    segments: Vec<(u64, u64, u64)>,
    functions: HashMap<u64, String>,
}

/// Of several names of one address, the one to probe: a global name over a local one,
/// then the one with the fewest leading underscores (`write` over `__libc_write`),
/// then the shortest.
fn better(a: &(bool, &str), b: &(bool, &str)) -> bool {
    let under = |s: &str| s.len() - s.trim_start_matches('_').len();
    (!a.0, under(a.1), a.1.len(), a.1) < (!b.0, under(b.1), b.1.len(), b.1)
}

impl FileSyms {
    fn read(path: &PathBuf) -> FileSyms {
        let Ok(data) = std::fs::read(path) else {
            return FileSyms::default();
        };
        let Ok(obj) = object::File::parse(&*data) else {
            return FileSyms::default();
        };
        let segments = obj
            .segments()
            .map(|s| (s.file_range().0, s.file_range().1, s.address()))
            .filter(|&(_, size, _)| size > 0)
            .collect();
        let mut best: HashMap<u64, (bool, String)> = HashMap::new();
        for sym in obj.symbols().chain(obj.dynamic_symbols()) {
            if sym.kind() != SymbolKind::Text || sym.is_undefined() || sym.address() == 0 {
                continue;
            }
            let Ok(name) = sym.name() else { continue };
            // Versioned dynamic names (`memcpy@@GLIBC_2.14`) are probed by the plain one.
            let name = name.split('@').next().unwrap_or(name);
            if name.is_empty() {
                continue;
            }
            let cand = (sym.is_global(), name);
            match best.get(&sym.address()) {
                Some((g, n)) if !better(&cand, &(*g, n.as_str())) => {}
                _ => {
                    best.insert(sym.address(), (cand.0, name.to_string()));
                }
            }
        }
        FileSyms {
            segments,
            functions: best.into_iter().map(|(a, (_, n))| (a, n)).collect(),
        }
    }

    /// The file address of byte `file_off` of the file.
    fn address_of(&self, file_off: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|&&(off, size, _)| off <= file_off && file_off < off + size)
            .map(|&(off, _, addr)| addr + (file_off - off))
    }
}

/// Resolves addresses of one process to the functions they start.
#[derive(Debug)]
pub struct AddressResolver {
    maps: Vec<Mapping>,
    files: HashMap<PathBuf, FileSyms>,
}

/// The file-backed executable mappings among `maps`.
fn exec_files(maps: Vec<causeway_procfs::Mapping>) -> Vec<Mapping> {
    maps.into_iter()
        .filter(|m| m.is_exec_file())
        .map(|m| Mapping {
            start: m.start,
            end: m.end,
            offset: m.offset,
            path: PathBuf::from(m.path),
        })
        .collect()
}

impl AddressResolver {
    /// The executable mappings of process `tgid`, as they are now.
    pub fn for_process(tgid: u32) -> Result<AddressResolver, ProbeError> {
        let maps = causeway_procfs::maps::read(tgid)
            .map_err(|source| ProbeError::Executable { tgid, source })?;
        Ok(AddressResolver {
            maps: exec_files(maps),
            files: HashMap::new(),
        })
    }

    /// The function whose first byte is at `addr`, or `None` (not in a mapped file,
    /// or not the start of a named function: code without a symbol, or JIT code).
    pub fn function_at(&mut self, addr: u64) -> Option<Site> {
        let m = self
            .maps
            .iter()
            .find(|m| m.start <= addr && addr < m.end)?
            .clone();
        let syms = self
            .files
            .entry(m.path.clone())
            .or_insert_with(|| FileSyms::read(&m.path));
        let file_addr = syms.address_of(addr - m.start + m.offset)?;
        let name = syms.functions.get(&file_addr)?;
        Some(Site {
            binary: m.path,
            symbol: name.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function of this test binary, reached through a pointer.
    #[unsafe(no_mangle)]
    #[inline(never)]
    extern "C" fn causeway_resolve_test_target(x: u64) -> u64 {
        std::hint::black_box(x + 1)
    }

    #[test]
    fn maps_lines_keep_executable_files_only() {
        let text = "\
55d0c0a00000-55d0c0a01000 r--p 00000000 fe:01 123 /usr/bin/prog
55d0c0a01000-55d0c0a02000 r-xp 00001000 fe:01 123 /usr/bin/prog
7f0000000000-7f0000021000 rw-p 00000000 00:00 0
7fff00000000-7fff00001000 r-xp 00000000 00:00 0 [vdso]
";
        let m = exec_files(causeway_procfs::maps::parse(text));
        assert_eq!(m.len(), 1);
        assert_eq!(
            (m[0].start, m[0].end, m[0].offset),
            (0x55d0c0a01000, 0x55d0c0a02000, 0x1000)
        );
    }

    #[test]
    fn global_plain_names_win() {
        assert!(better(&(true, "write"), &(false, "write")));
        assert!(better(&(true, "write"), &(true, "__libc_write")));
        assert!(!better(&(false, "a"), &(true, "__b")));
    }

    #[test]
    fn a_function_pointer_of_this_process_resolves_to_its_symbol() {
        let f: extern "C" fn(u64) -> u64 = causeway_resolve_test_target;
        assert_eq!(f(1), 2);
        let addr = f as usize as u64;
        let mut r = AddressResolver::for_process(std::process::id()).unwrap();
        let site = r.function_at(addr).expect("the test target resolves");
        assert_eq!(site.symbol, "causeway_resolve_test_target");
        assert_eq!(
            site.binary.canonicalize().unwrap(),
            std::env::current_exe().unwrap().canonicalize().unwrap()
        );
        // One byte in: not the start of a function.
        assert_eq!(r.function_at(addr + 1), None);
        // Not mapped at all.
        assert_eq!(r.function_at(8), None);
    }
}
