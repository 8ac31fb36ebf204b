//! What the recorder reads from /proc: names, command lines, executable mappings.
//!
//! Reads can fail at any time because processes exit; every function returns what it
//! could read and callers treat a missing answer as "unknown".

use std::path::Path;

/// An executable file mapping of a process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecMapping {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// File offset of `start`.
    pub offset: u64,
    /// Mapped file path (or a pseudo name such as `[vdso]`).
    pub path: String,
}

/// Executable mappings of a process from `/proc/PID/maps`.
pub fn exec_mappings(tgid: u32) -> Vec<ExecMapping> {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{tgid}/maps")) else {
        return Vec::new();
    };
    parse_maps(&text)
}

/// Parse the text of a `maps` file, keeping executable mappings.
pub fn parse_maps(text: &str) -> Vec<ExecMapping> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms), Some(off)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if !perms.contains('x') {
            continue;
        }
        let _dev = f.next();
        let _inode = f.next();
        let path: String = f.collect::<Vec<_>>().join(" ");
        let Some((s, e)) = range.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end), Ok(offset)) = (
            u64::from_str_radix(s, 16),
            u64::from_str_radix(e, 16),
            u64::from_str_radix(off, 16),
        ) else {
            continue;
        };
        out.push(ExecMapping {
            start,
            end,
            offset,
            path,
        });
    }
    out
}

/// Code ranges for the BPF range table: one per mapped file, the main executable
/// (`exe`) first. Anonymous executable memory (JIT code) is left out.
pub fn code_ranges(maps: &[ExecMapping], exe: Option<&str>) -> Vec<(u64, u64)> {
    let mut files: Vec<(&str, u64, u64)> = Vec::new();
    for m in maps {
        if m.path.is_empty() || m.path.starts_with('[') {
            continue;
        }
        match files.iter_mut().find(|f| f.0 == m.path) {
            Some(f) => {
                f.1 = f.1.min(m.start);
                f.2 = f.2.max(m.end);
            }
            None => files.push((&m.path, m.start, m.end)),
        }
    }
    if let Some(exe) = exe
        && let Some(i) = files.iter().position(|f| f.0 == exe)
    {
        let main = files.remove(i);
        files.insert(0, main);
    } else {
        // Slot 0 is the program's; the BPF side reads its range from the mm anyway.
        files.insert(0, ("", 0, 0));
    }
    files.into_iter().map(|f| (f.1, f.2)).collect()
}

/// Thread name.
pub fn comm(tgid: u32, tid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{tgid}/task/{tid}/comm"))
        .ok()
        .map(|s| s.trim_end_matches('\n').to_string())
}

/// Block device names by `major:minor` (`254:0` -> `vda`), from `/sys/dev/block`.
pub fn block_devices() -> std::collections::BTreeMap<String, String> {
    let Ok(dir) = std::fs::read_dir("/sys/dev/block") else {
        return Default::default();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| {
            let target = std::fs::read_link(e.path()).ok()?;
            let name = target.file_name()?.to_string_lossy().into_owned();
            Some((e.file_name().to_string_lossy().into_owned(), name))
        })
        .collect()
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

/// Link speed of a network interface in Mbit/s, if it has one (virtual devices such as
/// `lo` do not).
pub fn link_mbps(dev: &str) -> Option<u64> {
    if dev.contains('/') || dev.contains("..") {
        return None;
    }
    let s = std::fs::read_to_string(format!("/sys/class/net/{dev}/speed")).ok()?;
    s.trim()
        .parse::<i64>()
        .ok()
        .filter(|&v| v > 0)
        .map(|v| v as u64)
}

/// Names of IRQ handlers, from `/sys/kernel/irq/N/actions`.
pub fn irq_names() -> Vec<(u32, String)> {
    let Ok(rd) = std::fs::read_dir("/sys/kernel/irq") else {
        return Vec::new();
    };
    rd.filter_map(|e| {
        let e = e.ok()?;
        let irq: u32 = e.file_name().to_str()?.parse().ok()?;
        let name = std::fs::read_to_string(e.path().join("actions")).ok()?;
        let name = name.trim();
        (!name.is_empty()).then(|| (irq, name.to_string()))
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_keep_executable_file_ranges() {
        let text = "\
55d0c000-55d0d000 r--p 00000000 fe:01 123 /usr/bin/prog
55d0d000-55d0f000 r-xp 00001000 fe:01 123 /usr/bin/prog
7f00000000-7f00020000 r-xp 00028000 fe:01 456 /usr/lib/x86_64-linux-gnu/libc.so.6
7f10000000-7f10001000 rwxp 00000000 00:00 0
7fff0000-7fff2000 r-xp 00000000 00:00 0 [vdso]
";
        let m = parse_maps(text);
        assert_eq!(m.len(), 4);
        assert_eq!(m[0].offset, 0x1000);
        let r = code_ranges(&m, Some("/usr/bin/prog"));
        assert_eq!(
            r,
            vec![(0x55d0d000, 0x55d0f000), (0x7f00000000, 0x7f00020000)]
        );
        let r = code_ranges(&m, None);
        assert_eq!(r[0], (0, 0));
    }

    #[test]
    fn own_process_is_readable() {
        let me = std::process::id();
        assert!(exists(me));
        assert!(!threads(me).is_empty());
        assert!(exe(me).is_some());
        assert!(
            exec_mappings(me)
                .iter()
                .any(|m| m.path.contains("libc") || m.path == exe(me).unwrap())
        );
    }
}

#[cfg(test)]
mod cap_tests {
    use super::cap;

    #[test]
    fn command_lines_are_cut_at_a_character_boundary() {
        assert_eq!(cap("abc".into(), 10), "abc");
        let c = cap("é".repeat(100), 51); // two bytes each
        assert_eq!(c.len(), 50);
        assert!(c.chars().all(|ch| ch == 'é'));
    }
}
