//! Facts about a process and its threads: names, command line, executable, parent,
//! threads, liveness.

use std::path::Path;

/// Thread name.
pub fn comm(tgid: u32, tid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{tgid}/task/{tid}/comm"))
        .ok()
        .map(|s| s.trim_end_matches('\n').to_string())
}

/// Longest command line kept (bytes): long enough for a server's status line, short
/// enough that a program passing a megabyte of arguments does not bloat the trace.
pub const MAX_CMDLINE: usize = 4096;

/// Command line with arguments joined by spaces (as `ps -o args` shows it), cut to
/// [`MAX_CMDLINE`] bytes.
pub fn cmdline(tgid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{tgid}/cmdline")).ok()?;
    let s: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    Some(cap(s.join(" "), MAX_CMDLINE))
}

/// Cut a string to at most `max` bytes at a character boundary.
fn cap(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// Path of the executable.
pub fn exe(tgid: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{tgid}/exe"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// Parent process.
pub fn ppid(tgid: u32) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{tgid}/stat")).ok()?;
    // The name field may contain spaces and parentheses: parse after the last ')'.
    let rest = &s[s.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Every process below `root` in the process tree (children, their children, ...),
/// from one scan of /proc. Processes that left the tree (daemons that forked twice and
/// were adopted elsewhere) are not found.
pub fn descendants(root: u32) -> Vec<u32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parent_of: Vec<(u32, u32)> = rd
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| Some((p, ppid(p)?)))
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parent_of
                .iter()
                .filter(|&&(p, pp)| pp == parent && p != root)
                .map(|&(p, _)| p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// Threads of a process.
pub fn threads(tgid: u32) -> Vec<u32> {
    let Ok(rd) = std::fs::read_dir(format!("/proc/{tgid}/task")) else {
        return Vec::new();
    };
    let mut v: Vec<u32> = rd
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    v.sort_unstable();
    v
}

/// Does the process exist?
pub fn exists(tgid: u32) -> bool {
    Path::new(&format!("/proc/{tgid}")).exists()
}

/// Is the process still running (it exists and is not a zombie waiting to be reaped)?
pub fn alive(tgid: u32) -> bool {
    let Ok(s) = std::fs::read_to_string(format!("/proc/{tgid}/stat")) else {
        return false;
    };
    let state = s
        .rfind(')')
        .and_then(|i| s[i + 1..].split_whitespace().next());
    !matches!(state, Some("Z") | Some("X") | None)
}

/// Processes whose name is `comm`.
pub fn pids_named(comm: &str) -> Vec<u32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| self::comm(p, p).as_deref() == Some(comm))
        .collect()
}

/// The PID process `tgid` has in its innermost PID namespace (the last `NSpid` of its
/// status): the PID a containerized program sees as its own and names its files by.
pub fn ns_pid(tgid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tgid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("NSpid:"))?
        .split_whitespace()
        .last()?
        .parse()
        .ok()
}

/// The calling thread's CPU time and the time it waited runnable for a CPU, in
/// nanoseconds (`/proc/thread-self/schedstat`); `None` without schedstats.
pub fn own_thread_sched() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut f = text.split_whitespace().map(|w| w.parse::<u64>().ok());
    Some((f.next()??, f.next()??))
}

/// A thread's time on CPU and its time runnable, waiting for a CPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SchedTime {
    /// On CPU.
    pub ran: std::time::Duration,
    /// Runnable, waiting for a CPU.
    pub waited: std::time::Duration,
}

impl SchedTime {
    /// The calling thread's times since `base` (what [`own_thread_sched`] read at the
    /// start), read now.
    pub fn since(base: Option<(u64, u64)>) -> Option<SchedTime> {
        let (b, now) = (base?, own_thread_sched()?);
        Some(SchedTime {
            ran: std::time::Duration::from_nanos(now.0.saturating_sub(b.0)),
            waited: std::time::Duration::from_nanos(now.1.saturating_sub(b.1)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_readable() {
        let me = std::process::id();
        // Our own /proc shows our innermost PID: the one getpid() returns.
        assert_eq!(ns_pid(me), Some(me));
        assert!(exists(me) && alive(me));
        assert!(!threads(me).is_empty());
        assert!(exe(me).is_some());
        assert!(cmdline(me).is_some_and(|c| !c.is_empty()));
        assert!(comm(me, me).is_some());
    }

    #[test]
    fn command_lines_are_cut_at_a_character_boundary() {
        assert_eq!(cap("abc".into(), 10), "abc");
        let c = cap("é".repeat(100), 51); // two bytes each
        assert_eq!(c.len(), 50);
        assert!(c.chars().all(|ch| ch == 'é'));
    }
}
