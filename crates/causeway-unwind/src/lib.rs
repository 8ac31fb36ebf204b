//! DWARF unwinding of copied user stacks: complete stacks for binaries built without
//! frame pointers (the recorder's user-space half of its stack walk).
//!
//! BPF copies the user registers and a window of the stack; here each window is unwound
//! with framehop against the unwind tables (`.eh_frame` + `.eh_frame_hdr`, else
//! `.debug_frame`) of the files the process had mapped. framehop uses a file's CFI where
//! it has an entry for the address and frame pointers where it has none, so mixed
//! stacks (a program with frame pointers over a C library without) come out whole.
//!
//! Why user space and not unwind tables in BPF maps (as the OpenTelemetry profiler
//! does): the tables must be compiled per binary into map entries and kept in sync with
//! every process's mappings, which is a large body of code and kernel memory. Instead
//! each unwind reports what it depended on ([`Basis`]: the words it read, rbp if it
//! read through it, whether the copy's end mattered), and the recorder lets the kernel
//! recognize the same stack from that alone, so a stack is copied and unwound here only
//! the first time a thread stops at a place.

mod runtime;

pub use runtime::{FrameNames, FrameRegs, NoFrameNames, RuntimeFrames, RuntimeStep, StackWords};

use causeway_procfs::elf::{Elf, Segment, segments};
use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{Error as HopError, ExplicitModuleSectionInfo, FrameAddress, Module, Unwinder};
use std::collections::HashMap;
use std::ops::{Deref, Range};
use std::sync::Arc;

/// Uscope's tracing modes: which user frames a stack walk keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum StackMode {
    /// No user stacks.
    None,
    /// The program's last call site only (Mode 1).
    App,
    /// Every call site in the program, up to the depth budget (Mode 2).
    #[default]
    AppAll,
    /// The last call site of each code range (program and each library) (Mode 3).
    Libs,
    /// Every frame, up to the depth budget (Mode 4).
    All,
}

/// Bits of [`StackCopy::flags`], as the recorder's BPF side sets them (`USTK_F_*` of
/// its `abi.h`; the recorder's tests check the two agree).
pub mod copy_flags {
    /// The window ended before the stack's mapping did.
    pub const CUT: u32 = 1;
    /// The stack's mapping was not found; the window was shrunk until it could be read.
    pub const NO_VMA: u32 = 2;
    /// The stack's mapping was looked up for this copy (`bpf_find_vma`, the costly
    /// path: a thread's first copy on a stack), not taken from the thread's kept ranges.
    pub const RANGE_LOOKUP: u32 = 4;
    /// The thread's range did not hold the window (its memory went away): it was
    /// dropped and the window shrunk until it could be read.
    pub const RANGE_STALE: u32 = 8;
    /// The window ends at the thread's starting stack pointer (the main thread's
    /// `argc`, a thread's clone stack top): no frame of the thread lies above it.
    pub const TOP: u32 = 16;
}

/// User registers and a window of the user stack, copied for DWARF unwinding.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StackCopy {
    /// Instruction pointer (the leaf frame's address, not a return address).
    pub ip: u64,
    /// Stack pointer: the address of `data[0]`.
    pub sp: u64,
    /// Frame pointer register.
    pub bp: u64,
    /// `copy_flags` bits.
    pub flags: u32,
    /// Stack bytes from `sp` up.
    pub data: Vec<u8>,
}

/// Part of a file's bytes, shared between every process that maps the file.
#[derive(Clone, Default)]
pub struct Bytes {
    file: Arc<Vec<u8>>,
    range: Range<usize>,
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.file[self.range.clone()]
    }
}

/// What a file contributes to unwinding, read once per file.
struct FileInfo {
    file: Arc<Vec<u8>>,
    /// (section name, address range as stated in the file, byte range in the file).
    sections: Vec<(&'static str, Range<u64>, Range<usize>)>,
    /// Loadable segments.
    segments: Vec<Segment>,
}

const SECTIONS: [&str; 5] = [
    ".text",
    ".eh_frame",
    ".eh_frame_hdr",
    ".debug_frame",
    ".got",
];

impl FileInfo {
    fn read(path: &str) -> Option<FileInfo> {
        let elf = Elf::read(std::path::Path::new(path)).ok()?;
        let mut sections = Vec::new();
        for name in SECTIONS {
            let Some(s) = elf.section(name) else {
                continue;
            };
            let Some(range) = elf.section_range(s) else {
                continue;
            };
            sections.push((name, s.address..s.address + s.size, range));
        }
        Some(FileInfo {
            file: elf.data().clone(),
            sections,
            segments: elf.segments().to_vec(),
        })
    }

    fn bytes(&self, name: &str) -> Option<Bytes> {
        self.sections.iter().find(|s| s.0 == name).map(|s| Bytes {
            file: self.file.clone(),
            range: s.2.clone(),
        })
    }

    fn svma(&self, name: &str) -> Option<Range<u64>> {
        self.sections
            .iter()
            .find(|s| s.0 == name)
            .map(|s| s.1.clone())
    }

    /// Where the file's address 0 lands for a mapping of `offset` at `start` (see
    /// [`segments::mapping_bias`] for LLD's layouts).
    fn base_avma(&self, start: u64, offset: u64) -> Option<u64> {
        segments::mapping_bias(&self.segments, start, offset)
    }

    fn module(&self, name: &str, avma: Range<u64>, base_avma: u64) -> Module<Bytes> {
        let info = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: self.svma(".text"),
            text: self.bytes(".text"),
            eh_frame_svma: self.svma(".eh_frame"),
            eh_frame: self.bytes(".eh_frame"),
            eh_frame_hdr_svma: self.svma(".eh_frame_hdr"),
            eh_frame_hdr: self.bytes(".eh_frame_hdr"),
            debug_frame: self.bytes(".debug_frame"),
            got_svma: self.svma(".got"),
            ..Default::default()
        };
        Module::new(name.to_string(), avma, base_avma, info)
    }
}

/// An executable mapping as the unwinder needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeMapping {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// File offset of `start`.
    pub offset: u64,
    /// File path (pseudo names such as `[vdso]` get no unwind tables).
    pub path: String,
    /// True for the program's own binary (for the scoped modes).
    pub program: bool,
}

/// Why an unwind stopped. Everything but [`UnwindEnd::Complete`] leaves the stack
/// marked truncated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnwindEnd {
    /// Reached the outermost frame (the CFI says there is no caller: `_start`,
    /// `clone3`, or a zero frame pointer).
    Complete,
    /// Stopped on the frame budget.
    Depth,
    /// Stopped because the scoped mode had its frames.
    Scope,
    /// Needed stack beyond the copied window.
    Window,
    /// Needed memory outside the stack (bad unwind data or a corrupted stack).
    Unreadable,
    /// A step did not move up the stack.
    NoProgress,
    /// No copied stack came with the record (lost, or the copy failed).
    NoCopy,
}

impl UnwindEnd {
    /// Counter name, as shown in the recording summary and trace statistics.
    pub fn counter(self) -> &'static str {
        match self {
            UnwindEnd::Complete => "unwind_complete",
            UnwindEnd::Depth => "unwind_cut_depth_budget",
            UnwindEnd::Scope => "unwind_cut_scope",
            UnwindEnd::Window => "unwind_cut_window_end",
            UnwindEnd::Unreadable => "unwind_failed_unreadable",
            UnwindEnd::NoProgress => "unwind_failed_no_progress",
            UnwindEnd::NoCopy => "unwind_failed_no_copy",
        }
    }
}

/// Result of unwinding one copied stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unwound {
    /// Kept frames, innermost first: the leaf's instruction pointer, then return
    /// addresses.
    pub frames: Vec<u64>,
    /// Why the walk ended.
    pub end: UnwindEnd,
    /// Some address met on the way lies in no known mapping of the process: its
    /// mappings changed since they were read (a library loaded after exec, dlopen).
    pub unmapped: bool,
    /// The walk ended without looking at where the copy ends: it stopped on its budget
    /// or scope, or the unwind data said there is no caller. Any copy from the same
    /// start holding the same words then unwinds the same, however long it is.
    pub extent_free: bool,
    /// The walk met a runtime's code that could not be read yet (a JVM still
    /// starting): another copy of the same stack may unwind further later, so this
    /// unwind is not remembered, here or by the kernel's memo.
    pub provisional: bool,
}

/// Which unwound frames a scoped mode keeps (Uscope's modes, as the BPF walk applies
/// them), and when the walk can stop.
struct Scope<'a> {
    mode: StackMode,
    depth: usize,
    maps: &'a [CodeMapping],
    /// Mappings (index into `maps`) whose frame `Libs` already kept.
    used: Vec<usize>,
    app_seen: bool,
    unmapped: bool,
    /// The end of the walk depended on the copy's extent or flags.
    extent_used: bool,
    /// A runtime's code could not be read yet.
    provisional: bool,
}

impl Scope<'_> {
    fn mapping(&self, addr: u64) -> Option<usize> {
        self.maps
            .iter()
            .position(|m| m.start <= addr && addr < m.end)
    }

    /// Keep this frame?
    fn keep(&mut self, addr: u64) -> bool {
        if self.mapping(addr).is_none() {
            self.unmapped = true;
        }
        match self.mode {
            StackMode::None => false,
            StackMode::All => true,
            StackMode::Libs => {
                let Some(i) = self.mapping(addr) else {
                    return false;
                };
                // One frame per file: the last call site in each code range.
                let path = &self.maps[i].path;
                if self.used.iter().any(|&u| &self.maps[u].path == path) {
                    return false;
                }
                self.used.push(i);
                true
            }
            StackMode::App | StackMode::AppAll => {
                let app = self.mapping(addr).is_some_and(|i| self.maps[i].program);
                if !app || (self.mode == StackMode::App && self.app_seen) {
                    return false;
                }
                self.app_seen = true;
                true
            }
        }
    }

    /// Does `addr` lie in a named mapping: a file (code with unwind tables or
    /// symbols) or the kernel's (`[vdso]`)? Anonymous memory is a runtime's JIT code.
    fn in_file(&self, addr: u64) -> bool {
        self.mapping(addr)
            .is_some_and(|i| !self.maps[i].path.is_empty())
    }

    fn done(&self, kept: usize) -> bool {
        kept >= self.depth || (self.mode == StackMode::App && self.app_seen)
    }
}

/// One process's unwinder: its modules, kept in step with its mappings.
struct Process {
    unwinder: UnwinderX86_64<Bytes>,
    maps: Vec<CodeMapping>,
    memo: Memo,
}

/// What an unwind depends on besides the stack's contents: where it starts, how much
/// of the stack was copied, how the copy ended, and the scope.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct MemoKey {
    ip: u64,
    sp: u64,
    len: u32,
    flags: u32,
    mode: u32,
    depth: u32,
}

impl MemoKey {
    fn of(copy: &StackCopy, mode: StackMode, depth: usize) -> MemoKey {
        MemoKey {
            ip: copy.ip,
            sp: copy.sp,
            len: copy.data.len() as u32,
            // Whether the range was looked up for this copy does not change the unwind.
            flags: copy.flags & !copy_flags::RANGE_LOOKUP,
            mode: mode as u32,
            depth: depth as u32,
        }
    }
}

/// What an unwind depends on besides its start and the copy's extent: the frame-pointer
/// register where the unwind read through it, and the stack words it read. Another copy
/// from the same start whose words (and rbp) hold these values unwinds the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Basis {
    /// rbp as the unwind needs it; `None` when the unwind did not depend on it.
    pub bp: Option<u64>,
    /// (address, value) of each stack word read, in reading order.
    pub words: Vec<(u64, u64)>,
    /// The copy's length and flags did not matter ([`Unwound::extent_free`]).
    pub extent_free: bool,
}

/// An earlier unwind from the same start: the stack words it read and what it gave.
struct MemoEntry {
    /// The frame-pointer register it started from, when the unwind depended on it
    /// (`None`: it did not). Code without frame pointers keeps anything in rbp (a loop
    /// counter in the ping-pong), so a key with rbp in it missed on every other stack.
    bp: Option<u64>,
    reads: Vec<(u64, u64)>,
    result: Unwound,
}

impl MemoEntry {
    /// Does this copy hold what the remembered unwind read?
    fn matches(&self, copy: &StackCopy) -> bool {
        self.bp.is_none_or(|bp| bp == copy.bp)
            && self.reads.iter().all(|&(a, v)| read_word(copy, a) == Ok(v))
    }
}

/// Unwinds remembered per starting point. A server thread blocks at the same few
/// places again and again, and an unwind is a function of its registers, the copy's
/// extent and the words it reads: when those words hold the same values, the frames
/// are the same, and checking a few dozen words costs far less than running the CFI
/// interpreter again (it was a third of the recorder's CPU on a many-process load).
/// Cleared when the process's modules change.
#[derive(Default)]
struct Memo {
    entries: rustc_hash::FxHashMap<MemoKey, MemoEntry>,
}

/// Most remembered unwinds per process; past it the memo starts over.
const MEMO_MAX: usize = 4096;

/// Unwinds copied stacks of every recorded process, caching unwind tables per file.
pub struct DwarfUnwinder {
    files: HashMap<String, Option<Arc<FileInfo>>>,
    procs: HashMap<u32, Process>,
    cache: CacheX86_64,
    memo_hits: u64,
    memo_off: bool,
    /// Walkers of runtimes' own frames (JIT code, interpreters), asked in order.
    runtimes: Vec<Box<dyn RuntimeFrames>>,
}

impl std::fmt::Debug for DwarfUnwinder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DwarfUnwinder")
            .field("files", &self.files.len())
            .field("processes", &self.procs.len())
            .finish()
    }
}

impl Default for DwarfUnwinder {
    fn default() -> Self {
        DwarfUnwinder {
            files: HashMap::new(),
            procs: HashMap::new(),
            cache: CacheX86_64::new(),
            memo_hits: 0,
            memo_off: false,
            runtimes: Vec::new(),
        }
    }
}

impl DwarfUnwinder {
    /// Does this process have modules yet?
    pub fn knows(&self, tgid: u32) -> bool {
        self.procs.contains_key(&tgid)
    }

    /// Replace a process's executable mappings (after exec or new mmaps): modules are
    /// added for new mappings and dropped for ones that are gone, and the process's
    /// remembered unwinds are forgotten. Returns whether the mapped files changed (a
    /// change of anonymous memory alone, a JIT's code growing, returns false).
    pub fn set_mappings(&mut self, tgid: u32, maps: Vec<CodeMapping>) -> bool {
        let p = self.procs.entry(tgid).or_insert_with(|| Process {
            unwinder: UnwinderX86_64::new(),
            maps: Vec::new(),
            memo: Memo::default(),
        });
        // A JIT's code memory grows and moves all the time (a JVM commits its code
        // heap as it compiles): the unwinds remembered here are forgotten then (a
        // runtime walker may name more of the frames now), but that changes no
        // file's unwind tables, so the caller need not make the kernel's memo forget
        // its own (only a change of the mapped files is reported as a change).
        let files = |m: &[CodeMapping]| -> Vec<CodeMapping> {
            m.iter().filter(|m| !m.path.is_empty()).cloned().collect()
        };
        let changed = p.maps != maps && files(&p.maps) != files(&maps);
        let moved = p.maps != maps;
        if moved {
            p.memo.entries.clear();
        }
        for old in &p.maps {
            if !maps.contains(old) {
                p.unwinder.remove_module(old.start);
            }
        }
        for m in &maps {
            if p.maps.contains(m) || !m.path.starts_with('/') {
                continue;
            }
            let info = self
                .files
                .entry(m.path.clone())
                .or_insert_with(|| FileInfo::read(&m.path).map(Arc::new));
            if let Some(info) = info
                && let Some(base) = info.base_avma(m.start, m.offset)
            {
                p.unwinder
                    .add_module(info.module(&m.path, m.start..m.end, base));
            }
        }
        p.maps = maps;
        if moved {
            for r in &mut self.runtimes {
                r.mappings_changed(tgid);
            }
        }
        changed
    }

    /// Forget a process (it exited).
    pub fn forget(&mut self, tgid: u32) {
        self.procs.remove(&tgid);
        for r in &mut self.runtimes {
            r.forget(tgid);
        }
    }

    /// Add a walker for a runtime's own frames: asked about every frame that lies
    /// outside the files a process maps, before the frame-pointer fallback.
    pub fn add_runtime(&mut self, r: Box<dyn RuntimeFrames>) {
        self.runtimes.push(r);
    }

    /// What the runtime walkers could not do, one sentence each.
    pub fn runtime_warnings(&self) -> Vec<String> {
        self.runtimes.iter().flat_map(|r| r.warnings()).collect()
    }

    /// The runtime walkers' counters, summed by name.
    pub fn runtime_counters(&self) -> Vec<(&'static str, u64)> {
        let mut out: Vec<(&'static str, u64)> = Vec::new();
        for (k, v) in self.runtimes.iter().flat_map(|r| r.counters()) {
            match out.iter_mut().find(|(n, _)| *n == k) {
                Some(e) => e.1 += v,
                None => out.push((k, v)),
            }
        }
        out
    }

    /// Unwind one copied stack, keeping the frames `mode` wants, at most `depth`.
    pub fn unwind(
        &mut self,
        tgid: u32,
        copy: &StackCopy,
        mode: StackMode,
        depth: usize,
    ) -> Unwound {
        let rt = &mut self.runtimes;
        let p = match self.procs.get_mut(&tgid) {
            Some(p) if !self.memo_off => p,
            Some(p) => {
                let w = Walker::of(&p.unwinder, &p.maps, tgid, rt);
                return unwind_with(w, &mut self.cache, copy, copy.bp, (mode, depth), None);
            }
            None => {
                let unwinder = UnwinderX86_64::<Bytes>::new();
                let w = Walker::of(&unwinder, &[], tgid, rt);
                return unwind_with(w, &mut self.cache, copy, copy.bp, (mode, depth), None);
            }
        };
        let key = MemoKey::of(copy, mode, depth);
        if let Some(e) = p.memo.entries.get(&key)
            && e.matches(copy)
        {
            self.memo_hits += 1;
            return e.result.clone();
        }
        let mut reads = Vec::new();
        let result = unwind_with(
            Walker::of(&p.unwinder, &p.maps, tgid, rt),
            &mut self.cache,
            copy,
            copy.bp,
            (mode, depth),
            Some(&mut reads),
        );
        // Did the start's rbp matter? Unwind once more from an rbp that points nowhere:
        // a walk that used it (rbp-based CFA, frame pointers) then fails to read, so the
        // same frames and end mean it never read through rbp. Only a walk that ended
        // without a failed read can tell.
        let ended_clean = matches!(
            result.end,
            UnwindEnd::Complete | UnwindEnd::Depth | UnwindEnd::Scope
        );
        let poison = if copy.bp == 0 { 1 } else { 0 };
        let bp = if ended_clean && {
            let w = Walker::of(&p.unwinder, &p.maps, tgid, rt);
            let other = unwind_with(w, &mut self.cache, copy, poison, (mode, depth), None);
            other.frames == result.frames && other.end == result.end
        } {
            None
        } else {
            Some(copy.bp)
        };
        if result.provisional {
            return result;
        }
        if p.memo.entries.len() >= MEMO_MAX {
            p.memo.entries.clear();
        }
        p.memo.entries.insert(
            key,
            MemoEntry {
                bp,
                reads,
                result: result.clone(),
            },
        );
        result
    }

    /// What the remembered unwind of this copy read (see [`Basis`]); `None` when the
    /// memo holds no unwind from its start that matches it.
    pub fn basis(
        &self,
        tgid: u32,
        copy: &StackCopy,
        mode: StackMode,
        depth: usize,
    ) -> Option<Basis> {
        let e = self
            .procs
            .get(&tgid)?
            .memo
            .entries
            .get(&MemoKey::of(copy, mode, depth))?;
        e.matches(copy).then(|| Basis {
            bp: e.bp,
            words: e.reads.clone(),
            extent_free: e.result.extent_free,
        })
    }

    /// Turn the memo on or off (on by default).
    pub fn set_memo(&mut self, on: bool) {
        self.memo_off = !on;
    }

    /// Unwinds answered from the memo instead of the unwind tables.
    pub fn memo_hits(&self) -> u64 {
        self.memo_hits
    }
}

impl FrameNames for DwarfUnwinder {
    fn frame_name(&self, tgid: u32, addr: u64) -> Option<String> {
        self.runtimes.iter().find_map(|r| r.name(tgid, addr))
    }
}

/// The 8-byte word at `addr` in the copied window.
fn read_word(copy: &StackCopy, addr: u64) -> Result<u64, ()> {
    let off = addr.checked_sub(copy.sp).ok_or(())? as usize;
    let b = copy
        .data
        .get(off..off.checked_add(8).ok_or(())?)
        .ok_or(())?;
    Ok(u64::from_le_bytes(b.try_into().map_err(|_| ())?))
}

/// What one unwind walks with: a process's modules and mappings, and the runtime
/// walkers.
struct Walker<'a> {
    unwinder: &'a UnwinderX86_64<Bytes>,
    maps: &'a [CodeMapping],
    tgid: u32,
    runtimes: &'a mut [Box<dyn RuntimeFrames>],
}

impl<'a> Walker<'a> {
    fn of(
        unwinder: &'a UnwinderX86_64<Bytes>,
        maps: &'a [CodeMapping],
        tgid: u32,
        runtimes: &'a mut [Box<dyn RuntimeFrames>],
    ) -> Walker<'a> {
        Walker {
            unwinder,
            maps,
            tgid,
            runtimes,
        }
    }
}

/// Unwind `copy` with these modules; `reads` collects the words read.
fn unwind_with(
    w: Walker<'_>,
    cache: &mut CacheX86_64,
    copy: &StackCopy,
    bp: u64,
    (mode, depth): (StackMode, usize),
    reads: Option<&mut Vec<(u64, u64)>>,
) -> Unwound {
    let mut scope = Scope {
        mode,
        depth,
        maps: w.maps,
        used: Vec::new(),
        app_seen: false,
        unmapped: false,
        extent_used: false,
        provisional: false,
    };
    let mut frames = Vec::new();
    let end = walk(w, cache, copy, bp, &mut scope, &mut frames, reads);
    Unwound {
        frames,
        end,
        unmapped: scope.unmapped,
        extent_free: !scope.extent_used,
        provisional: scope.provisional,
    }
}

/// The copy as one walk reads it, with the words its result depends on.
struct Tracked<'c, 'r> {
    copy: &'c StackCopy,
    reads: Option<&'r mut Vec<(u64, u64)>>,
    /// A caller's rbp loaded by a runtime's step and not used yet: (address, value).
    pending_bp: Option<(u64, u64)>,
}

impl StackWords for Tracked<'_, '_> {
    fn word(&mut self, addr: u64) -> Option<u64> {
        let v = read_word(self.copy, addr).ok()?;
        if let Some(r) = self.reads.as_deref_mut() {
            r.push((addr, v));
        }
        Some(v)
    }

    fn saved_bp(&mut self, addr: u64) -> Option<u64> {
        let v = read_word(self.copy, addr).ok()?;
        self.pending_bp = Some((addr, v));
        Some(v)
    }

    fn uses_bp(&mut self) {
        if let (Some(w), Some(r)) = (self.pending_bp.take(), self.reads.as_deref_mut()) {
            r.push(w);
        }
    }
}

/// What the first runtime walker that knows the frame makes of it.
fn ask_runtimes(w: &mut Walker<'_>, at: FrameRegs, stack: &mut Tracked<'_, '_>) -> RuntimeStep {
    for r in w.runtimes.iter_mut() {
        let step = r.step(w.tgid, at, stack);
        if step != RuntimeStep::NotMine {
            return step;
        }
    }
    RuntimeStep::NotMine
}

fn walk(
    mut w: Walker<'_>,
    cache: &mut CacheX86_64,
    copy: &StackCopy,
    bp: u64,
    scope: &mut Scope<'_>,
    frames: &mut Vec<u64>,
    reads: Option<&mut Vec<(u64, u64)>>,
) -> UnwindEnd {
    let mut stack = Tracked {
        copy,
        reads,
        pending_bp: None,
    };
    let mut regs = UnwindRegsX86_64::new(copy.ip, copy.sp, bp);
    let window_end = copy.sp + copy.data.len() as u64;
    // Stepped frame by frame (not with framehop's iterator) to see each frame's sp.
    let mut addr = FrameAddress::InstructionPointer(copy.ip);
    loop {
        if scope.done(frames.len()) {
            return if scope.mode == StackMode::App && scope.app_seen {
                UnwindEnd::Scope
            } else {
                UnwindEnd::Depth
            };
        }
        let (a, leaf) = match addr {
            FrameAddress::InstructionPointer(a) => (a, true),
            FrameAddress::ReturnAddress(a) => (a.get(), false),
        };
        let sp = regs.sp();
        // Code outside the process's files: a runtime's walker may know its frame.
        let runtime = if scope.in_file(a) {
            RuntimeStep::NotMine
        } else {
            let at = FrameRegs {
                ip: a,
                sp,
                bp: regs.bp(),
                leaf,
            };
            ask_runtimes(&mut w, at, &mut stack)
        };
        if scope.keep(a) {
            frames.push(runtime.report().unwrap_or(a));
        }
        // As framehop's iterator: a full budget stops before the next step.
        if scope.done(frames.len()) {
            continue;
        }
        match runtime {
            RuntimeStep::NotMine => {}
            RuntimeStep::Caller { caller, .. } => {
                if caller.ip == 0 {
                    return UnwindEnd::Complete;
                }
                if caller.sp <= sp {
                    return UnwindEnd::NoProgress;
                }
                regs = UnwindRegsX86_64::new(caller.ip, caller.sp, caller.bp);
                addr = FrameAddress::ReturnAddress(
                    std::num::NonZeroU64::new(caller.ip).expect("checked above"),
                );
                continue;
            }
            RuntimeStep::Stuck { .. } => {
                scope.extent_used = true;
                return UnwindEnd::NoProgress;
            }
            RuntimeStep::NotYet { .. } => {
                scope.extent_used = true;
                scope.provisional = true;
                return UnwindEnd::NoProgress;
            }
        }
        // The unwind tables may step through rbp: the word it came from counts.
        stack.uses_bp();
        let step = w
            .unwinder
            .unwind_frame(addr, &mut regs, cache, &mut |a| stack.word(a).ok_or(()));
        let err = match step {
            Ok(None) => return UnwindEnd::Complete,
            Ok(Some(ret)) => match FrameAddress::from_return_address(ret) {
                Some(next) => {
                    addr = next;
                    continue;
                }
                // A zero return address is how some outermost frames end (no CFI marks).
                None => return UnwindEnd::Complete,
            },
            Err(HopError::ReturnAddressIsNull) => return UnwindEnd::Complete,
            Err(e) => e,
        };
        scope.extent_used = true;
        // The window ends at the thread's starting stack pointer and this frame sits
        // there: it is the outermost (the dynamic loader's entry point, which has no
        // unwind entry to say so), and anything above is not this thread's.
        if copy.flags & copy_flags::TOP != 0 && sp >= window_end {
            return UnwindEnd::Complete;
        }
        return match err {
            HopError::CouldNotReadStack(a) => {
                // Past the end of the window: the stack goes on if the window was cut
                // short of the stack's mapping; otherwise the unwind data or the
                // stack led outside it.
                if a >= window_end && copy.flags & copy_flags::CUT != 0 {
                    UnwindEnd::Window
                } else {
                    UnwindEnd::Unreadable
                }
            }
            HopError::DidNotAdvance
            | HopError::FramepointerUnwindingMovedBackwards
            | HopError::IntegerOverflow => UnwindEnd::NoProgress,
            HopError::ReturnAddressIsNull => UnwindEnd::Complete,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_at_the_threads_starting_stack_pointer_is_the_outermost() {
        // Two frames by frame pointers (no modules), the second one's rbp garbage: its
        // sp is the window's end. When the window ends at the thread's starting stack
        // pointer, that frame is the outermost; otherwise the unwind led outside.
        let mut data = Vec::new();
        data.extend_from_slice(&0x9000u64.to_le_bytes()); // caller's rbp
        data.extend_from_slice(&0x5000u64.to_le_bytes()); // return address
        let mut copy = StackCopy {
            ip: 0x4000,
            sp: 0x1000,
            bp: 0x1000,
            flags: copy_flags::TOP,
            data,
        };
        let mut u = DwarfUnwinder::default();
        let top = u.unwind(1, &copy, StackMode::All, 32);
        assert_eq!(top.frames, vec![0x4000, 0x5000]);
        assert_eq!(top.end, UnwindEnd::Complete);
        copy.flags = 0;
        assert_eq!(
            u.unwind(1, &copy, StackMode::All, 32).end,
            UnwindEnd::Unreadable
        );
        copy.flags = copy_flags::CUT;
        assert_eq!(
            u.unwind(1, &copy, StackMode::All, 32).end,
            UnwindEnd::Window
        );
        // A full budget stops before stepping further.
        copy.flags = copy_flags::TOP;
        let one = u.unwind(1, &copy, StackMode::All, 1);
        assert_eq!((one.frames.len(), one.end), (1, UnwindEnd::Depth));
    }

    /// Frame-pointer frames (no modules): rbp chain 0x1000 -> 0x1010 -> 0 (a zero frame
    /// pointer ends the walk), then two words past the frames, like locals of a caller
    /// the walk never reads.
    fn chain_copy(flags: u32) -> StackCopy {
        let mut data = Vec::new();
        for w in [0x1010u64, 0x5000, 0, 0x6000, 1, 2] {
            data.extend_from_slice(&w.to_le_bytes());
        }
        StackCopy {
            ip: 0x4000,
            sp: 0x1000,
            bp: 0x1000,
            flags,
            data,
        }
    }

    #[test]
    fn a_repeated_stack_is_unwound_once_and_a_changed_one_again() {
        let copy = chain_copy(copy_flags::TOP);
        let mut u = DwarfUnwinder::default();
        u.set_mappings(7, Vec::new());
        let first = u.unwind(7, &copy, StackMode::All, 32);
        assert_eq!(first.frames, vec![0x4000, 0x5000, 0x6000]);
        assert_eq!(u.memo_hits(), 0);
        // The same start and words: answered from the memo, same frames.
        assert_eq!(u.unwind(7, &copy, StackMode::All, 32), first);
        assert_eq!(u.memo_hits(), 1);
        // A local variable outside the frame chain changed: still the same frames.
        let mut other = copy.clone();
        other.data[40..48].copy_from_slice(&0xdeadu64.to_le_bytes());
        assert_eq!(u.unwind(7, &other, StackMode::All, 32), first);
        assert_eq!(u.memo_hits(), 2);
        // A return address changed: unwound again, new frames.
        let mut moved = copy.clone();
        moved.data[8..16].copy_from_slice(&0x5100u64.to_le_bytes());
        let again = u.unwind(7, &moved, StackMode::All, 32);
        assert_eq!(again.frames, vec![0x4000, 0x5100, 0x6000]);
        assert_eq!(u.memo_hits(), 2);
        // Another scope is another unwind.
        assert_eq!(u.unwind(7, &copy, StackMode::All, 1).frames.len(), 1);
        assert_eq!(u.memo_hits(), 2);
        // These frames were found through rbp: another rbp is another unwind, never
        // the remembered frames (here it points at the second frame).
        let mut shifted = copy.clone();
        shifted.bp = 0x1010;
        let from_bp = u.unwind(7, &shifted, StackMode::All, 32);
        assert_eq!(from_bp.frames, vec![0x4000, 0x6000]);
        assert_eq!(u.memo_hits(), 2);
    }

    #[test]
    fn an_unwind_reports_the_words_it_read_and_whether_the_copys_end_mattered() {
        let copy = chain_copy(copy_flags::CUT | copy_flags::RANGE_LOOKUP);
        let mut u = DwarfUnwinder::default();
        u.set_mappings(7, Vec::new());
        let whole = u.unwind(7, &copy, StackMode::All, 32);
        assert_eq!(whole.end, UnwindEnd::Complete);
        assert!(
            whole.extent_free,
            "ended by the frame chain, not by the copy's end"
        );
        let b = u.basis(7, &copy, StackMode::All, 32).expect("remembered");
        assert_eq!(b.bp, Some(0x1000), "frames found through rbp");
        assert!(b.extent_free);
        let read: Vec<u64> = b.words.iter().map(|w| w.0).collect();
        assert!(read.contains(&0x1008) && read.contains(&0x1018), "{read:?}");
        assert!(
            !read.contains(&0x1020),
            "a local was counted as read: {read:?}"
        );
        // The range lookup bit does not change an unwind: same memo entry.
        let mut plain = copy.clone();
        plain.flags = copy_flags::CUT;
        assert_eq!(u.basis(7, &plain, StackMode::All, 32), Some(b));
        // A copy cut short of its frames ran into its end: that unwind depends on it.
        let mut short = copy.clone();
        short.data.truncate(16);
        let cut = u.unwind(7, &short, StackMode::All, 32);
        assert_eq!(cut.end, UnwindEnd::Window);
        assert!(!cut.extent_free);
        assert!(!u.basis(7, &short, StackMode::All, 32).unwrap().extent_free);
        // Words that differ from the remembered ones: no basis for this copy.
        let mut moved = copy.clone();
        moved.data[8..16].copy_from_slice(&0x5100u64.to_le_bytes());
        assert_eq!(u.basis(7, &moved, StackMode::All, 32), None);
    }

    /// A runtime walker that cannot read its runtime until `ready` is set, then
    /// steps every frame at 0x4000 by frame pointers.
    struct Starting {
        ready: std::sync::Arc<std::sync::atomic::AtomicBool>,
    }

    impl RuntimeFrames for Starting {
        fn step(&mut self, _: u32, regs: FrameRegs, stack: &mut dyn StackWords) -> RuntimeStep {
            if regs.ip != 0x4000 {
                return RuntimeStep::NotMine;
            }
            if !self.ready.load(std::sync::atomic::Ordering::Relaxed) {
                return RuntimeStep::NotYet { report: regs.ip };
            }
            stack.uses_bp();
            let (Some(ip), Some(bp)) = (stack.word(regs.bp + 8), stack.saved_bp(regs.bp)) else {
                return RuntimeStep::Stuck { report: regs.ip };
            };
            let caller = FrameRegs {
                ip,
                sp: regs.bp + 16,
                bp,
                leaf: false,
            };
            RuntimeStep::Caller {
                report: 0x9999,
                caller,
            }
        }
        fn name(&self, _: u32, addr: u64) -> Option<String> {
            (addr == 0x9999).then(|| "runtime frame".into())
        }
        fn counters(&self) -> Vec<(&'static str, u64)> {
            Vec::new()
        }
        fn forget(&mut self, _: u32) {}
    }

    /// A runtime walker that only counts the mapping changes it is told of.
    struct Told(std::sync::Arc<std::sync::atomic::AtomicU32>);

    impl RuntimeFrames for Told {
        fn step(&mut self, _: u32, _: FrameRegs, _: &mut dyn StackWords) -> RuntimeStep {
            RuntimeStep::NotMine
        }
        fn name(&self, _: u32, _: u64) -> Option<String> {
            None
        }
        fn counters(&self) -> Vec<(&'static str, u64)> {
            Vec::new()
        }
        fn forget(&mut self, _: u32) {}
        fn mappings_changed(&mut self, tgid: u32) {
            assert_eq!(tgid, 7);
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[test]
    fn runtimes_are_told_when_mappings_change() {
        let told = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let mut u = DwarfUnwinder::default();
        u.add_runtime(Box::new(Told(told.clone())));
        let anon = |end: u64| CodeMapping {
            start: 0x1000,
            end,
            offset: 0,
            path: String::new(),
            program: false,
        };
        u.set_mappings(7, vec![anon(0x2000)]);
        u.set_mappings(7, vec![anon(0x2000)]);
        assert_eq!(
            told.load(std::sync::atomic::Ordering::Relaxed),
            1,
            "unchanged"
        );
        // Anonymous code grown (a JIT): no file changed, the runtime is still told.
        assert!(!u.set_mappings(7, vec![anon(0x3000)]));
        assert_eq!(told.load(std::sync::atomic::Ordering::Relaxed), 2);
    }

    #[test]
    fn an_unwind_through_a_runtime_not_yet_readable_is_not_remembered() {
        let ready = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut u = DwarfUnwinder::default();
        u.add_runtime(Box::new(Starting {
            ready: ready.clone(),
        }));
        // The leaf at 0x4000 lies in anonymous memory: the runtime's.
        u.set_mappings(
            7,
            vec![CodeMapping {
                start: 0x4000,
                end: 0x5000,
                offset: 0,
                path: String::new(),
                program: false,
            }],
        );
        let copy = chain_copy(copy_flags::TOP);
        let early = u.unwind(7, &copy, StackMode::All, 32);
        assert_eq!(early.frames, vec![0x4000]);
        assert_eq!(early.end, UnwindEnd::NoProgress);
        assert!(early.provisional);
        assert_eq!(u.basis(7, &copy, StackMode::All, 32), None, "remembered");
        ready.store(true, std::sync::atomic::Ordering::Relaxed);
        let later = u.unwind(7, &copy, StackMode::All, 32);
        assert_eq!(later.frames, vec![0x9999, 0x5000, 0x6000]);
        assert_eq!(later.end, UnwindEnd::Complete);
        assert!(!later.provisional);
        assert_eq!(u.frame_name(7, 0x9999).as_deref(), Some("runtime frame"));
        assert!(u.basis(7, &copy, StackMode::All, 32).is_some());
    }

    /// A runtime whose frames at 0x4000 and 0x5000 are two words (the caller's rbp,
    /// then the return address) and keep nothing in rbp, as compiled Java code does;
    /// its frame at 0x6000 is laid out around rbp.
    struct Compiled;

    impl RuntimeFrames for Compiled {
        fn step(&mut self, _: u32, regs: FrameRegs, stack: &mut dyn StackWords) -> RuntimeStep {
            let (ip, sp, bp) = match regs.ip {
                0x4000 | 0x5000 => (
                    stack.word(regs.sp + 8),
                    regs.sp + 16,
                    stack.saved_bp(regs.sp),
                ),
                0x6000 => {
                    stack.uses_bp();
                    (
                        stack.word(regs.bp + 8),
                        regs.bp + 16,
                        stack.saved_bp(regs.bp),
                    )
                }
                _ => return RuntimeStep::NotMine,
            };
            let (Some(ip), Some(bp)) = (ip, bp) else {
                return RuntimeStep::Stuck { report: regs.ip };
            };
            let caller = FrameRegs {
                ip,
                sp,
                bp,
                leaf: false,
            };
            RuntimeStep::Caller {
                report: regs.ip,
                caller,
            }
        }
        fn name(&self, _: u32, _: u64) -> Option<String> {
            None
        }
        fn counters(&self) -> Vec<(&'static str, u64)> {
            Vec::new()
        }
        fn forget(&mut self, _: u32) {}
    }

    #[test]
    fn a_saved_rbp_counts_only_once_a_frame_steps_through_it() {
        let mut u = DwarfUnwinder::default();
        u.add_runtime(Box::new(Compiled));
        u.set_mappings(7, Vec::new());
        let mut data = Vec::new();
        // 0x1000: frame of 0x4000 (whatever its code left in rbp's slot, return into
        // 0x5000); 0x1010: frame of 0x5000 (the rbp of 0x6000's frame, return into
        // 0x6000); 0x1020: 0x6000's frame, the outermost.
        for w in [0xdead_0001u64, 0x5000, 0x1020, 0x6000, 0, 0] {
            data.extend_from_slice(&w.to_le_bytes());
        }
        let copy = StackCopy {
            ip: 0x4000,
            sp: 0x1000,
            bp: 0x7777,
            flags: copy_flags::TOP,
            data,
        };
        let first = u.unwind(7, &copy, StackMode::All, 32);
        assert_eq!(first.frames, vec![0x4000, 0x5000, 0x6000]);
        assert_eq!(first.end, UnwindEnd::Complete);
        let b = u.basis(7, &copy, StackMode::All, 32).expect("remembered");
        let read: Vec<u64> = b.words.iter().map(|w| w.0).collect();
        assert!(
            !read.contains(&0x1000),
            "an unused rbp slot counted: {read:x?}"
        );
        assert!(
            read.contains(&0x1010),
            "the rbp 0x6000 steps through: {read:x?}"
        );
        assert_eq!(b.bp, None, "the start's rbp is never used");
        // Another value in the unused slot: the same stack, answered from the memo.
        let mut other = copy.clone();
        other.data[0..8].copy_from_slice(&0xdead_0002u64.to_le_bytes());
        assert_eq!(u.unwind(7, &other, StackMode::All, 32), first);
        assert_eq!(u.memo_hits(), 1);
        // Another rbp where a frame steps through it: unwound again.
        let mut moved = copy.clone();
        moved.data[16..24].copy_from_slice(&0x1028u64.to_le_bytes());
        assert_eq!(u.basis(7, &moved, StackMode::All, 32), None);
    }

    #[test]
    fn a_jit_growing_its_code_memory_is_no_change_of_files() {
        // The frames (0x4000-0x6000) lie in the JIT's code memory.
        let anon = |end| CodeMapping {
            start: 0x4000,
            end,
            offset: 0,
            path: String::new(),
            program: false,
        };
        let copy = chain_copy(copy_flags::TOP);
        let mut u = DwarfUnwinder::default();
        u.set_mappings(7, vec![anon(0x7000)]);
        let first = u.unwind(7, &copy, StackMode::All, 32);
        // The code memory grew: no file changed (the kernel's memo may stay), the
        // unwind is made again (a runtime walker may know more now), the same.
        assert!(!u.set_mappings(7, vec![anon(0x9000)]));
        assert_eq!(u.unwind(7, &copy, StackMode::All, 32), first);
        assert_eq!(u.memo_hits(), 0);
        // A file mapped: a change.
        let file = CodeMapping {
            start: 0x40_0000,
            end: 0x50_0000,
            offset: 0,
            path: "/nonexistent/lib.so".into(),
            program: false,
        };
        assert!(u.set_mappings(7, vec![anon(0x9000), file]));
    }
}
