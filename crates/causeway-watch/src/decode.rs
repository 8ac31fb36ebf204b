//! Just enough x86-64 decoding to put uprobes on the instructions that access a
//! variable: the length of any instruction (so a linear sweep of the code lands on
//! instruction starts and a probe never goes inside an instruction, which would
//! corrupt the program), its RIP-relative displacement if it has one, and whether
//! that memory operand is loaded, stored or both.
//!
//! Not a disassembler: no mnemonics, no operands besides the one memory operand.
//! The classification covers what compilers emit for a flag (mov, movzx/movsx, cmp,
//! test, the ALU forms, inc/dec, xchg, cmpxchg, xadd, setcc, SSE/AVX moves);
//! everything else is [`Access::Unknown`] and is skipped and counted by the caller.

/// What an instruction does with its memory operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Reads it (mov r, m; cmp; test; movzx ...).
    Load,
    /// Writes it without reading (mov m, r/imm; setcc).
    Store,
    /// Reads and writes it (add m, r; inc; xchg; lock cmpxchg; xadd ...): a write as
    /// far as a data flag goes, as a watchpoint also sees it.
    Update,
    /// Takes its address (lea): the accesses go through a pointer, out of reach.
    AddressOnly,
    /// A form this module does not classify.
    Unknown,
}

impl Access {
    /// True if the access changes the variable.
    pub fn writes(self) -> bool {
        matches!(self, Access::Store | Access::Update)
    }
}

/// One decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    /// Bytes, prefixes to immediate.
    pub len: u8,
    /// The displacement of a RIP-relative memory operand (the target is the address
    /// of the next instruction plus this).
    pub rip_disp: Option<i32>,
    /// What it does to its memory operand (meaningful when there is one).
    pub access: Access,
}

/// Which opcode table an opcode is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Map {
    One,
    /// 0F xx
    Two,
    /// 0F 38 xx
    Three38,
    /// 0F 3A xx
    Three3A,
    /// VEX or EVEX encoded (the map is in the prefix); `rep` then means pp = F3.
    Vex(u8),
}

/// Prefix state that changes lengths or meanings.
#[derive(Clone, Copy, Default)]
struct Prefixes {
    opsize: bool,
    rep: bool,
    rex_w: bool,
}

/// Decode the instruction at the start of `code`; `None` if it is not a valid
/// 64-bit mode instruction this decoder knows (the sweep then resynchronises).
pub fn decode(code: &[u8]) -> Option<Insn> {
    let mut i = 0usize;
    let mut p = Prefixes::default();
    loop {
        match *code.get(i)? {
            0x66 => p.opsize = true,
            0xF3 => p.rep = true,
            0xF0 | 0xF2 | 0x2E | 0x36 | 0x3E | 0x26 | 0x64 | 0x65 | 0x67 => {}
            _ => break,
        }
        i += 1;
        if i > 14 {
            return None;
        }
    }
    let b = *code.get(i)?;
    if (0x40..=0x4F).contains(&b) {
        p.rex_w = b & 8 != 0;
        i += 1;
    }
    let (map, op) = opcode(code, &mut i, &mut p)?;
    let (has_modrm, imm) = operands(map, op, &p, code.get(i).copied())?;
    let mut rip_disp = None;
    let mut access = Access::Unknown;
    if has_modrm {
        let modrm = *code.get(i)?;
        i += 1;
        let (md, rm) = (modrm >> 6, modrm & 7);
        if md != 3 && rm == 4 {
            let sib = *code.get(i)?;
            i += 1;
            if md == 0 && sib & 7 == 5 {
                i += 4;
            }
        }
        match md {
            0 if rm == 5 => {
                let d = code.get(i..i + 4)?;
                rip_disp = Some(i32::from_le_bytes([d[0], d[1], d[2], d[3]]));
                i += 4;
            }
            1 => i += 1,
            2 => i += 4,
            _ => {}
        }
        if md != 3 {
            access = classify(map, op, (modrm >> 3) & 7, &p);
        }
    }
    i += imm;
    if i > code.len() || i > 15 {
        return None;
    }
    Some(Insn {
        len: i as u8,
        rip_disp,
        access,
    })
}

/// Read the opcode (and a VEX/EVEX prefix) at `*i`, leaving `*i` on the byte after it.
fn opcode(code: &[u8], i: &mut usize, p: &mut Prefixes) -> Option<(Map, u8)> {
    let b = *code.get(*i)?;
    *i += 1;
    match b {
        0x0F => {
            let b2 = *code.get(*i)?;
            *i += 1;
            match b2 {
                0x38 | 0x3A => {
                    let b3 = *code.get(*i)?;
                    *i += 1;
                    Some((
                        if b2 == 0x38 {
                            Map::Three38
                        } else {
                            Map::Three3A
                        },
                        b3,
                    ))
                }
                _ => Some((Map::Two, b2)),
            }
        }
        // Two-byte VEX: map 0F; pp in the low bits of its byte.
        0xC5 => {
            let v = *code.get(*i)?;
            p.rep = v & 3 == 2;
            p.opsize = v & 3 == 1;
            let op = *code.get(*i + 1)?;
            *i += 2;
            Some((Map::Vex(1), op))
        }
        // Three-byte VEX and four-byte EVEX: the map in the first payload byte.
        0xC4 | 0x62 => {
            let n = if b == 0xC4 { 2 } else { 3 };
            let m = *code.get(*i)? & if b == 0xC4 { 0x1F } else { 0x07 };
            let pp = *code.get(*i + 1)? & 3;
            p.rep = pp == 2;
            p.opsize = pp == 1;
            p.rex_w = *code.get(*i + 1)? & 0x80 != 0;
            let op = *code.get(*i + n)?;
            *i += n + 1;
            if !matches!(m, 1 | 2 | 3 | 5 | 6) {
                return None;
            }
            Some((Map::Vex(m), op))
        }
        // XOP (AMD only, never emitted for generic x86-64) or pop r/m.
        0x8F if code.get(*i).is_some_and(|n| n & 0x1F >= 8) => None,
        _ => Some((Map::One, b)),
    }
}

/// Does the opcode take a ModRM byte, and how many immediate bytes follow it?
fn operands(map: Map, op: u8, p: &Prefixes, modrm: Option<u8>) -> Option<(bool, usize)> {
    let z = if p.opsize { 2 } else { 4 };
    let reg = modrm.map_or(0, |m| (m >> 3) & 7);
    Some(match map {
        Map::One => match op {
            // The eight ALU rows: r/m forms, then AL/eAX, imm.
            0x00..=0x3F if op & 7 < 4 => (true, 0),
            0x00..=0x3F if op & 7 == 4 => (false, 1),
            0x00..=0x3F if op & 7 == 5 => (false, z),
            // Invalid in 64-bit mode.
            0x06 | 0x07 | 0x0E | 0x16 | 0x17 | 0x1E | 0x1F | 0x27 | 0x2F | 0x37 | 0x3F | 0x60
            | 0x61 | 0x82 | 0x9A | 0xD4 | 0xD5 | 0xD6 | 0xEA => return None,
            0x00..=0x3F => (false, 0),
            0x63 => (true, 0),
            0x68 => (false, z),
            0x69 => (true, z),
            0x6A => (false, 1),
            0x6B => (true, 1),
            0x70..=0x7F => (false, 1),
            0x80 | 0x83 => (true, 1),
            0x81 => (true, z),
            0x84..=0x8F => (true, 0),
            0xA0..=0xA3 => (false, 8),
            0xA8 => (false, 1),
            0xA9 => (false, z),
            0xB0..=0xB7 => (false, 1),
            0xB8..=0xBF => (false, if p.rex_w { 8 } else { z }),
            0xC0 | 0xC1 => (true, 1),
            0xC2 | 0xCA => (false, 2),
            0xC6 => (true, 1),
            0xC7 => (true, z),
            0xC8 => (false, 3),
            0xCD => (false, 1),
            0xD0..=0xD3 | 0xD8..=0xDF => (true, 0),
            0xE0..=0xE7 | 0xEB => (false, 1),
            0xE8 | 0xE9 => (false, 4),
            0xF6 => (true, if reg < 2 { 1 } else { 0 }),
            0xF7 => (true, if reg < 2 { z } else { 0 }),
            0xFE | 0xFF => (true, 0),
            _ => (false, 0),
        },
        Map::Two => match op {
            0x05..=0x09 | 0x0B | 0x0E | 0x30..=0x37 | 0x77 | 0xA0..=0xA2 | 0xA8..=0xAA => {
                (false, 0)
            }
            0xC8..=0xCF => (false, 0),
            0x80..=0x8F => (false, 4),
            0x0F | 0x70..=0x73 | 0xA4 | 0xAC | 0xBA | 0xC2 | 0xC4..=0xC6 => (true, 1),
            _ => (true, 0),
        },
        Map::Three38 => (true, 0),
        Map::Three3A => (true, 1),
        Map::Vex(3) => (true, 1),
        Map::Vex(1) if matches!(op, 0x70..=0x73 | 0xC2 | 0xC4..=0xC6) => (true, 1),
        // vzeroupper / vzeroall: the one VEX instruction without ModRM.
        Map::Vex(1) if op == 0x77 => (false, 0),
        Map::Vex(_) => (true, 0),
    })
}

/// Load, store or both, for an instruction with a memory operand (`reg`: the ModRM
/// reg field, which extends the opcode of the group instructions).
fn classify(map: Map, op: u8, reg: u8, p: &Prefixes) -> Access {
    use Access::{AddressOnly, Load, Store, Unknown, Update};
    match map {
        Map::One => match op {
            // cmp never writes; the other ALU ops write their r/m destination.
            0x38..=0x3B => Load,
            0x00..=0x3F if op & 7 < 2 => Update,
            0x00..=0x3F if op & 7 < 4 => Load,
            0x63 | 0x69 | 0x6B | 0x84 | 0x85 | 0x8A | 0x8B => Load,
            0x80 | 0x81 | 0x83 => {
                if reg == 7 {
                    Load
                } else {
                    Update
                }
            }
            0x86 | 0x87 | 0xC0 | 0xC1 | 0xD0..=0xD3 => Update,
            0x88 | 0x89 => Store,
            0x8D => AddressOnly,
            0x8F if reg == 0 => Store,
            0xC6 | 0xC7 if reg == 0 => Store,
            0xF6 | 0xF7 => match reg {
                0 | 1 | 4..=7 => Load,
                _ => Update,
            },
            0xFE if reg < 2 => Update,
            0xFF => match reg {
                0 | 1 => Update,
                2 | 4 | 6 => Load,
                _ => Unknown,
            },
            _ => Unknown,
        },
        Map::Two => match op {
            0x10 | 0x28 | 0x2E | 0x2F | 0x6E | 0x6F => Load,
            0x11 | 0x29 | 0x7F | 0xD6 => Store,
            0x7E if p.rep => Load,
            0x7E => Store,
            0x40..=0x4F | 0xA3 | 0xAF | 0xB6 | 0xB7 | 0xBE | 0xBF => Load,
            0x90..=0x9F => Store,
            0xAB | 0xB3 | 0xBB | 0xB0 | 0xB1 | 0xC0 | 0xC1 => Update,
            0xBA if reg == 4 => Load,
            0xBA if reg > 4 => Update,
            _ => Unknown,
        },
        Map::Vex(1) => match op {
            0x10 | 0x28 | 0x6E | 0x6F => Load,
            0x11 | 0x29 | 0x7F | 0xD6 => Store,
            0x7E if p.rep => Load,
            0x7E => Store,
            _ => Unknown,
        },
        _ => Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes with a RIP-relative displacement of 0x11223344 (in place of `D`).
    fn with_disp(before: &[u8], after: &[u8]) -> Vec<u8> {
        let mut v = before.to_vec();
        v.extend_from_slice(&0x1122_3344i32.to_le_bytes());
        v.extend_from_slice(after);
        v
    }

    #[test]
    fn flag_accesses_are_classified_from_known_bytes() {
        use Access::*;
        // (bytes before the displacement, bytes after it, access) as gcc and clang
        // emit them for a global `done`.
        let cases: &[(&[u8], &[u8], Access)] = &[
            (&[0x48, 0x8B, 0x05], &[], Load),               // mov rax, [rip+D]
            (&[0x8B, 0x15], &[], Load),                     // mov edx, [rip+D]
            (&[0x0F, 0xB6, 0x05], &[], Load),               // movzx eax, byte [rip+D]
            (&[0x48, 0x63, 0x05], &[], Load),               // movsxd rax, [rip+D]
            (&[0x48, 0x89, 0x05], &[], Store),              // mov [rip+D], rax
            (&[0x88, 0x05], &[], Store),                    // mov [rip+D], al
            (&[0xC7, 0x05], &[1, 0, 0, 0], Store),          // mov dword [rip+D], 1
            (&[0x48, 0xC7, 0x05], &[1, 0, 0, 0], Store),    // mov qword [rip+D], 1
            (&[0x66, 0xC7, 0x05], &[1, 0], Store),          // mov word [rip+D], 1
            (&[0xC6, 0x05], &[1], Store),                   // mov byte [rip+D], 1
            (&[0x83, 0x3D], &[0], Load),                    // cmp dword [rip+D], 0
            (&[0x48, 0x83, 0x3D], &[0], Load),              // cmp qword [rip+D], 0
            (&[0x80, 0x3D], &[0], Load),                    // cmp byte [rip+D], 0
            (&[0x48, 0x39, 0x05], &[], Load),               // cmp [rip+D], rax
            (&[0x3B, 0x05], &[], Load),                     // cmp eax, [rip+D]
            (&[0x85, 0x05], &[], Load),                     // test [rip+D], eax
            (&[0xF6, 0x05], &[1], Load),                    // test byte [rip+D], 1
            (&[0xF7, 0x05], &[1, 0, 0, 0], Load),           // test dword [rip+D], 1
            (&[0x48, 0x01, 0x05], &[], Update),             // add [rip+D], rax
            (&[0x03, 0x05], &[], Load),                     // add eax, [rip+D]
            (&[0x83, 0x05], &[1], Update),                  // add dword [rip+D], 1
            (&[0xF0, 0x48, 0x83, 0x05], &[1], Update),      // lock add qword [rip+D], 1
            (&[0xF0, 0x48, 0x0F, 0xB1, 0x15], &[], Update), // lock cmpxchg [rip+D], rdx
            (&[0xF0, 0x48, 0x0F, 0xC1, 0x05], &[], Update), // lock xadd [rip+D], rax
            (&[0x48, 0x87, 0x05], &[], Update),             // xchg [rip+D], rax
            (&[0xFF, 0x05], &[], Update),                   // inc dword [rip+D]
            (&[0x0F, 0x94, 0x05], &[], Store),              // sete byte [rip+D]
            (&[0xF3, 0x0F, 0x7E, 0x05], &[], Load),         // movq xmm0, [rip+D]
            (&[0x66, 0x0F, 0xD6, 0x05], &[], Store),        // movq [rip+D], xmm0
            (&[0xC5, 0xFA, 0x7E, 0x05], &[], Load),         // vmovq xmm0, [rip+D]
            (&[0x48, 0x8D, 0x05], &[], AddressOnly),        // lea rax, [rip+D]
            (&[0x0F, 0x18, 0x0D], &[], Unknown),            // prefetcht0 [rip+D]
        ];
        for (before, after, want) in cases {
            let code = with_disp(before, after);
            let mut padded = code.clone();
            padded.extend_from_slice(&[0xC3; 8]); // what follows does not count
            let insn = decode(&padded).unwrap_or_else(|| panic!("{code:02x?} undecoded"));
            assert_eq!(insn.len as usize, code.len(), "{code:02x?}");
            assert_eq!(insn.rip_disp, Some(0x1122_3344), "{code:02x?}");
            assert_eq!(insn.access, *want, "{code:02x?}");
        }
    }

    #[test]
    fn lengths_of_common_instructions() {
        let cases: &[&[u8]] = &[
            &[0xC3],                                           // ret
            &[0x55],                                           // push rbp
            &[0x48, 0x89, 0xE5],                               // mov rbp, rsp
            &[0x48, 0x8B, 0x44, 0x24, 0x08],                   // mov rax, [rsp+8]
            &[0x48, 0x83, 0xC4, 0x48],                         // add rsp, 0x48
            &[0xE8, 1, 2, 3, 4],                               // call rel32
            &[0x48, 0xB8, 1, 2, 3, 4, 5, 6, 7, 8],             // movabs rax, imm64
            &[0xB8, 1, 2, 3, 4],                               // mov eax, imm32
            &[0x0F, 0x1F, 0x44, 0x00, 0x00],                   // nop dword [rax+rax]
            &[0x66, 0x0F, 0x1F, 0x84, 0x00, 0, 0, 0, 0],       // nop word [rax+rax+0]
            &[0x0F, 0x84, 1, 2, 3, 4],                         // je rel32
            &[0x74, 0x05],                                     // je rel8
            &[0x0F, 0x05],                                     // syscall
            &[0xF3, 0x0F, 0x1E, 0xFA],                         // endbr64
            &[0x8B, 0x04, 0x25, 1, 2, 3, 4],                   // mov eax, [abs32]
            &[0xC4, 0xE2, 0x79, 0x18, 0x05, 1, 2, 3, 4],       // vbroadcastss xmm0, [rip+D]
            &[0x66, 0x0F, 0x3A, 0x0F, 0xC1, 0x08],             // palignr xmm0, xmm1, 8
            &[0x62, 0xF1, 0x7C, 0x48, 0x10, 0x44, 0x24, 0x01], // vmovups zmm0, [rsp+64]
        ];
        for code in cases {
            let mut padded = code.to_vec();
            padded.extend_from_slice(&[0x90; 8]);
            let insn = decode(&padded).unwrap_or_else(|| panic!("{code:02x?} undecoded"));
            assert_eq!(insn.len as usize, code.len(), "{code:02x?}");
        }
        // Invalid in 64-bit mode, and cut short.
        assert_eq!(decode(&[0x06]), None);
        assert_eq!(decode(&[0x48, 0x8B, 0x05, 1]), None);
    }
}
