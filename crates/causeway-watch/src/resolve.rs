//! Where a watched variable lives: its symbol in the ELF symbol tables of the
//! executable or of a shared object the process maps, moved by the file's load bias
//! (from `/proc/PID/maps`); and which functions' code refers to it (offered when
//! watchpoints cannot be had).

use super::WatchError;
use causeway_procfs::elf::{Elf, ElfError, segments};
use std::path::{Path, PathBuf};

/// A variable found in an executable file, before it is loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileVariable {
    /// Its symbol name, if it was given by name.
    pub symbol: Option<String>,
    /// Its address in the file (the ELF virtual address).
    pub vaddr: u64,
    /// Bytes watched (1, 2, 4 or 8).
    pub len: u8,
    /// True for a position-independent executable: the address moves by the load bias.
    pub pie: bool,
    /// The lowest address of a loadable segment, page aligned: what the first mapping
    /// of the file (offset 0) starts at, before the bias.
    pub base_vaddr: u64,
}

/// Parse `data` (an ELF file).
fn parse(data: &[u8]) -> Result<Elf, WatchError> {
    Elf::parse(data.to_vec()).map_err(|e| match e {
        ElfError::Parse(why) => WatchError::Elf(why),
        other => WatchError::Elf(other.to_string()),
    })
}

/// Parse `data` (an ELF file) and find symbol `name`; `len` overrides its size.
pub fn find_symbol(data: &[u8], name: &str, len: Option<u8>) -> Result<FileVariable, WatchError> {
    symbol_in(&parse(data)?, name, len)
}

/// Symbol `name` of a parsed file; `len` overrides its size.
fn symbol_in(elf: &Elf, name: &str, len: Option<u8>) -> Result<FileVariable, WatchError> {
    let sym = elf
        .symbols()
        .by_name(name)
        .ok_or_else(|| WatchError::NoSymbol(name.to_string()))?;
    let len = match len {
        Some(l) => l,
        None => match sym.size {
            1 | 2 | 4 | 8 => sym.size as u8,
            other => return Err(WatchError::SymbolSize(name.to_string(), other)),
        },
    };
    Ok(FileVariable {
        symbol: Some(name.to_string()),
        vaddr: sym.address,
        len,
        pie: elf.position_independent(),
        base_vaddr: elf.base_vaddr(),
    })
}

/// The load bias of `exe` in process `pid`: where its offset-0 mapping starts minus
/// the file's base address. `None` while it is not mapped (before exec).
pub fn load_bias(pid: u32, exe: &Path, v: &FileVariable) -> Option<u64> {
    if !v.pie {
        return Some(0);
    }
    let maps = causeway_procfs::maps::read(pid).ok()?;
    segments::first_mapping_bias(&maps, &exe.to_string_lossy(), v.base_vaddr)
}

/// Names of the functions whose code refers to `[vaddr, vaddr + len)` by a
/// RIP-relative operand (how x86-64 code reaches a global), sorted. A heuristic with
/// no disassembler: every 4-byte window is read as a displacement whose instruction
/// ends 0, 1, 2 or 4 bytes (an immediate) after it; a false match needs a random
/// 32-bit value to land on the few bytes of the variable.
pub fn functions_referring(data: &[u8], vaddr: u64, len: u8) -> Vec<String> {
    let Ok(elf) = parse(data) else {
        return Vec::new();
    };
    let end = vaddr + u64::from(len.max(1));
    let mut hits = Vec::new();
    for (sec, bytes) in elf.code_sections() {
        let base = sec.address;
        for (i, w) in bytes.windows(4).enumerate() {
            let d = i32::from_le_bytes([w[0], w[1], w[2], w[3]]) as i64;
            let at = base + i as u64;
            let refers = [0u64, 1, 2, 4].iter().any(|k| {
                let t = (at + 4 + k).wrapping_add_signed(d);
                (vaddr..end).contains(&t)
            });
            if refers {
                hits.push(at);
            }
        }
    }
    let syms = elf.symbols();
    let mut names: Vec<String> = hits
        .into_iter()
        .filter_map(|at| Some(syms.function_containing(at)?.name.clone()))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The regular files a process maps, each once, in map order.
pub fn mapped_files(pid: u32) -> Vec<PathBuf> {
    causeway_procfs::maps::read(pid)
        .map(|m| causeway_procfs::mapped_files(&m))
        .unwrap_or_default()
}

/// Does `lib` (as the user wrote it before `:`) name the file `path`? The whole
/// path, the file name, or the file name up to a version or suffix: `libc` and
/// `libc.so` both name `/usr/lib/x86_64-linux-gnu/libc.so.6`.
pub fn names_file(lib: &str, path: &Path) -> bool {
    if Path::new(lib) == path {
        return true;
    }
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    name == lib
        || name
            .strip_prefix(lib)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('-'))
}

/// Symbol `name` in the files of `pid`'s mappings other than `skip` (the
/// executable, already searched), restricted to the files `lib` names if given.
/// Several files defining it (without `lib`) is an error that lists them.
pub fn find_in_mapped(
    pid: u32,
    skip: Option<&Path>,
    lib: Option<&str>,
    name: &str,
    len: Option<u8>,
) -> Result<(PathBuf, FileVariable), WatchError> {
    let mut found = Vec::new();
    for file in mapped_files(pid) {
        if Some(file.as_path()) == skip && lib.is_none() {
            continue;
        }
        if lib.is_some_and(|l| !names_file(l, &file)) {
            continue;
        }
        let Ok(elf) = Elf::read(&file) else {
            continue;
        };
        match symbol_in(&elf, name, len) {
            Ok(v) => found.push((file, v)),
            Err(WatchError::NoSymbol(_) | WatchError::Elf(_)) => {}
            Err(e) => return Err(e),
        }
    }
    match found.len() {
        0 => Err(WatchError::NoSymbol(name.to_string())),
        1 => Ok(found.remove(0)),
        _ => Err(WatchError::Ambiguous {
            name: name.to_string(),
            files: found.iter().map(|(f, _)| f.display().to_string()).collect(),
        }),
    }
}

/// The mapped file whose loaded segments hold `addr` in process `pid`, and the
/// address in that file: where uprobes for a variable given by address go.
pub fn file_variable_at(pid: u32, addr: u64, len: u8) -> Option<(PathBuf, FileVariable)> {
    for file in mapped_files(pid) {
        let Ok(elf) = Elf::read(&file) else {
            continue;
        };
        let mut var = FileVariable {
            symbol: None,
            vaddr: 0,
            len,
            pie: elf.position_independent(),
            base_vaddr: elf.base_vaddr(),
        };
        let Some(bias) = load_bias(pid, &file, &var) else {
            continue;
        };
        let v = addr.wrapping_sub(bias);
        if segments::holds_vaddr(elf.segments(), v) {
            var.vaddr = v;
            return Some((file, var));
        }
    }
    None
}
