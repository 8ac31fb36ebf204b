//! The walker: steps out of the JVM's frames and names what it reports.

use crate::codecache::BlobKind;
use crate::error::JvmError;
use crate::jvm::Jvm;
use crate::names;
use causeway_unwind::{FrameRegs, RuntimeFrames, RuntimeStep, StackWords};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// Names of the code and methods reported for one process: (start, end, name) by
/// start; a later entry at the same start replaces the earlier.
type Names = BTreeMap<u64, (u64, String)>;

/// The HotSpot walker: reads each JVM the recorder unwinds, names what it reports.
#[derive(Default)]
pub struct HotSpot {
    pub(crate) jvms: HashMap<u32, Process>,
    names: HashMap<u32, Names>,
    /// JVMs whose last reading failed, and why (for the summary).
    refused: BTreeMap<u32, String>,
    compiled: u64,
    interpreted: u64,
    stubs: u64,
    stuck: u64,
    not_yet: u64,
}

impl std::fmt::Debug for HotSpot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HotSpot")
            .field("jvms", &self.jvms.len())
            .finish()
    }
}

/// How long a process found not to be a JVM is left alone: the launcher runs before
/// it loads libjvm, and the JVM's structures are filled in as it starts.
const RETRY: Duration = Duration::from_secs(1);

/// Readings of a JVM's structures that may fail before it is given up on: a JVM
/// fills them in within its first second; one still unreadable after this many
/// seconds lacks what the walker needs (its frames are then unwound as before, and
/// the stacks through it remembered again).
const ATTEMPTS: u32 = 5;

/// What the walker knows of one process.
pub(crate) enum Process {
    Jvm(Box<Jvm>),
    /// Not a JVM (false), or one whose structures cannot be read yet (true): looked
    /// at then, after this many failed readings.
    Not(Instant, bool, u32),
}

/// The JVM of process `tgid`, opened on first need. `Err(true)`: a JVM that cannot be
/// read, or not yet (it fills in its structure tables' strides and offsets as it
/// starts, so a JVM read too early is read again later); `Err(false)`: not a JVM.
fn open_jvm<'a>(
    jvms: &'a mut HashMap<u32, Process>,
    refused: &mut BTreeMap<u32, String>,
    tgid: u32,
) -> Result<&'a mut Jvm, bool> {
    let (stale, tries) = match jvms.get(&tgid) {
        Some(Process::Not(at, _, n)) => (at.elapsed() > RETRY && *n < ATTEMPTS, *n),
        _ => (false, 0),
    };
    if stale || !jvms.contains_key(&tgid) {
        let p = match Jvm::open(tgid) {
            Ok(j) => {
                refused.remove(&tgid);
                Process::Jvm(Box::new(j))
            }
            Err(JvmError::NotJvm) => Process::Not(Instant::now(), false, 0),
            Err(e) => {
                refused.insert(tgid, e.to_string());
                Process::Not(Instant::now(), true, tries + 1)
            }
        };
        jvms.insert(tgid, p);
    }
    match jvms.get_mut(&tgid) {
        Some(Process::Jvm(j)) => Ok(j),
        // Given up on: no longer "not yet".
        Some(Process::Not(_, jvm, n)) => Err(*jvm && *n < ATTEMPTS),
        None => Err(false),
    }
}

/// Name `start..end` unless it is named already; false if no name could be read.
fn remember(
    names: &mut Names,
    start: u64,
    end: u64,
    name: impl FnOnce() -> Option<String>,
) -> bool {
    if names.get(&start).is_some_and(|e| e.0 == end) {
        return true;
    }
    match name() {
        Some(n) => {
            names.insert(start, (end, n));
            true
        }
        None => false,
    }
}

/// Step out of a frame laid out around rbp: caller's rbp at `[rbp]`, return address
/// at `[rbp+8]`, caller's sp at `sp_at` (HotSpot's interpreter keeps it at `[rbp-8]`)
/// or right above the return address.
fn rbp_frame(regs: FrameRegs, stack: &mut dyn StackWords, interpreted: bool) -> Option<FrameRegs> {
    stack.uses_bp();
    let bp = regs.bp;
    if bp < regs.sp || !bp.is_multiple_of(8) {
        return None;
    }
    let ip = stack.word(bp + 8)?;
    let caller_bp = stack.saved_bp(bp)?;
    let sp = if interpreted {
        stack.word(bp - 8)?
    } else {
        bp + 16
    };
    Some(FrameRegs {
        ip,
        sp,
        bp: caller_bp,
        leaf: false,
    })
}

/// Step out of a frame of `words` words: the return address is its last word, the
/// caller's rbp the one before (which matters only if the caller uses rbp: compiled
/// code holds anything there).
fn fixed_frame(regs: FrameRegs, stack: &mut dyn StackWords, words: u32) -> Option<FrameRegs> {
    let sp = regs.sp + words as u64 * 8;
    Some(FrameRegs {
        ip: stack.word(sp - 8)?,
        bp: stack.saved_bp(sp - 16)?,
        sp,
        leaf: false,
    })
}

impl RuntimeFrames for HotSpot {
    fn step(&mut self, tgid: u32, regs: FrameRegs, stack: &mut dyn StackWords) -> RuntimeStep {
        let pc = regs.ip;
        let jvm = match open_jvm(&mut self.jvms, &mut self.refused, tgid) {
            Ok(j) => j,
            Err(true) => {
                self.not_yet += 1;
                return RuntimeStep::NotYet { report: pc };
            }
            Err(false) => return RuntimeStep::NotMine,
        };
        let Some(blob) = jvm.blob_at(pc).cloned() else {
            return RuntimeStep::NotMine;
        };
        let (mem, l) = (jvm.mem.as_ref(), &jvm.layout);
        let table = self.names.entry(tgid).or_default();
        let stuck = RuntimeStep::Stuck { report: pc };
        let (report, caller) = match blob.kind {
            BlobKind::Interpreter => {
                let Some(caller) = rbp_frame(regs, stack, true) else {
                    self.stuck += 1;
                    return stuck;
                };
                // The Method* slot of the frame (HotSpot's
                // interpreter_frame_method_offset, -3 words on x86-64).
                let method = stack.word(regs.bp - 24).unwrap_or(0);
                let named = method != 0
                    && remember(table, method, method + 1, || {
                        names::method_name(mem, l, method)
                    });
                self.interpreted += 1;
                (if named { method } else { pc }, caller)
            }
            BlobKind::Compiled(method) if blob.frame_size > 0 => {
                // Named first: a frame that cannot be stepped out of is still the
                // method's (a sample in its prologue).
                remember(table, blob.code_begin, blob.code_end, || {
                    names::method_name(mem, l, method)
                });
                let set_up =
                    blob.frame_complete < 0 || pc >= blob.code_begin + blob.frame_complete as u64;
                let caller =
                    fixed_frame(regs, stack, blob.frame_size).filter(|_| !regs.leaf || set_up);
                let Some(caller) = caller else {
                    self.stuck += 1;
                    return stuck;
                };
                self.compiled += 1;
                (pc, caller)
            }
            _ => {
                let caller = if blob.frame_size > 0 {
                    fixed_frame(regs, stack, blob.frame_size)
                } else {
                    rbp_frame(regs, stack, false)
                };
                let Some(caller) = caller else {
                    self.stuck += 1;
                    return stuck;
                };
                remember(table, blob.code_begin, blob.code_end, || {
                    Some(blob.name.clone())
                });
                self.stubs += 1;
                (pc, caller)
            }
        };
        RuntimeStep::Caller { report, caller }
    }

    fn name(&self, tgid: u32, addr: u64) -> Option<String> {
        let (_, (end, name)) = self.names.get(&tgid)?.range(..=addr).next_back()?;
        (addr < *end).then(|| name.clone())
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("jvm_frames_compiled", self.compiled),
            ("jvm_frames_interpreted", self.interpreted),
            ("jvm_frames_stub", self.stubs),
            ("jvm_frames_stuck", self.stuck),
            ("jvm_frames_not_yet_readable", self.not_yet),
        ]
    }

    fn warnings(&self) -> Vec<String> {
        let mut by_reason: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for (tgid, why) in &self.refused {
            by_reason.entry(why).or_default().push(tgid.to_string());
        }
        by_reason
            .into_iter()
            .map(|(why, pids)| format!("Java frames of JVM {} not walked: {why}", pids.join(",")))
            .collect()
    }

    fn forget(&mut self, tgid: u32) {
        self.jvms.remove(&tgid);
    }

    /// A process found not to be a JVM is looked at again: it may have exec'd `java`
    /// (a wrapper script's shell does) or loaded libjvm since (the launcher does
    /// after it starts). Judged for a second from its old mappings, the JVM's first
    /// threads were walked as frame-pointer code, unnamed, and those unwinds were
    /// remembered: under load, 0-85 % instead of 100 % of java-commit's blocking
    /// time reached the application's frames.
    fn mappings_changed(&mut self, tgid: u32) {
        if matches!(self.jvms.get(&tgid), Some(Process::Not(_, false, _))) {
            self.jvms.remove(&tgid);
        }
    }
}
