//! Indirect call sites (`call *%rax`, `call *0x8(%rbx)`, `call *0x2fe2(%rip)`): where
//! the target of each one is, so that a uprobe on the call instruction can read it
//! when the call is about to be made (DARC §3 resolves indirect calls at run time).
//!
//! The operand is taken from objdump's AT&T text. A register operand is read from the
//! probed thread's registers; a memory operand is an address computed from them, and
//! the target is the 8 bytes there. `%rip`-relative addresses are relative to the
//! probed instruction's own address (the uprobe's), so the displacement stored already
//! includes the instruction's length.

/// How the BPF program finds a site's target (`ROOTPATH_SITE_*` in `rootpath.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// The target is the register's value.
    Reg(Reg),
    /// The target is the 8 bytes at `base + index * scale + disp` (a missing base or
    /// index counts 0).
    Mem {
        /// Base register.
        base: Option<Reg>,
        /// Index register and its scale (1, 2, 4 or 8).
        index: Option<(Reg, u8)>,
        /// Displacement.
        disp: i64,
    },
    /// The target is the 8 bytes at the probed instruction's address plus `rel`
    /// (a `%rip`-relative operand: displacement plus instruction length).
    IpRel {
        /// Offset from the call instruction's first byte.
        rel: i64,
    },
}

/// A general-purpose x86-64 register, numbered as the instruction encoding numbers
/// them (`rax` 0 .. `r15` 15); the BPF side reads the matching `pt_regs` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg(pub u8);

const REGS: [&str; 16] = [
    "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15",
];

impl Reg {
    /// The register named `name` (`%` already removed); only 64-bit names.
    pub fn named(name: &str) -> Option<Reg> {
        REGS.iter().position(|&r| r == name).map(|i| Reg(i as u8))
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        REGS.get(self.0 as usize).copied().unwrap_or("?")
    }
}

/// One indirect call instruction of a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IndirectSite {
    /// Its offset from the function's first byte (where the uprobe goes).
    pub offset: u64,
    /// Where its target is.
    pub operand: Operand,
}

/// A number as objdump prints it: `0x1f`, `-0x8` or decimal.
fn number(s: &str) -> Option<i64> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok()? as i64,
        None => s.parse::<i64>().ok()?,
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

fn reg(s: &str) -> Option<Reg> {
    Reg::named(s.trim().strip_prefix('%')?)
}

/// Parse the operand of an indirect call as objdump prints it, after the `*` and
/// without the trailing `# comment`. `next_rel` is the length of the instruction (the
/// next instruction's offset from this one), needed for `%rip`-relative operands.
/// Segment-prefixed operands (`%fs:...`, thread-local) and anything else unusual give
/// `None`: the site is counted, not probed.
pub fn parse_operand(text: &str, insn_len: Option<u64>) -> Option<Operand> {
    let t = text.trim();
    if t.contains(':') {
        return None;
    }
    if t.starts_with('%') {
        return reg(t).map(Operand::Reg);
    }
    let (disp, inside) = match t.split_once('(') {
        Some((d, rest)) => (d, Some(rest.strip_suffix(')')?)),
        None => (t, None),
    };
    let disp = if disp.is_empty() { 0 } else { number(disp)? };
    let Some(inside) = inside else {
        // An absolute address (a non-PIE table).
        return Some(Operand::Mem {
            base: None,
            index: None,
            disp,
        });
    };
    let parts: Vec<&str> = inside.split(',').map(str::trim).collect();
    if parts.first() == Some(&"%rip") {
        if parts.len() != 1 {
            return None;
        }
        let len = insn_len? as i64;
        return Some(Operand::IpRel { rel: disp + len });
    }
    let base = match parts.first() {
        Some(&"") | None => None,
        Some(b) => Some(reg(b)?),
    };
    let index = match parts.get(1) {
        None => None,
        Some(i) => {
            let scale = match parts.get(2) {
                Some(s) => number(s)?,
                None => 1,
            };
            if ![1, 2, 4, 8].contains(&scale) || parts.len() > 3 {
                return None;
            }
            Some((reg(i)?, scale as u8))
        }
    };
    Some(Operand::Mem { base, index, disp })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_and_memory_operands() {
        assert_eq!(parse_operand("%rax", None), Some(Operand::Reg(Reg(0))));
        assert_eq!(parse_operand("%r11", None), Some(Operand::Reg(Reg(11))));
        assert_eq!(
            parse_operand("0x8(%rbx)", None),
            Some(Operand::Mem {
                base: Some(Reg(3)),
                index: None,
                disp: 8
            })
        );
        assert_eq!(
            parse_operand("(%rdx,%rax,8)", None),
            Some(Operand::Mem {
                base: Some(Reg(2)),
                index: Some((Reg(0), 8)),
                disp: 0
            })
        );
        assert_eq!(
            parse_operand("0x404040(,%rdi,8)", None),
            Some(Operand::Mem {
                base: None,
                index: Some((Reg(7), 8)),
                disp: 0x404040
            })
        );
        assert_eq!(
            parse_operand("-0x18(%rbp)", None),
            Some(Operand::Mem {
                base: Some(Reg(5)),
                index: None,
                disp: -0x18
            })
        );
        assert_eq!(
            parse_operand("0x404020", None),
            Some(Operand::Mem {
                base: None,
                index: None,
                disp: 0x404020
            })
        );
    }

    #[test]
    fn rip_relative_needs_the_instruction_length() {
        assert_eq!(
            parse_operand("0x2fe2(%rip)", Some(6)),
            Some(Operand::IpRel { rel: 0x2fe8 })
        );
        assert_eq!(parse_operand("0x2fe2(%rip)", None), None);
    }

    #[test]
    fn what_is_not_probed() {
        // Thread-local (segment) operands, 32-bit registers, bad scales, garbage.
        assert_eq!(parse_operand("%fs:0x10", None), None);
        assert_eq!(parse_operand("%eax", None), None);
        assert_eq!(parse_operand("(%rax,%rbx,3)", None), None);
        assert_eq!(parse_operand("zz(%rax)", None), None);
        assert_eq!(Reg(15).name(), "r15");
    }
}
