//! Progress bars on stderr, shown only for work that takes over a second and only when
//! stderr is a terminal (so pipes and CI logs stay clean).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A progress bar that stays hidden for the first second.
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    shown: bool,
    enabled: bool,
}

impl Progress {
    /// A bar for `total` units of work described by `msg`.
    pub fn new(total: u64, msg: &'static str) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:40}] {percent}% ({eta} left)")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(msg);
        Progress {
            bar,
            started: Instant::now(),
            shown: false,
            enabled: std::io::stderr().is_terminal(),
        }
    }

    /// Set the amount of work done.
    pub fn set(&mut self, done: u64) {
        if self.enabled && !self.shown && self.started.elapsed() > Duration::from_secs(1) {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        self.bar.set_position(done);
    }

    /// Remove the bar.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
