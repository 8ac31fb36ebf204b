//! `causeway watch`: a recording of one process plus the accesses of one variable
//! (Argus data flags) by hardware watchpoints.
//!
//! A data flag only explains something next to the scheduler's view of the threads
//! (who spun, who was busy, who wrote late), so `watch` writes a whole recording, as
//! `record` does, rather than a file of accesses to merge later; `record --watch`
//! is the same with `record`'s defaults. What `watch` adds to them: the syscall
//! group and `sched_yield`, without which `diagnose` cannot see a yield loop.

use crate::flags::WatchArgs;
use anyhow::{Result, bail};
use causeway_record::syscalls;
use causeway_record::watch::{WatchSpec, WatchTarget};

/// The call a yield loop makes.
const SCHED_YIELD: &str = "sched_yield";

/// Run `causeway watch`.
pub fn run(a: &WatchArgs) -> Result<u8> {
    let target = match (&a.symbol, a.addr, &a.record.watch) {
        (Some(s), None, None) => WatchTarget::Symbol(s.clone()),
        (None, Some(addr), None) => WatchTarget::Addr(addr),
        (None, None, Some(t)) => t.clone(),
        _ => bail!("say which variable to watch: --symbol NAME or --addr ADDR"),
    };
    let mut req = a.record.resolve(std::env::args().collect())?;
    req.watch = Some(WatchSpec {
        target,
        len: a.len.or(a.record.watch_len),
        via: a.via.unwrap_or(a.record.watch_via).into(),
    });
    req.config.events.syscall = true;
    if !req.config.syscalls.iter().any(|s| s.name == SCHED_YIELD) {
        let extra = syscalls::parse_list(SCHED_YIELD)?;
        req.config.syscalls.extend(extra);
    }
    crate::cmd::record::run_request(&a.record, req)
}
