//! Frames of code no file describes: a managed runtime's JIT-compiled code and
//! interpreter, which have neither unwind tables nor (always) frame pointers. A
//! runtime's own walker steps out of them from the runtime's description of its
//! frames; the file-backed frames around them are unwound as before.

/// Where the walk stands in one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRegs {
    /// The frame's instruction pointer (a return address but for the leaf).
    pub ip: u64,
    /// Its stack pointer.
    pub sp: u64,
    /// rbp as restored so far.
    pub bp: u64,
    /// The frame is the interrupted one (ip is not a return address).
    pub leaf: bool,
}

/// What a runtime's walker makes of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeStep {
    /// Not the runtime's code: unwind the frame with the unwind tables.
    NotMine,
    /// The caller's registers (`ip` the return address; 0 when this frame is the
    /// outermost). `report` is the address kept for this frame: its ip, or an address
    /// the walker names ([`RuntimeFrames::name`]) where the ip would not tell frames
    /// apart (every interpreted method runs the interpreter's code).
    Caller {
        /// Address kept for this frame.
        report: u64,
        /// The caller's registers.
        caller: FrameRegs,
    },
    /// The runtime's code, but its frame cannot be stepped out of.
    Stuck {
        /// Address kept for this frame.
        report: u64,
    },
    /// The runtime's code, but the runtime cannot be read yet (it is starting): the
    /// walk stops here and its result is not remembered.
    NotYet {
        /// Address kept for this frame.
        report: u64,
    },
}

impl RuntimeStep {
    /// The address kept for the frame, if the runtime's walker knew it.
    pub fn report(self) -> Option<u64> {
        match self {
            RuntimeStep::NotMine => None,
            RuntimeStep::Caller { report, .. }
            | RuntimeStep::Stuck { report }
            | RuntimeStep::NotYet { report } => Some(report),
        }
    }
}

/// The copied stack as a runtime's walker reads it. The words read are what a
/// remembered unwind is checked against (in user space and in the kernel), so a word
/// is counted only where the walk's result depends on it: a caller's rbp saved in a
/// frame matters only once a later frame is stepped through rbp. Compiled Java code
/// uses rbp as an ordinary register, so the word in its rbp slot differs from one
/// call to the next; counted eagerly, it made 90 % of a Java server's stacks
/// unrecognizable (each start rewritten until the memo gave up on it).
pub trait StackWords {
    /// The word at `addr`; the walk depends on its value.
    fn word(&mut self, addr: u64) -> Option<u64>;
    /// The word at `addr`, to become the caller's rbp: counted once a later step
    /// uses rbp ([`StackWords::uses_bp`]), forgotten if the next one loads another.
    fn saved_bp(&mut self, addr: u64) -> Option<u64>;
    /// This step reads through rbp (`FrameRegs::bp`): the word it came from counts.
    fn uses_bp(&mut self);
}

/// Plain reads, every word counted: for walkers' tests and callers that keep no basis.
impl<F: FnMut(u64) -> Result<u64, ()>> StackWords for F {
    fn word(&mut self, addr: u64) -> Option<u64> {
        self(addr).ok()
    }
    fn saved_bp(&mut self, addr: u64) -> Option<u64> {
        self(addr).ok()
    }
    fn uses_bp(&mut self) {}
}

/// A runtime's frame walker, asked about every frame outside the files a process maps.
pub trait RuntimeFrames: Send {
    /// Step out of the frame at `regs` of process `tgid`, reading stack words only
    /// through `stack` (see [`StackWords`] for why), and telling it when the step
    /// reads through rbp.
    fn step(&mut self, tgid: u32, regs: FrameRegs, stack: &mut dyn StackWords) -> RuntimeStep;

    /// The name of an address this walker reported (a compiled method's code, an
    /// interpreted method).
    fn name(&self, tgid: u32, addr: u64) -> Option<String>;

    /// Counters for the recording's statistics (zero ones may be left out).
    fn counters(&self) -> Vec<(&'static str, u64)>;

    /// What the walker could not do, one sentence each (for the recording's summary).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// The process exited: drop what is kept to read it (its names stay, for the
    /// stacks recorded before).
    fn forget(&mut self, tgid: u32);

    /// The process's mappings changed (an exec, a library loaded, JIT code grown): a
    /// judgment made from the old ones (not this runtime's process) may be wrong now.
    fn mappings_changed(&mut self, _tgid: u32) {}
}

/// Names of the addresses runtime walkers reported, for the symbolizer.
pub trait FrameNames {
    /// The name of `addr` in process `tgid`, if a walker reported it.
    fn frame_name(&self, tgid: u32, addr: u64) -> Option<String>;
}

/// No walker: no names.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoFrameNames;

impl FrameNames for NoFrameNames {
    fn frame_name(&self, _: u32, _: u64) -> Option<String> {
        None
    }
}
