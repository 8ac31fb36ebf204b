//! ELF files as the kernel side reads them: one parse of a file's headers for its
//! sections by name, its loadable segments (where its addresses land in a process:
//! [`segments`]), its symbols (lookups by name and by address: [`symbols`], indexed on
//! first use) and its GNU build ID.
//!
//! The file's bytes are kept behind an [`Arc`] so that section contents can be handed
//! out without copying (the unwinder shares them between processes).

pub mod segments;
pub mod symbols;

pub use segments::Segment;
pub use symbols::{Symbol, SymbolKind, Symbols};

use object::{Object, ObjectKind, ObjectSection, ObjectSegment, ObjectSymbol};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Why an ELF file could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ElfError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The bytes are not an ELF file the parser understands; the parser's words.
    #[error("{0}")]
    Parse(String),
}

/// One section of an ELF file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// Its name (`.text`, `.eh_frame`).
    pub name: String,
    /// Its address in the file (0 for sections that are not loaded).
    pub address: u64,
    /// Its size in memory.
    pub size: u64,
    /// Where its bytes are in the file: (offset, size); `None` for `.bss`-like
    /// sections.
    pub file_range: Option<(u64, u64)>,
    /// It holds executable code.
    pub code: bool,
}

/// An ELF file, parsed once.
#[derive(Debug)]
pub struct Elf {
    data: Arc<Vec<u8>>,
    position_independent: bool,
    sections: Vec<Section>,
    segments: Vec<Segment>,
    symbols: OnceLock<Symbols>,
}

impl Elf {
    /// Read and parse the file at `path`.
    pub fn read(path: &Path) -> Result<Elf, ElfError> {
        let data = std::fs::read(path).map_err(|source| ElfError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Elf::parse(data)
    }

    /// Parse a file already in memory (`Vec<u8>` or a shared `Arc<Vec<u8>>`).
    pub fn parse(data: impl Into<Arc<Vec<u8>>>) -> Result<Elf, ElfError> {
        let data: Arc<Vec<u8>> = data.into();
        let obj =
            object::File::parse(data.as_slice()).map_err(|e| ElfError::Parse(e.to_string()))?;
        let sections = obj
            .sections()
            .map(|s| Section {
                name: s.name().unwrap_or_default().to_string(),
                address: s.address(),
                size: s.size(),
                file_range: s.file_range(),
                code: s.kind() == object::SectionKind::Text,
            })
            .collect();
        let segments = obj
            .segments()
            .map(|s| Segment {
                file_offset: s.file_range().0,
                file_size: s.file_range().1,
                vaddr: s.address(),
                mem_size: s.size(),
                executable: matches!(s.flags(), object::SegmentFlags::Elf { p_flags } if p_flags & object::elf::PF_X != 0),
            })
            .collect();
        let position_independent = obj.kind() == ObjectKind::Dynamic;
        Ok(Elf {
            data,
            position_independent,
            sections,
            segments,
            symbols: OnceLock::new(),
        })
    }

    /// The whole file, shared.
    pub fn data(&self) -> &Arc<Vec<u8>> {
        &self.data
    }

    /// A position-independent executable or a shared object (`ET_DYN`): its addresses
    /// move by the load bias.
    pub fn position_independent(&self) -> bool {
        self.position_independent
    }

    /// Every section, in file order.
    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// The first section named `name`; a `.debug_*` name also finds the old
    /// compressed `.zdebug_*` form, as the parser's own lookup does.
    pub fn section(&self, name: &str) -> Option<&Section> {
        let find = |n: &str| self.sections.iter().find(|s| s.name == n);
        find(name).or_else(|| find(&format!(".zdebug_{}", name.strip_prefix(".debug_")?)))
    }

    /// Where section `s`'s bytes are in [`Elf::data`]; `None` if it has none in the
    /// file or they run past its end.
    pub fn section_range(&self, s: &Section) -> Option<Range<usize>> {
        let (off, size) = s.file_range?;
        let (off, size) = (usize::try_from(off).ok()?, usize::try_from(size).ok()?);
        let end = off.checked_add(size).filter(|&e| e <= self.data.len())?;
        Some(off..end)
    }

    /// Section `s`'s bytes (see [`Elf::section_range`]).
    pub fn section_data(&self, s: &Section) -> Option<&[u8]> {
        self.section_range(s).map(|r| &self.data[r])
    }

    /// The sections of executable code, with their bytes.
    pub fn code_sections(&self) -> impl Iterator<Item = (&Section, &[u8])> {
        self.sections
            .iter()
            .filter(|s| s.code)
            .filter_map(|s| Some((s, self.section_data(s)?)))
    }

    /// The loadable segments, in file order.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The lowest loadable address, page aligned (see [`segments::base_vaddr`]).
    pub fn base_vaddr(&self) -> u64 {
        segments::base_vaddr(&self.segments)
    }

    /// The symbols, read on first use (the static table, then the dynamic one).
    pub fn symbols(&self) -> &Symbols {
        self.symbols.get_or_init(|| {
            object::File::parse(self.data.as_slice())
                .map(|obj| Symbols::new(read_symbols(&obj)))
                .unwrap_or_default()
        })
    }

    /// Its segments and symbols, without the file's bytes: what address lookups need,
    /// for callers that keep many files.
    pub fn into_tables(self) -> (Vec<Segment>, Symbols) {
        self.symbols();
        (self.segments, self.symbols.into_inner().unwrap_or_default())
    }

    /// The GNU build ID, if the file has one.
    pub fn build_id(&self) -> Option<Vec<u8>> {
        build_id_of(self.data.as_slice())
    }
}

/// Every symbol of `obj`, the static table first.
fn read_symbols(obj: &object::File<'_>) -> Vec<Symbol> {
    obj.symbols()
        .chain(obj.dynamic_symbols())
        .map(|s| Symbol {
            name: String::from_utf8_lossy(s.name_bytes().unwrap_or_default()).into_owned(),
            address: s.address(),
            size: s.size(),
            kind: match s.kind() {
                object::SymbolKind::Text => SymbolKind::Function,
                object::SymbolKind::Data => SymbolKind::Data,
                _ => SymbolKind::Other,
            },
            global: s.is_global(),
            undefined: s.is_undefined(),
        })
        .collect()
}

/// The GNU build ID of ELF bytes; `None` for none or bytes that are not ELF.
pub fn build_id_of(data: &[u8]) -> Option<Vec<u8>> {
    let obj = object::File::parse(data).ok()?;
    obj.build_id().ok().flatten().map(<[u8]>::to_vec)
}

/// The GNU build ID of the ELF file at `path`, reading only its headers and notes;
/// `None` for none or a file that cannot be read.
pub fn build_id(path: &Path) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let cache = object::ReadCache::new(file);
    let obj = object::File::parse(&cache).ok()?;
    obj.build_id().ok().flatten().map(<[u8]>::to_vec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function of this test binary, to be found by name and by address.
    #[unsafe(no_mangle)]
    #[inline(never)]
    extern "C" fn causeway_procfs_elf_test_target(x: u64) -> u64 {
        std::hint::black_box(x + 1)
    }

    fn own_exe() -> PathBuf {
        std::env::current_exe().unwrap()
    }

    #[test]
    fn this_test_binary_parses_and_finds_its_own_function() {
        assert_eq!(causeway_procfs_elf_test_target(1), 2);
        let elf = Elf::read(&own_exe()).unwrap();
        assert!(elf.section(".text").is_some_and(|s| s.code));
        assert!(
            elf.code_sections()
                .any(|(s, b)| s.name == ".text" && !b.is_empty())
        );
        assert!(elf.segments().iter().any(|s| s.executable));
        let f = elf
            .symbols()
            .by_name("causeway_procfs_elf_test_target")
            .unwrap();
        assert_eq!(f.kind, SymbolKind::Function);
        let inside = elf.symbols().function_containing(f.address + 1).unwrap();
        assert_eq!(inside.name, "causeway_procfs_elf_test_target");
        assert_eq!(
            elf.symbols().function_starting_at(f.address),
            Some("causeway_procfs_elf_test_target")
        );
        // The function's file offset maps back to its address.
        let off = segments::offset_of_vaddr(elf.segments(), f.address).unwrap();
        assert_eq!(
            segments::vaddr_of_offset(elf.segments(), off),
            Some(f.address)
        );
    }

    #[test]
    fn build_ids_agree_between_the_path_and_the_bytes() {
        let exe = own_exe();
        let from_path = build_id(&exe);
        let elf = Elf::read(&exe).unwrap();
        assert_eq!(from_path, elf.build_id());
        assert!(from_path.is_none_or(|id| id.len() >= 8));
        assert_eq!(build_id_of(b"not an elf"), None);
    }

    #[test]
    fn what_is_not_elf_is_a_parse_error_and_a_missing_file_a_read_error() {
        assert!(matches!(
            Elf::parse(b"not an elf".to_vec()),
            Err(ElfError::Parse(_))
        ));
        assert!(matches!(
            Elf::read(Path::new("/nonexistent/causeway")),
            Err(ElfError::Read { .. })
        ));
    }
}
