//! Starting `-- CMD` so that its very first instruction is already recorded: the
//! launcher shared with the live probes (`causeway_procfs::launch`).

pub use causeway_procfs::launch::{
    EXIT_NO_TRACE, KILL_GRACE, LaunchError, Launched, Stopped, exit_code,
};
