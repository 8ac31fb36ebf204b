//! Where a watched variable lives: its symbol in the executable's ELF symbol table,
//! moved by the load bias of a position-independent executable (from
//! `/proc/PID/maps`), and, when watchpoints cannot be had, which functions' code
//! refers to it.

use super::WatchError;
use object::{Object, ObjectKind, ObjectSection, ObjectSegment, ObjectSymbol, SectionKind};
use std::path::Path;

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

/// Parse `data` (an ELF file) and find symbol `name`; `len` overrides its size.
pub fn find_symbol(data: &[u8], name: &str, len: Option<u8>) -> Result<FileVariable, WatchError> {
    let obj = object::File::parse(data).map_err(|e| WatchError::Elf(e.to_string()))?;
    let sym = obj
        .symbols()
        .chain(obj.dynamic_symbols())
        .find(|s| s.name() == Ok(name) && s.address() != 0)
        .ok_or_else(|| WatchError::NoSymbol(name.to_string()))?;
    let len = match len {
        Some(l) => l,
        None => match sym.size() {
            1 | 2 | 4 | 8 => sym.size() as u8,
            other => return Err(WatchError::SymbolSize(name.to_string(), other)),
        },
    };
    Ok(FileVariable {
        symbol: Some(name.to_string()),
        vaddr: sym.address(),
        len,
        pie: obj.kind() == ObjectKind::Dynamic,
        base_vaddr: base_vaddr(&obj),
    })
}

/// The lowest loadable address of the file, rounded down to a page.
fn base_vaddr(obj: &object::File<'_>) -> u64 {
    obj.segments().map(|s| s.address()).min().unwrap_or(0) & !0xfff
}

/// The load bias of `exe` in process `pid`: where its offset-0 mapping starts minus
/// the file's base address. `None` while it is not mapped (before exec).
pub fn load_bias(pid: u32, exe: &Path, v: &FileVariable) -> Option<u64> {
    if !v.pie {
        return Some(0);
    }
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    let exe = exe.to_string_lossy();
    maps.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let range = f.next()?;
        let _perms = f.next()?;
        let offset = u64::from_str_radix(f.next()?, 16).ok()?;
        let path = f.nth(2)?;
        if offset != 0 || path != exe {
            return None;
        }
        let start = u64::from_str_radix(range.split('-').next()?, 16).ok()?;
        Some(start.wrapping_sub(v.base_vaddr))
    })
}

/// Names of the functions whose code refers to `[vaddr, vaddr + len)` by a
/// RIP-relative operand (how x86-64 code reaches a global), sorted. A heuristic with
/// no disassembler: every 4-byte window is read as a displacement whose instruction
/// ends 0, 1, 2 or 4 bytes (an immediate) after it; a false match needs a random
/// 32-bit value to land on the few bytes of the variable.
pub fn functions_referring(data: &[u8], vaddr: u64, len: u8) -> Vec<String> {
    let Ok(obj) = object::File::parse(data) else {
        return Vec::new();
    };
    let mut funcs: Vec<(u64, u64, String)> = obj
        .symbols()
        .chain(obj.dynamic_symbols())
        .filter(|s| s.kind() == object::SymbolKind::Text && s.size() > 0)
        .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_string())))
        .collect();
    funcs.sort();
    let end = vaddr + u64::from(len.max(1));
    let mut hits = Vec::new();
    for sec in obj.sections().filter(|s| s.kind() == SectionKind::Text) {
        let Ok(bytes) = sec.data() else { continue };
        let base = sec.address();
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
    let mut names: Vec<String> = hits
        .into_iter()
        .filter_map(|at| {
            let i = funcs.partition_point(|f| f.0 <= at).checked_sub(1)?;
            let (a, s, n) = funcs.get(i)?;
            (at < a + s).then(|| n.clone())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}
