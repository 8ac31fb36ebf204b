//! Typed identifiers and time units.
//!
//! Each kernel number that is easy to confuse with another (a thread id with a process
//! id, a CPU number with either) gets its own newtype, so a mix-up is a compile error.
//! Times are nanoseconds on the trace clock ([`Timestamp`]) or spans of nanoseconds
//! ([`DurationNs`]).

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident($inner:ty)) => {
        $(#[$doc])*
        #[derive(
            Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_type!(
    /// A kernel thread id (`task->pid`). Thread 0 is the per-CPU idle task.
    Tid(u32)
);
id_type!(
    /// A process id as user space sees it (`task->tgid`): the tid of the thread-group leader.
    Tgid(u32)
);
id_type!(
    /// A logical CPU number.
    Cpu(u32)
);
id_type!(
    /// Index into the trace's string table.
    StringId(u32)
);
id_type!(
    /// Index into the trace's deduplicated stack table.
    StackId(u32)
);
id_type!(
    /// Index into the trace's frame table (one resolved code address).
    FrameId(u32)
);
id_type!(
    /// A block device number as the kernel encodes it (`dev_t`, major << 20 | minor).
    DevId(u32)
);

impl Tid {
    /// The per-CPU idle task ("swapper").
    pub const IDLE: Tid = Tid(0);

    /// True for the idle task.
    pub fn is_idle(self) -> bool {
        self.0 == 0
    }
}

impl DevId {
    /// Kernel major number (`MAJOR(dev)` with the 20-bit minor encoding of `dev_t` in-kernel).
    pub fn major(self) -> u32 {
        self.0 >> 20
    }
    /// Kernel minor number.
    pub fn minor(self) -> u32 {
        self.0 & 0xfffff
    }
    /// Build from major and minor numbers.
    pub fn from_parts(major: u32, minor: u32) -> DevId {
        DevId((major << 20) | (minor & 0xfffff))
    }
}

/// A point in time on the trace clock, in nanoseconds (see [`crate::Header::clock`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Timestamp(pub u64);

/// A span of time in nanoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct DurationNs(pub u64);

impl Timestamp {
    /// Time elapsed from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Timestamp) -> DurationNs {
        DurationNs(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, saturating at the end of time.
    pub fn saturating_add(self, d: DurationNs) -> Timestamp {
        Timestamp(self.0.saturating_add(d.0))
    }
}

impl fmt::Display for Timestamp {
    /// Seconds with nanosecond precision, as perf prints them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}

impl DurationNs {
    /// The span as floating-point seconds (for reports only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl std::ops::Add for DurationNs {
    type Output = DurationNs;
    fn add(self, o: DurationNs) -> DurationNs {
        DurationNs(self.0.saturating_add(o.0))
    }
}

impl std::ops::AddAssign for DurationNs {
    fn add_assign(&mut self, o: DurationNs) {
        self.0 = self.0.saturating_add(o.0);
    }
}

impl fmt::Display for DurationNs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns >= 1_000_000_000 {
            write!(f, "{:.3}s", ns as f64 / 1e9)
        } else if ns >= 1_000_000 {
            write!(f, "{:.3}ms", ns as f64 / 1e6)
        } else if ns >= 1_000 {
            write!(f, "{:.3}us", ns as f64 / 1e3)
        } else {
            write!(f, "{ns}ns")
        }
    }
}
