//! Function names and entry addresses from a Go binary's `.gopclntab`, the table the
//! runtime itself reads to print stack traces. It survives `-ldflags=-s` and `strip`,
//! which remove only the ELF symbol table and the DWARF.
//!
//! The format read is the one of Go 1.18 and later (header magic `0xfffffff0`, and
//! `0xfffffff1` since 1.20, which changed only fields after the two read here). The
//! header gives the offsets of the function name table and of the function table:
//! `nfunc + 1` pairs of 32-bit (entry offset, `_func` offset), sorted by entry, the
//! last pair's entry being the end of the text. Each `_func` starts with its entry
//! offset and the offset of its name in the name table (NUL-terminated).

use crate::error::Error;
use object::{Object, ObjectSection, ObjectSegment, ReadRef};
use std::collections::HashMap;
use std::path::Path;

/// Magic numbers of the header formats read (Go 1.18–1.19, Go 1.20 and later).
const MAGICS: [u32; 2] = [0xffff_fff0, 0xffff_fff1];

/// Where `moduledata.text` sits in the runtime's `moduledata`: after the pointer to
/// the header, six slices (24 bytes each) and three words (the same from Go 1.18 to
/// 1.26). Read when the header's `textStart` is zero (Go 1.26 stopped storing it).
const MODULEDATA_TEXT: u64 = 8 + 6 * 24 + 3 * 8;

/// One function of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Function<'a> {
    /// The Go name (`main.(*server).commit`, `runtime.gopark`).
    pub name: &'a str,
    /// Its entry address (virtual, as linked).
    pub entry: u64,
    /// Its end (the next function's entry).
    pub end: u64,
}

/// A Go binary's function table: address to function name, by a binary search of the
/// sorted entries (owned, so a symbolizer can keep it for the file's lifetime).
#[derive(Clone, Debug)]
pub struct Pclntab {
    /// Entry address and name offset of each function, sorted by entry.
    funcs: Vec<(u64, u32)>,
    /// End of the last function.
    end: u64,
    /// The name table (NUL-terminated names).
    names: Vec<u8>,
    /// Loaded segments (virtual address, file offset, file size), to look up file
    /// offsets as a uprobe or a stack's mapping gives them.
    segments: Vec<(u64, u64, u64)>,
}

/// A field of the header: word `i` after the first 8 bytes.
fn word(p: &[u8], i: usize) -> Option<u64> {
    let at = 8 + i * 8;
    Some(u64::from_le_bytes(p.get(at..at + 8)?.try_into().ok()?))
}

fn u32_at(p: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        p.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn damaged(what: &'static str) -> Error {
    Error::Pclntab(what)
}

impl Pclntab {
    /// The table of the ELF file at `path`; `None` if it has no `.gopclntab` (not a Go
    /// program, or a Go version before 1.18).
    pub fn open(path: &Path) -> Result<Option<Pclntab>, Error> {
        let f = std::fs::File::open(path).map_err(|e| Error::Read(path.to_path_buf(), e))?;
        let cache = object::ReadCache::new(f);
        let obj = object::File::parse(&cache)?;
        Pclntab::of(&obj)
    }

    /// [`Pclntab::open`] on a file in memory.
    pub fn from_bytes(data: &[u8]) -> Result<Option<Pclntab>, Error> {
        let obj = object::File::parse(data)?;
        Pclntab::of(&obj)
    }

    /// The table of a parsed ELF file.
    pub(crate) fn of<'d, R: ReadRef<'d>>(
        obj: &object::File<'d, R>,
    ) -> Result<Option<Pclntab>, Error> {
        // Position-independent builds name the section `.data.rel.ro.gopclntab`.
        let Some(sec) = obj.sections().find(|s| {
            s.name()
                .is_ok_and(|n| n == ".gopclntab" || n.ends_with(".gopclntab"))
        }) else {
            return Ok(None);
        };
        let p = sec.data()?;
        let Some(magic) = u32_at(p, 0) else {
            return Err(damaged("header cut short"));
        };
        if !MAGICS.contains(&magic) {
            return Ok(None); // another format (Go 1.2–1.17): not read
        }
        if p.get(7) != Some(&8) {
            return Err(damaged("pointer size is not 8"));
        }
        let field = |i| word(p, i).ok_or(damaged("header cut short"));
        let nfunc = usize::try_from(field(0)?).map_err(|_| damaged("function count"))?;
        let text_start = match field(2)? {
            0 => text_of_moduledata(obj, sec.address(), field(3)?)
                .or_else(|| obj.section_by_name(".text").map(|s| s.address()))
                .ok_or(damaged("no text address"))?,
            t => t,
        };
        let at = |i| usize::try_from(field(i)?).map_err(|_| damaged("offset"));
        // The name table runs up to the compilation unit table that follows it.
        let (names_at, cu_at, pcln_at) = (at(3)?, at(4)?, at(7)?);
        let names = p
            .get(names_at..cu_at)
            .ok_or(damaged("name table outside"))?;
        let pcln = p.get(pcln_at..).ok_or(damaged("function table outside"))?;
        let pair = |i: usize| -> Result<(u32, u32), Error> {
            match (u32_at(pcln, i * 8), u32_at(pcln, i * 8 + 4)) {
                (Some(e), Some(f)) => Ok((e, f)),
                _ => Err(damaged("function table cut short")),
            }
        };
        let mut funcs = Vec::with_capacity(nfunc);
        for i in 0..nfunc {
            let (entry, func) = pair(i)?;
            let name = u32_at(pcln, func as usize + 4).ok_or(damaged("_func outside"))?;
            funcs.push((text_start + u64::from(entry), name));
        }
        let end = text_start + u64::from(pair(nfunc)?.0);
        if !funcs.is_sorted_by_key(|f| f.0) {
            return Err(damaged("function table not sorted"));
        }
        let segments = obj
            .segments()
            .map(|s| (s.address(), s.file_range().0, s.file_range().1))
            .collect();
        Ok(Some(Pclntab {
            funcs,
            end,
            names: names.to_vec(),
            segments,
        }))
    }

    /// The number of functions.
    pub fn len(&self) -> usize {
        self.funcs.len()
    }

    /// No function at all.
    pub fn is_empty(&self) -> bool {
        self.funcs.is_empty()
    }

    fn function(&self, i: usize) -> Function<'_> {
        let (entry, name) = self.funcs[i];
        let tail = self.names.get(name as usize..).unwrap_or_default();
        let len = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        Function {
            name: std::str::from_utf8(&tail[..len]).unwrap_or(""),
            entry,
            end: self.funcs.get(i + 1).map_or(self.end, |f| f.0),
        }
    }

    /// The function holding virtual address `addr`.
    pub fn function_at(&self, addr: u64) -> Option<Function<'_>> {
        let i = self.funcs.partition_point(|f| f.0 <= addr).checked_sub(1)?;
        let f = self.function(i);
        (addr < f.end).then_some(f)
    }

    /// The virtual address of file offset `offset` (in a loaded segment).
    pub fn address_of_offset(&self, offset: u64) -> Option<u64> {
        self.segments.iter().find_map(|&(vaddr, off, size)| {
            (offset >= off && offset < off + size).then(|| offset - off + vaddr)
        })
    }

    /// The function holding file offset `offset` (in a loaded segment).
    pub fn function_at_offset(&self, offset: u64) -> Option<Function<'_>> {
        self.function_at(self.address_of_offset(offset)?)
    }

    /// The functions, in address order.
    pub fn functions(&self) -> impl Iterator<Item = Function<'_>> {
        (0..self.funcs.len()).map(|i| self.function(i))
    }

    /// The function named `name` (the first, if the table repeats a name).
    pub fn function_named(&self, name: &str) -> Option<Function<'_>> {
        self.functions().find(|f| f.name == name)
    }
}

/// `moduledata.text`: the runtime's module data is found by its first field, the
/// header's address, checked by its second (the name table's address).
fn text_of_moduledata<'d, R: ReadRef<'d>>(
    obj: &object::File<'d, R>,
    header: u64,
    names_offset: u64,
) -> Option<u64> {
    let want = [header.to_le_bytes(), (header + names_offset).to_le_bytes()].concat();
    for name in [".go.module", ".noptrdata", ".data", ".data.rel.ro"] {
        let Some(sec) = obj.section_by_name(name) else {
            continue;
        };
        let Ok(d) = sec.data() else { continue };
        let found = (0..d.len().saturating_sub(16))
            .step_by(8)
            .find(|&i| d[i..i + 16] == want[..]);
        if let Some(i) = found {
            let at = i + MODULEDATA_TEXT as usize;
            let text = u64::from_le_bytes(d.get(at..at + 8)?.try_into().ok()?);
            return (text != 0).then_some(text);
        }
    }
    None
}

/// Names from the `.gopclntab` of the files a recording's stacks run through, each
/// file read once (by path): for frames in Go binaries without a symbol table.
#[derive(Default)]
pub struct PclntabCache {
    files: HashMap<String, Option<Pclntab>>,
}

impl PclntabCache {
    /// The name of the function holding file offset `offset` of the file at `path`,
    /// and how far into the function the offset is; `None` if the file has no
    /// readable `.gopclntab` or no function there.
    pub fn name_at_offset(&mut self, path: &str, offset: u64) -> Option<(&str, u64)> {
        let tab = self
            .files
            .entry(path.to_string())
            .or_insert_with(|| Pclntab::open(Path::new(path)).ok().flatten())
            .as_ref()?;
        let addr = tab.address_of_offset(offset)?;
        let f = tab.function_at(addr)?;
        Some((f.name, addr - f.entry))
    }
}
