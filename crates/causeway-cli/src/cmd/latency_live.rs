//! `causeway latency --func SYMBOL`: live function latency through uprobes.

use crate::flags::LatencyArgs;
use anyhow::{Result, bail};

/// Run live profiling.
pub fn run(_args: &LatencyArgs) -> Result<u8> {
    bail!("live profiling with --func is not built yet")
}
