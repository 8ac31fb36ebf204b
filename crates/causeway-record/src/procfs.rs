//! What the recorder reads from /proc: the process facts (`causeway_procfs`) and the
//! code ranges of a process's executable mappings for the BPF range table.
//!
//! Reads can fail at any time because processes exit; every function returns what it
//! could read and callers treat a missing answer as "unknown".

pub use causeway_procfs::process::{
    MAX_CMDLINE, alive, cmdline, comm, descendants, exe, exists, pids_named, ppid, threads,
};
pub use causeway_procfs::system::{block_devices, host_addresses, irq_names, link_mbps};

/// An executable mapping of a process (file code, JIT code, `[vdso]`).
pub type ExecMapping = causeway_procfs::Mapping;

/// Executable mappings of a process from `/proc/PID/maps`.
pub fn exec_mappings(tgid: u32) -> Vec<ExecMapping> {
    causeway_procfs::maps::read(tgid)
        .map(|m| m.into_iter().filter(|m| m.exec).collect())
        .unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_ranges_are_one_per_file_the_program_first() {
        let text = "\
55d0c000-55d0d000 r--p 00000000 fe:01 123 /usr/bin/prog
55d0d000-55d0f000 r-xp 00001000 fe:01 123 /usr/bin/prog
7f00000000-7f00020000 r-xp 00028000 fe:01 456 /usr/lib/x86_64-linux-gnu/libc.so.6
7f10000000-7f10001000 rwxp 00000000 00:00 0
7fff0000-7fff2000 r-xp 00000000 00:00 0 [vdso]
";
        let m: Vec<ExecMapping> = causeway_procfs::maps::parse(text)
            .into_iter()
            .filter(|m| m.exec)
            .collect();
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
    fn own_mappings_hold_the_program() {
        let me = std::process::id();
        let exe = exe(me).unwrap();
        assert!(exec_mappings(me).iter().any(|m| m.path == exe));
    }
}
