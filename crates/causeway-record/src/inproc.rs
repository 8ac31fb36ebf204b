//! One moment in both recorders: when a flight recorder's own trigger condition fires,
//! the recorded processes that run libcauseway (the in-process call tracer) are asked
//! to dump their call buffers too, with the dump signal each of them listens for.
//!
//! Only condition dumps ask. A dump asked for by a signal (`causeway trigger`, or a
//! libcauseway dump with `kernel` in `CAUSEWAY_TRIGGER`) came from whoever already
//! decided which recorders dump; asking back would make a second, echoing dump.

use std::path::Path;

/// libcauseway's dump signal when `CAUSEWAY_TRIGGER` names none.
const DEFAULT_SIGNAL: i32 = libc::SIGUSR2;

/// One past the highest signal number on Linux (glibc's `NSIG`), libcauseway's bound.
const NSIG: i32 = 65;

/// The dump signal a libcauseway process listens for, from its start-up environment
/// (`CAUSEWAY_TRIGGER`'s `signal=USR1|USR2|PROF|N|off`, the last item winning; `none`
/// turns every trigger off). `None`: it listens for no signal.
pub fn dump_signal(trigger_env: Option<&str>) -> Option<i32> {
    let mut sig = Some(DEFAULT_SIGNAL);
    for item in trigger_env.unwrap_or("").split(',').map(str::trim) {
        if item == "none" {
            sig = None;
        } else if let Some(v) = item.strip_prefix("signal=") {
            sig = parse_signal(v);
        }
    }
    sig
}

/// One `signal=` value, read as libcauseway reads it: an optional `SIG`, then `USR1`,
/// `USR2`, `PROF`, `off` or a number; anything else means the default.
fn parse_signal(v: &str) -> Option<i32> {
    let v = v.strip_prefix("SIG").unwrap_or(v);
    let named = [
        ("USR1", Some(libc::SIGUSR1)),
        ("USR2", Some(libc::SIGUSR2)),
        ("PROF", Some(libc::SIGPROF)),
        ("off", None),
    ];
    if let Some((_, sig)) = named.iter().find(|(n, _)| v.starts_with(n)) {
        return *sig;
    }
    let digits: String = v.chars().take_while(char::is_ascii_digit).collect();
    match digits.parse::<i32>() {
        Ok(n) if n > 0 && n < NSIG => Some(n),
        _ => Some(DEFAULT_SIGNAL),
    }
}

/// Does this process have the shared libcauseway mapped (preloaded or linked)? A
/// program linked with the static library cannot be told apart from outside and is
/// not asked.
fn runs_libcauseway(proc_dir: &Path) -> bool {
    std::fs::read_to_string(proc_dir.join("maps"))
        .is_ok_and(|m| m.lines().any(|l| l.ends_with("/libcauseway.so")))
}

/// `CAUSEWAY_TRIGGER` from a process's start-up environment.
fn trigger_env(proc_dir: &Path) -> Option<String> {
    let raw = std::fs::read(proc_dir.join("environ")).ok()?;
    raw.split(|&b| b == 0)
        .find_map(|kv| kv.strip_prefix(b"CAUSEWAY_TRIGGER="))
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

/// Every process on the machine (`/proc`), for a dump asked of all of them.
pub fn all_processes() -> Vec<u32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .collect()
}

/// Ask each of `pids` that runs libcauseway and listens for a dump signal to dump.
/// Returns the processes signalled.
pub fn ask_dumps(pids: impl IntoIterator<Item = u32>) -> Vec<u32> {
    let me = std::process::id();
    let mut asked = Vec::new();
    for pid in pids.into_iter().filter(|&p| p != me) {
        let dir = Path::new("/proc").join(pid.to_string());
        if !runs_libcauseway(&dir) {
            continue;
        }
        let Some(sig) = dump_signal(trigger_env(&dir).as_deref()) else {
            continue;
        };
        // SAFETY: kill only sends a signal; the process was checked to handle it.
        if unsafe { libc::kill(pid as i32, sig) } == 0 {
            asked.push(pid);
        }
    }
    asked
}

#[cfg(test)]
mod tests {
    use super::dump_signal;

    #[test]
    fn the_dump_signal_follows_causeway_trigger() {
        assert_eq!(dump_signal(None), Some(libc::SIGUSR2));
        assert_eq!(dump_signal(Some("stall=200ms")), Some(libc::SIGUSR2));
        assert_eq!(dump_signal(Some("signal=USR1,kernel")), Some(libc::SIGUSR1));
        assert_eq!(dump_signal(Some("signal=PROF")), Some(libc::SIGPROF));
        assert_eq!(dump_signal(Some("signal=34")), Some(34));
        assert_eq!(dump_signal(Some("signal=off,stall=1s")), None);
        assert_eq!(dump_signal(Some("none")), None);
        assert_eq!(dump_signal(Some("signal=SIGUSR1")), Some(libc::SIGUSR1));
        // As libcauseway reads it: what it cannot read is the default signal.
        assert_eq!(dump_signal(Some("signal=bogus")), Some(libc::SIGUSR2));
        assert_eq!(dump_signal(Some("none,signal=USR1")), Some(libc::SIGUSR1));
    }
}
