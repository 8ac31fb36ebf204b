//! Signal numbers and the kernel's verdict on a generated signal: the payload types of
//! the signal and timer events ([`crate::event::EventKind::SignalGenerate`] and the
//! three after it), added in format 1.3. Their byte layout is in `codec_signals`.

use serde::{Deserialize, Serialize};

/// A signal number (x86-64 Linux numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Signal(pub u8);

impl Signal {
    /// `SIGKILL`.
    pub const KILL: Signal = Signal(9);
    /// `SIGCONT`: continue a stopped process.
    pub const CONT: Signal = Signal(18);
    /// `SIGSTOP`: stop, cannot be caught.
    pub const STOP: Signal = Signal(19);
    /// `SIGTSTP`: stop from the terminal.
    pub const TSTP: Signal = Signal(20);
    /// `SIGTTIN`: stop on terminal input in the background.
    pub const TTIN: Signal = Signal(21);
    /// `SIGTTOU`: stop on terminal output in the background.
    pub const TTOU: Signal = Signal(22);

    const NAMES: [&'static str; 32] = [
        "0",
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];

    /// True for the signals whose default action stops the process.
    pub fn is_stop(self) -> bool {
        matches!(self, Self::STOP | Self::TSTP | Self::TTIN | Self::TTOU)
    }

    /// The name (`SIGSTOP`), or `SIGRTMIN+n` for real-time signals.
    pub fn name(self) -> String {
        match Self::NAMES.get(self.0 as usize) {
            Some(n) => (*n).to_string(),
            None => format!("SIGRTMIN+{}", self.0.saturating_sub(34)),
        }
    }
}

/// What the kernel did with a generated signal (`signal_generate`'s `result`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SignalResult(pub u8);

impl SignalResult {
    /// Queued for delivery.
    pub const DELIVERED: SignalResult = SignalResult(0);
    /// Ignored (its action is to ignore it, or the target is exiting).
    pub const IGNORED: SignalResult = SignalResult(1);
    /// Already pending: merged with the earlier one.
    pub const ALREADY_PENDING: SignalResult = SignalResult(2);
    /// The real-time signal queue was full.
    pub const OVERFLOW_FAIL: SignalResult = SignalResult(3);
    /// Delivered without its extra information (queue full).
    pub const LOSE_INFO: SignalResult = SignalResult(4);

    /// True if the signal will reach its target.
    pub fn reaches(self) -> bool {
        matches!(
            self,
            Self::DELIVERED | Self::LOSE_INFO | Self::ALREADY_PENDING
        )
    }

    /// A word for reports.
    pub fn name(self) -> &'static str {
        match self.0 {
            0 => "delivered",
            1 => "ignored",
            2 => "already pending",
            3 => "overflow",
            4 => "delivered without info",
            _ => "?",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_signals_and_names() {
        assert!(Signal::STOP.is_stop() && Signal::TSTP.is_stop());
        assert!(!Signal::CONT.is_stop() && !Signal::KILL.is_stop());
        assert_eq!(Signal::STOP.name(), "SIGSTOP");
        assert_eq!(Signal(14).name(), "SIGALRM");
        assert_eq!(Signal(36).name(), "SIGRTMIN+2");
        assert!(SignalResult::DELIVERED.reaches());
        assert!(!SignalResult::IGNORED.reaches());
    }
}
