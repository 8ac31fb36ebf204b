//! Which function an address of a running process is the start of: the targets of
//! indirect calls, read at run time, become [`Site`]s to probe by name.
//!
//! The address is found in `/proc/PID/maps`, turned into an offset in the mapped file,
//! then into the file's own address through its loadable segments, and matched against
//! the start of a function symbol (static table first, then the dynamic one).

use crate::callees::Site;
use crate::error::ProbeError;
use causeway_procfs::elf::{Elf, Segment, Symbols, segments};
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

/// Resolves addresses of one process to the functions they start.
#[derive(Debug)]
pub struct AddressResolver {
    maps: Vec<Mapping>,
    /// Each file's segments and symbols, read once; `None` if it could not be read
    /// or parsed.
    files: HashMap<PathBuf, Option<(Vec<Segment>, Symbols)>>,
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
        let (segs, syms) = self
            .files
            .entry(m.path.clone())
            .or_insert_with(|| Elf::read(&m.path).ok().map(Elf::into_tables))
            .as_ref()?;
        let file_addr = segments::vaddr_of_offset(segs, addr - m.start + m.offset)?;
        let name = syms.function_starting_at(file_addr)?;
        Some(Site {
            binary: m.path,
            symbol: name.to_string(),
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
