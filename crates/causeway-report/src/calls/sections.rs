//! Which parts of the calls result a report shows.

use causeway_format::DurationNs;

/// Which parts of the result to show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallsSections {
    /// The chains list.
    pub chains: bool,
    /// The top functions list.
    pub top: bool,
    /// Per-thread call trees, without calls shorter than this.
    pub tree: Option<DurationNs>,
    /// The signature, as the user wrote it, if one was searched.
    pub signature: Option<String>,
}

impl Default for CallsSections {
    fn default() -> CallsSections {
        CallsSections {
            chains: true,
            top: true,
            tree: None,
            signature: None,
        }
    }
}
