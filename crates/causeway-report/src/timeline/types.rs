//! The timeline's types: tracks, slices, instants and their values.

/// Which lane of a thread a track is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// Running / runnable / blocked / stopped / unknown.
    State,
    /// System calls.
    Syscalls,
    /// Spans and in-process method calls, nested.
    Calls,
}

impl Lane {
    /// The lane's track name.
    pub fn name(self) -> &'static str {
        match self {
            Lane::State => "state",
            Lane::Syscalls => "syscalls",
            Lane::Calls => "calls",
        }
    }
}

/// What a track stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrackKind {
    /// A process.
    Process {
        /// Its pid.
        pid: u32,
        /// Its command line, split on spaces, if known.
        cmdline: Vec<String>,
    },
    /// A thread.
    Thread {
        /// Its process id (its own tid when the process is unknown).
        pid: u32,
        /// Its tid.
        tid: u32,
    },
    /// One lane under a thread.
    Lane {
        /// The thread's process id.
        pid: u32,
        /// The thread's tid.
        tid: u32,
        /// Which lane.
        lane: Lane,
    },
    /// A CPU.
    Cpu {
        /// CPU number.
        cpu: u32,
    },
    /// Results of an analysis.
    Analysis,
}

/// A track: a row of non-overlapping (or properly nested) slices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Track {
    /// Unique id (Perfetto's track uuid).
    pub uuid: u64,
    /// The enclosing track, if any.
    pub parent: Option<u64>,
    /// What it is.
    pub kind: TrackKind,
    /// Its name.
    pub name: String,
}

/// What a slice or instant is about; the export's category.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// A thread state.
    State,
    /// A thread on a CPU.
    Cpu,
    /// A system call.
    Syscall,
    /// A span or method call from markers.
    Call,
    /// A wake-up.
    Wakeup,
    /// A bottleneck verdict.
    Bottleneck,
    /// A vertex of a diagnosis's culprit chain.
    Diagnosis,
}

impl Category {
    /// Its name in exports.
    pub fn name(self) -> &'static str {
        match self {
            Category::State => "state",
            Category::Cpu => "cpu",
            Category::Syscall => "syscall",
            Category::Call => "call",
            Category::Wakeup => "wakeup",
            Category::Bottleneck => "bottleneck",
            Category::Diagnosis => "diagnosis",
        }
    }
}

/// A value attached to a slice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgValue {
    /// Text (stacks are frames joined by line breaks, innermost first).
    Str(String),
    /// Unsigned number.
    Uint(u64),
    /// Signed number.
    Int(i64),
}

/// A named value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// Name (`stack`, `ret`, `weight_ns`).
    pub name: &'static str,
    /// Value.
    pub value: ArgValue,
}

/// An interval on a track.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slice {
    /// The track's uuid.
    pub track: u64,
    /// Start, trace clock nanoseconds.
    pub start_ns: u64,
    /// End, trace clock nanoseconds (at least `start_ns`).
    pub end_ns: u64,
    /// Name.
    pub name: String,
    /// Category.
    pub category: Category,
    /// Attached values.
    pub args: Vec<Arg>,
    /// Flows that end at this slice.
    pub flows_in: Vec<u64>,
}

/// A point in time on a track.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instant {
    /// The track's uuid.
    pub track: u64,
    /// When, trace clock nanoseconds.
    pub ts_ns: u64,
    /// Name.
    pub name: String,
    /// Category.
    pub category: Category,
    /// Attached values.
    pub args: Vec<Arg>,
    /// Flows that start here.
    pub flows_out: Vec<u64>,
}

/// The whole picture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    /// Tracks, parents before children.
    pub tracks: Vec<Track>,
    /// Slices, track by track.
    pub slices: Vec<Slice>,
    /// Instants.
    pub instants: Vec<Instant>,
    /// Number of flows (ids are `1..=flows`).
    pub flows: u64,
}
