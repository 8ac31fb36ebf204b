//! How a caller steers a live measurement, and the process being measured.

use causeway_probe::launch::{KILL_GRACE, Launched};

/// Requests from outside a running measurement (a command line maps Ctrl-C and
/// SIGTERM to a stop and SIGUSR1 to a status request).
pub trait Control {
    /// A stop was asked for: end the current phase with what was measured.
    fn stop_requested(&self) -> bool;
    /// A status was asked for since the last call (the request is taken).
    fn take_status_request(&self) -> bool;
}

/// The process being probed: one that was running already, or a command started
/// stopped before its `exec` and let go once the probes were in place.
pub enum Probed {
    /// A running process, by id.
    Running(u32),
    /// A command started for the measurement; ended when the measurement ends.
    Started(Launched),
}

impl Probed {
    /// Let a started command run (its probes are attached), or take a running one.
    pub fn go(tgid: u32, launched: Option<Launched>) -> Probed {
        match launched {
            Some(mut s) => {
                s.release();
                Probed::Started(s)
            }
            None => Probed::Running(tgid),
        }
    }

    /// True while the process runs.
    pub fn alive(&mut self) -> bool {
        match self {
            Probed::Running(pid) => std::path::Path::new(&format!("/proc/{pid}")).exists(),
            Probed::Started(s) => s.poll_exit().is_none(),
        }
    }

    /// The measurement is over: a command started for it is ended (SIGTERM, then
    /// SIGKILL after a grace period); a running process is left alone.
    pub fn finish(&mut self) {
        if let Probed::Started(s) = self {
            s.terminate(KILL_GRACE);
        }
    }
}
