//! The ELF side of a Go binary: symbols, and data read at virtual addresses.

use crate::error::Error;
use object::{Architecture, Object, ObjectSection, ObjectSegment, ObjectSymbol, ReadRef};
use std::collections::HashMap;

/// `push rbp; mov rbp, rsp`: where a Go function sets up its frame, after its stack
/// check.
const FRAME_SETUP: [u8; 4] = [0x55, 0x48, 0x89, 0xe5];

/// How far into a function its frame setup is looked for (the stack check is 10 to 17
/// bytes: `cmp` with `jbe rel8` or `rel32`, or a `lea` before them for a large frame).
const PROLOGUE_WINDOW: u64 = 32;

/// The symbols this crate looks up (a Go binary has tens of thousands).
const WANTED: &[&str] = &[
    "runtime.buildVersion",
    "runtime.waitReasonStrings",
    "runtime.execute",
    "runtime.gopark",
    "runtime.ready",
    "runtime.injectglist",
    "runtime.main",
];

/// An ELF file opened for the Go runtime's facts.
pub(crate) struct GoElf<'d, R: ReadRef<'d>> {
    pub(crate) obj: object::File<'d, R>,
    /// Address and size of each [`WANTED`] symbol found.
    syms: HashMap<&'static str, (u64, u64)>,
}

impl<'d, R: ReadRef<'d>> GoElf<'d, R> {
    pub(crate) fn parse(data: R) -> Result<GoElf<'d, R>, Error> {
        let obj = object::File::parse(data)?;
        let mut syms = HashMap::new();
        for s in obj.symbols() {
            if let Ok(name) = s.name()
                && let Some(&w) = WANTED.iter().find(|&&w| w == name)
            {
                syms.insert(w, (s.address(), s.size()));
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

    /// `runtime.buildVersion` ("go1.26.8"); `None` without a symbol table.
    pub(crate) fn build_version(&self) -> Option<String> {
        let &(addr, _) = self.syms.get("runtime.buildVersion")?;
        self.go_string_at(addr)
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

    /// The runtime's names of its wait reasons, by number (empty if the table is not
    /// found; callers then print the numbers).
    pub(crate) fn wait_reasons(&self) -> Vec<String> {
        let Some(&(addr, size)) = self.syms.get("runtime.waitReasonStrings") else {
            return Vec::new();
        };
        (0..size / 16)
            .map(|i| self.go_string_at(addr + i * 16).unwrap_or_default())
            .collect()
    }
}
