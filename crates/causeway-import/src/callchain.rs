//! Callchain lines of `perf script` to interned frames and stacks.
//!
//! A callchain line is `\t<hex addr> <symbol>[+0x<off>] (<dso>)`, innermost frame first.
//! Kernel frames (dso `[kernel.kallsyms]`, a module, or an address in the kernel half
//! `>= 0xffff800000000000` other than `[vsyscall]`) form the kernel stack; the rest
//! form the user stack of the sample's process. User addresses are what perf prints:
//! for callchains that is the address relative to the DSO's load base.
//!
//! Frames and stacks are cached here so a frame seen before costs one hash lookup
//! and no allocation. Each new kernel frame is also classified for waker inference
//! ([`crate::context::FrameMark`]).

use crate::context::{FrameMark, classify_symbol};
use causeway_format::{Frame, FrameId, FrameSpace, Stack, StackId, StringId, TraceWriter};
// Fx rather than SipHash: hashed for every frame of every sample (addresses and ids).
use rustc_hash::FxHashMap as HashMap;
use std::io::Write;

/// Start of the kernel half of the x86-64 (and arm64) address space.
const KERNEL_SPACE_START: u64 = 0xffff_8000_0000_0000;

/// perf's default callchain depth limit (`kernel.perf_event_max_stack`): a chain this
/// long was probably cut.
const PERF_MAX_STACK: usize = 127;

/// One parsed callchain line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameLine<'a> {
    pub addr: u64,
    /// Symbol without the offset; `[unknown]` if perf could not resolve it.
    pub symbol: &'a str,
    pub offset: u64,
    /// DSO path or `[kernel.kallsyms]`; empty if not printed.
    pub dso: &'a str,
}

/// Parse a callchain line (leading white space allowed).
pub(crate) fn parse_frame_line(line: &str) -> Option<FrameLine<'_>> {
    let t = line.trim();
    let (addr, rest) = t.split_once(' ').unwrap_or((t, ""));
    let addr = u64::from_str_radix(addr, 16).ok()?;
    let rest = rest.trim_start();
    let (sym_off, dso) = match rest.ends_with(')') {
        true => match crate::script_parse::matching_open_paren(rest) {
            Some(open) => (
                rest.get(..open).unwrap_or("").trim_end(),
                rest.get(open + 1..rest.len() - 1).unwrap_or(""),
            ),
            None => (rest, ""),
        },
        false => (rest, ""),
    };
    let (symbol, offset) = match sym_off.rfind("+0x") {
        Some(i) => match u64::from_str_radix(sym_off.get(i + 3..).unwrap_or(""), 16) {
            Ok(off) => (sym_off.get(..i).unwrap_or(""), off),
            Err(_) => (sym_off, 0),
        },
        None => (sym_off, 0),
    };
    Some(FrameLine {
        addr,
        symbol,
        offset,
        dso,
    })
}

/// True if the frame is kernel code.
pub(crate) fn is_kernel(f: &FrameLine<'_>) -> bool {
    if f.dso.starts_with("[kernel") {
        return true;
    }
    f.addr >= KERNEL_SPACE_START && f.dso != "[vsyscall]"
}

/// Per-frame facts kept for waker inference, indexed by [`FrameId`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FrameFacts {
    pub mark: FrameMark,
    /// The frame's symbol.
    pub symbol: StringId,
    /// For IRQ entry marks: the name to report for the interrupt.
    pub irq_name: StringId,
}

/// Frame and stack interning with caches, plus the frames of the sample being read.
#[derive(Default)]
pub(crate) struct Callchains {
    dsos: HashMap<Box<str>, StringId>,
    kernel: HashMap<u64, FrameId>,
    user: HashMap<(u32, u64, StringId), FrameId>,
    facts: Vec<FrameFacts>,
    stacks: HashMap<Vec<FrameId>, StackId>,
    kernel_frames: Vec<FrameId>,
    user_frames: Vec<FrameId>,
}

impl Callchains {
    /// Forget the current sample's frames.
    pub fn clear(&mut self) {
        self.kernel_frames.clear();
        self.user_frames.clear();
    }

    /// Add one frame of the current sample (of process `tgid`).
    pub fn push<W: Write>(&mut self, w: &mut TraceWriter<W>, tgid: u32, f: &FrameLine<'_>) {
        let kernel = is_kernel(f);
        let id = if kernel {
            match self.kernel.get(&f.addr) {
                Some(&id) => id,
                None => {
                    let id = self.new_frame(w, FrameSpace::Kernel, f);
                    self.kernel.insert(f.addr, id);
                    id
                }
            }
        } else {
            let dso = self.dso(w, f.dso);
            match self.user.get(&(tgid, f.addr, dso)) {
                Some(&id) => id,
                None => {
                    let id = self.new_frame(
                        w,
                        FrameSpace::User {
                            tgid: causeway_format::Tgid(tgid),
                        },
                        f,
                    );
                    self.user.insert((tgid, f.addr, dso), id);
                    id
                }
            }
        };
        if kernel {
            self.kernel_frames.push(id);
        } else {
            self.user_frames.push(id);
        }
    }

    fn dso<W: Write>(&mut self, w: &mut TraceWriter<W>, dso: &str) -> StringId {
        if let Some(&id) = self.dsos.get(dso) {
            return id;
        }
        let id = w.intern(dso);
        self.dsos.insert(dso.into(), id);
        id
    }

    fn new_frame<W: Write>(
        &mut self,
        w: &mut TraceWriter<W>,
        space: FrameSpace,
        f: &FrameLine<'_>,
    ) -> FrameId {
        let module = self.dso(w, f.dso);
        let unknown = f.symbol.is_empty() || f.symbol == "[unknown]";
        let symbol = if unknown {
            StringId(0)
        } else {
            w.intern(f.symbol)
        };
        let id = w.intern_frame(Frame::new(space, f.addr, module, symbol, f.offset));
        let mut facts = FrameFacts {
            symbol,
            ..FrameFacts::default()
        };
        if space == FrameSpace::Kernel && !unknown {
            let (mark, name) = classify_symbol(f.symbol);
            facts.mark = mark;
            if let Some(name) = name {
                facts.irq_name = w.intern(&name);
            }
        }
        let i = id.0 as usize;
        if self.facts.len() <= i {
            self.facts.resize(i + 1, FrameFacts::default());
        }
        if let Some(slot) = self.facts.get_mut(i) {
            *slot = facts;
        }
        id
    }

    /// Facts about a frame created by [`Callchains::push`].
    pub fn facts(&self, id: FrameId) -> FrameFacts {
        self.facts.get(id.0 as usize).copied().unwrap_or_default()
    }

    /// The current sample's kernel frames, innermost first.
    pub fn kernel_frames(&self) -> &[FrameId] {
        &self.kernel_frames
    }

    /// True if the current sample has any frames.
    pub fn is_empty(&self) -> bool {
        self.kernel_frames.is_empty() && self.user_frames.is_empty()
    }

    /// Intern the current sample's stacks: `(user, kernel)`.
    pub fn intern_stacks<W: Write>(
        &mut self,
        w: &mut TraceWriter<W>,
    ) -> (Option<StackId>, Option<StackId>) {
        let truncated = self.kernel_frames.len() + self.user_frames.len() >= PERF_MAX_STACK;
        let user = Self::intern_one(&mut self.stacks, w, &self.user_frames, truncated);
        let kernel = Self::intern_one(
            &mut self.stacks,
            w,
            &self.kernel_frames,
            truncated && self.user_frames.is_empty(),
        );
        (user, kernel)
    }

    fn intern_one<W: Write>(
        cache: &mut HashMap<Vec<FrameId>, StackId>,
        w: &mut TraceWriter<W>,
        frames: &[FrameId],
        truncated: bool,
    ) -> Option<StackId> {
        if frames.is_empty() {
            return None;
        }
        // Truncated stacks are rare; do not cache them under the same key.
        if !truncated && let Some(&id) = cache.get(frames) {
            return Some(id);
        }
        let id = w.intern_stack(Stack {
            frames: frames.to_vec(),
            truncated,
        });
        if !truncated {
            cache.insert(frames.to_vec(), id);
        }
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_lines() {
        let f =
            parse_frame_line("\tffffffff821f5618 __schedule+0x618 ([kernel.kallsyms])").unwrap();
        assert_eq!(
            f,
            FrameLine {
                addr: 0xffffffff821f5618,
                symbol: "__schedule",
                offset: 0x618,
                dso: "[kernel.kallsyms]"
            }
        );
        assert!(is_kernel(&f));
        let f = parse_frame_line("\t          147bc2 [unknown] (/usr/bin/perf)").unwrap();
        assert_eq!(
            (f.addr, f.symbol, f.offset, f.dso),
            (0x147bc2, "[unknown]", 0, "/usr/bin/perf")
        );
        assert!(!is_kernel(&f));
        let f = parse_frame_line(
            "\t 1a std::vector<int>::push(int const&) (x)+0x1f (/memfd:a (deleted))",
        )
        .unwrap();
        assert_eq!(f.symbol, "std::vector<int>::push(int const&) (x)");
        assert_eq!(f.offset, 0x1f);
        assert_eq!(f.dso, "/memfd:a (deleted)");
        let f = parse_frame_line("\tffffffffff600000 [unknown] ([vsyscall])").unwrap();
        assert!(!is_kernel(&f));
        let f = parse_frame_line("\tffffffffc0a01234 virtblk_done+0x4 ([virtio_blk])").unwrap();
        assert!(is_kernel(&f));
        assert!(parse_frame_line("\tnothex foo").is_none());
        assert!(parse_frame_line("").is_none());
        assert_eq!(parse_frame_line("\t1234").map(|f| f.addr), Some(0x1234));
    }
}
