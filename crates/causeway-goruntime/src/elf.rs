//! The ELF side of a Go binary: symbols (from the symbol table, else from
//! `.gopclntab`), and data read at virtual addresses.

use crate::error::Error;
use crate::pclntab::Pclntab;
use object::{Architecture, Object, ObjectSection, ObjectSegment, ObjectSymbol, ReadRef};
use std::collections::HashMap;

/// `push rbp; mov rbp, rsp`: where a Go function sets up its frame, after its stack
/// check.
const FRAME_SETUP: [u8; 4] = [0x55, 0x48, 0x89, 0xe5];

/// How far into a function its frame setup is looked for (the stack check is 10 to 17
/// bytes: `cmp` with `jbe rel8` or `rel32`, or a `lea` before them for a large frame).
const PROLOGUE_WINDOW: u64 = 32;

/// The functions this crate looks up (a Go binary has tens of thousands).
const FUNCTIONS: &[&str] = &[
    "runtime.execute",
    "runtime.gopark",
    "runtime.ready",
    "runtime.injectglist",
    "runtime.main",
];

/// The variables this crate looks up.
const VARIABLES: &[&str] = &["runtime.buildVersion", "runtime.waitReasonStrings"];

/// The wait reason the runtime's table of names is found by in a binary without
/// symbols: number 1 (`waitReasonGCAssistMarking`) from Go 1.11 to 1.26 at least,
/// after number 0, which has no name.
const FIRST_WAIT_REASON: &[u8] = b"GC assist marking";

/// An ELF file opened for the Go runtime's facts.
pub(crate) struct GoElf<'d, R: ReadRef<'d>> {
    pub(crate) obj: object::File<'d, R>,
    /// Address and size of each of [`FUNCTIONS`] and [`VARIABLES`] found (functions missing from the
    /// symbol table looked up in `.gopclntab`).
    syms: HashMap<&'static str, (u64, u64)>,
}

impl<'d, R: ReadRef<'d>> GoElf<'d, R> {
    pub(crate) fn parse(data: R) -> Result<GoElf<'d, R>, Error> {
        let obj = object::File::parse(data)?;
        let mut syms = HashMap::new();
        for s in obj.symbols() {
            if let Ok(name) = s.name()
                && let Some(&w) = FUNCTIONS.iter().chain(VARIABLES).find(|&&w| w == name)
            {
                syms.insert(w, (s.address(), s.size()));
            }
        }
        if FUNCTIONS.iter().any(|w| !syms.contains_key(w))
            && let Some(tab) = Pclntab::of(&obj)?
        {
            for &w in FUNCTIONS {
                if let Some(f) = tab.function_named(w) {
                    syms.entry(w).or_insert((f.entry, f.end - f.entry));
                }
            }
        }
        Ok(GoElf { obj, syms })
    }

    /// A Go runtime is in the file: its build-information section (every Go binary
    /// since 1.13, stripped or not) or its main function.
    pub(crate) fn is_go(&self) -> bool {
        self.obj.section_by_name(".go.buildinfo").is_some()
            || self.syms.contains_key("runtime.main")
    }

    pub(crate) fn is_x86_64(&self) -> bool {
        self.obj.architecture() == Architecture::X86_64
    }

    /// `len` bytes at virtual address `addr`, from the section that holds them.
    fn bytes_at(&self, addr: u64, len: u64) -> Option<&'d [u8]> {
        for sec in self.obj.sections() {
            let (start, size) = (sec.address(), sec.size());
            if addr >= start && addr.checked_add(len)? <= start + size {
                let data = sec.data().ok()?;
                let from = usize::try_from(addr - start).ok()?;
                return data.get(from..from.checked_add(usize::try_from(len).ok()?)?);
            }
        }
        None
    }

    fn u64_at(&self, addr: u64) -> Option<u64> {
        let b = self.bytes_at(addr, 8)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }

    /// A Go string header (pointer, length) at `addr`, and the text it points to.
    fn go_string_at(&self, addr: u64) -> Option<String> {
        let (ptr, len) = (self.u64_at(addr)?, self.u64_at(addr + 8)?);
        if len > 4096 {
            return None;
        }
        let b = self.bytes_at(ptr, len)?;
        Some(String::from_utf8_lossy(b).into_owned())
    }

    /// `runtime.buildVersion` ("go1.26.8"), else the version in `.go.buildinfo`.
    pub(crate) fn build_version(&self) -> Option<String> {
        if let Some(&(addr, _)) = self.syms.get("runtime.buildVersion")
            && let Some(v) = self.go_string_at(addr)
        {
            return Some(v);
        }
        let sec = self.obj.section_by_name(".go.buildinfo")?;
        crate::buildinfo::version(sec.data().ok()?)
    }

    /// The file offset to probe function `name` at: its frame-pointer push
    /// (`push rbp; mov rbp, rsp`) when the prologue before it only checks the stack
    /// (Go's `cmp rsp, [r14+16]; jbe morestack`), else its first instruction. Argument
    /// registers and R14 are as at the entry there, and the kernel emulates a `push`
    /// where it must step any other instruction out of line: one trap per hit instead
    /// of two, which on a virtual machine is most of a uprobe's cost.
    pub(crate) fn probe_offset(&self, name: &str) -> Option<u64> {
        let &(addr, _) = self.syms.get(name)?;
        let skip = self
            .bytes_at(addr, PROLOGUE_WINDOW)
            .and_then(|code| {
                code.windows(FRAME_SETUP.len())
                    .position(|w| w == FRAME_SETUP)
            })
            .unwrap_or(0) as u64;
        self.file_offset(addr + skip)
    }

    /// The file offset of virtual address `addr` (in a loaded segment).
    fn file_offset(&self, addr: u64) -> Option<u64> {
        self.obj.segments().find_map(|seg| {
            let (off, size) = seg.file_range();
            let start = seg.address();
            (addr >= start && addr < start + size).then(|| addr - start + off)
        })
    }

    /// The runtime's names of its wait reasons, by number, from its symbol
    /// `runtime.waitReasonStrings`, else found by content with `count` entries (the
    /// number of this version's reasons, when known). Empty if the table is not found
    /// (callers then print the numbers).
    pub(crate) fn wait_reasons(&self, count: Option<usize>) -> Vec<String> {
        let (addr, n) = match self.syms.get("runtime.waitReasonStrings") {
            Some(&(addr, size)) => (addr, size / 16),
            None => match (self.wait_reasons_by_content(), count) {
                (Some(addr), Some(n)) => (addr, n as u64),
                _ => return Vec::new(),
            },
        };
        (0..n)
            .map(|i| self.go_string_at(addr + i * 16).unwrap_or_default())
            .collect()
    }

    /// The address of the runtime's array of wait reason names, found by its contents:
    /// a Go string header (address, length) of [`FIRST_WAIT_REASON`]'s text in a data
    /// section, preceded by the header of an empty string (reason 0). The text may be
    /// stored more than once; each copy is tried.
    fn wait_reasons_by_content(&self) -> Option<u64> {
        let texts: Vec<u64> = self
            .obj
            .sections()
            .filter(|s| s.name().is_ok_and(|n| n.contains("rodata")))
            .flat_map(|s| {
                let (base, d) = (s.address(), s.data().unwrap_or_default());
                d.windows(FIRST_WAIT_REASON.len())
                    .enumerate()
                    .filter(|(_, w)| *w == FIRST_WAIT_REASON)
                    .map(move |(i, _)| base + i as u64)
                    .collect::<Vec<_>>()
            })
            .collect();
        let len = (FIRST_WAIT_REASON.len() as u64).to_le_bytes();
        for sec in self.obj.sections() {
            if !sec.name().is_ok_and(|n| n.contains("data")) {
                continue;
            }
            let (base, d) = (sec.address(), sec.data().unwrap_or_default());
            for at in (16..d.len().saturating_sub(16)).step_by(8) {
                let ptr = u64::from_le_bytes(d[at..at + 8].try_into().ok()?);
                let zero_len = d[at - 8..at] == [0; 8];
                if zero_len && d[at + 8..at + 16] == len && texts.contains(&ptr) {
                    return Some(base + at as u64 - 16);
                }
            }
        }
        None
    }
}
