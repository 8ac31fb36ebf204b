//! Data-flag accesses recorded by hardware watchpoints (Argus §4.2: a busy-wait on a
//! variable is a causal link from the write that ended it to the read that saw it).
//!
//! The event itself is [`crate::Marker::DataFlag`]: markers are what a thread did,
//! with its tid and CPU, and data-flag accesses are consumed by the same analyses as
//! the in-process recorder's flag markers ([`crate::Marker::FlagRead`] and
//! [`crate::Marker::FlagWrite`]). The variable's value is not stored: traces hold
//! addresses and timings, never memory contents (privacy by default), and reading it
//! at the trap would cost a second access per hit.

use serde::{Deserialize, Serialize};

/// Which way a watched variable was accessed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataFlagAccess {
    /// The thread read it (and did not write it in the same instruction).
    Read,
    /// The thread wrote it (a read-modify-write counts as a write).
    Write,
}

impl DataFlagAccess {
    /// Wire code.
    pub fn code(self) -> u8 {
        match self {
            DataFlagAccess::Read => 0,
            DataFlagAccess::Write => 1,
        }
    }

    /// From the wire code; `None` for an unknown one.
    pub fn from_code(c: u8) -> Option<DataFlagAccess> {
        match c {
            0 => Some(DataFlagAccess::Read),
            1 => Some(DataFlagAccess::Write),
            _ => None,
        }
    }

    /// True for a write.
    pub fn is_write(self) -> bool {
        self == DataFlagAccess::Write
    }
}

impl std::fmt::Display for DataFlagAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DataFlagAccess::Read => "read",
            DataFlagAccess::Write => "write",
        })
    }
}
