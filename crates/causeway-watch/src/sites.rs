//! Which instructions of a file's code access a variable: where the uprobes of the
//! uprobe way go (see [`super::decode`] for the decoding).

use super::decode::{Access, Insn, decode};
use causeway_procfs::elf::Elf;

/// An instruction that accesses the variable, where a uprobe can go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    /// Its address in the file (ELF virtual address).
    pub vaddr: u64,
    /// Its offset in the file (what a uprobe is attached at).
    pub file_offset: u64,
    /// Its length in bytes.
    pub len: u8,
    /// Load, store or both.
    pub access: Access,
}

/// The instructions of a file's code that access a variable, and what was skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiteScan {
    /// Loads, stores and updates of the variable.
    pub sites: Vec<Site>,
    /// Instructions that refer to it in a form this decoder does not classify.
    pub unclassified: u64,
    /// Instructions that take its address (lea): accesses through the pointer are
    /// not seen.
    pub address_taken: u64,
    /// Stretches of code the decoder could not follow (skipped to the next function).
    pub undecoded: u64,
}

/// Every instruction of `data`'s code whose RIP-relative operand falls in
/// `[vaddr, vaddr + len)`. An instruction is only taken where the sweep
/// ([`instructions`]) lands, so a probe is never put inside an instruction (which
/// would corrupt the program).
pub fn accessing_instructions(data: &[u8], vaddr: u64, len: u8) -> SiteScan {
    let mut scan = SiteScan::default();
    let end = vaddr + u64::from(len.max(1));
    scan.undecoded = instructions(data, |here, file_offset, insn| {
        let Some(d) = insn.rip_disp else {
            return;
        };
        let target = (here + u64::from(insn.len)).wrapping_add_signed(i64::from(d));
        if !(vaddr..end).contains(&target) {
            return;
        }
        match insn.access {
            Access::Unknown => scan.unclassified += 1,
            Access::AddressOnly => scan.address_taken += 1,
            access => scan.sites.push(Site {
                vaddr: here,
                file_offset,
                len: insn.len,
                access,
            }),
        }
    });
    scan
}

/// The addresses of the instructions the sweep finds in `data`'s code (to check
/// the decoder against a disassembler).
pub fn instruction_starts(data: &[u8]) -> Vec<u64> {
    let mut v = Vec::new();
    instructions(data, |here, _, _| v.push(here));
    v
}

/// A linear sweep of each executable section of the ELF file `data`, restarted at
/// each function symbol: `f(address, file offset, instruction)` for every
/// instruction decoded. Returns the stretches skipped (not decodable, or out of step
/// with the next function's start) to the next function.
fn instructions(data: &[u8], mut f: impl FnMut(u64, u64, Insn)) -> u64 {
    let Ok(elf) = Elf::parse(data.to_vec()) else {
        return 0;
    };
    let starts = elf.symbols().function_starts();
    let mut skipped = 0;
    for (sec, bytes) in elf.code_sections() {
        let Some((file_off, _)) = sec.file_range else {
            continue;
        };
        let base = sec.address;
        let mut at = 0usize;
        while at < bytes.len() {
            let here = base + at as u64;
            let next_start = starts[starts.partition_point(|&s| s <= here)..]
                .first()
                .copied()
                .unwrap_or(u64::MAX);
            match bytes.get(at..).and_then(decode) {
                // An instruction running into the next function: out of step.
                Some(insn) if here + u64::from(insn.len) <= next_start => {
                    f(here, file_off + at as u64, insn);
                    at += insn.len as usize;
                }
                _ => {
                    skipped += 1;
                    at = next_start
                        .saturating_sub(base)
                        .try_into()
                        .unwrap_or(usize::MAX);
                }
            }
        }
    }
    skipped
}
