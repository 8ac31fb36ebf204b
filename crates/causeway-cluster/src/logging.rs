//! The cluster libraries' own log lines. Ballista logs through the `log` facade, which
//! drops every line until a program installs a logger: `causeway cluster` prints its
//! own lines only, and Ballista's (registrations, tasks received, failures it
//! retries) when asked with `-v`, as a user of any server would expect.

use log::{LevelFilter, Log, Metadata, Record};

/// Lines on standard error, `LEVEL target: message`.
struct Stderr;

impl Log for Stderr {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.level() <= log::max_level()
    }

    fn log(&self, r: &Record<'_>) {
        if self.enabled(r.metadata()) {
            eprintln!("{} {}: {}", r.level(), r.target(), r.args());
        }
    }

    fn flush(&self) {}
}

static STDERR: Stderr = Stderr;

/// Show the libraries' log lines: none at `verbosity` 0, errors to informational ones
/// at 1, debug ones too at 2 or more. Process-wide; a second call changes the level only.
pub fn init(verbosity: u8) {
    let level = match verbosity {
        0 => LevelFilter::Off,
        1 => LevelFilter::Info,
        _ => LevelFilter::Debug,
    };
    // Fails only when a logger is already installed: the level still applies to it.
    let _ = log::set_logger(&STDERR);
    log::set_max_level(level);
}
