//! Syscall names and numbers (x86-64) for `--syscalls`, and the default set.
//!
//! The recorder records a syscall's entry and exit only for the numbers chosen here;
//! for those whose first argument is a file descriptor it also records the identity of
//! the kernel object behind it (pipe, socket, eventfd), so an analysis can pair the
//! write that unblocks a read with that read.

use crate::error::ConfigError;

/// One syscall the recorder knows by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyscallInfo {
    /// Name, as in `man 2`.
    pub name: &'static str,
    /// x86-64 number.
    pub nr: u32,
    /// The first argument is a file descriptor.
    pub fd_arg: bool,
    /// In the default set: it can block.
    pub blocking: bool,
}

/// The syscalls the recorder knows more of than their name, as (name, the first
/// argument is a file descriptor, can block); their numbers come from the trace
/// format's table (`causeway_format::syscalls`), the one list of x86-64 numbers. The
/// blocking ones form the default set.
const TRAITS: &[(&str, bool, bool)] = &[
    ("read", true, true),
    ("write", true, true),
    ("open", false, false),
    ("close", true, false),
    ("poll", false, true),
    ("mmap", false, false),
    ("pread64", true, true),
    ("pwrite64", true, true),
    ("readv", true, true),
    ("writev", true, true),
    ("pipe", false, true),
    ("select", false, true),
    ("sched_yield", false, false),
    ("msync", false, true),
    ("nanosleep", false, true),
    ("sendfile", true, true),
    ("connect", true, true),
    ("accept", true, true),
    ("sendto", true, true),
    ("recvfrom", true, true),
    ("sendmsg", true, true),
    ("recvmsg", true, true),
    ("wait4", false, true),
    ("flock", true, true),
    ("fsync", true, true),
    ("fdatasync", true, true),
    ("futex", false, true),
    ("epoll_wait", true, true),
    ("clock_nanosleep", false, true),
    ("waitid", false, true),
    ("pselect6", false, true),
    ("ppoll", false, true),
    ("sync_file_range", true, true),
    ("epoll_pwait", true, true),
    ("eventfd", false, true),
    ("accept4", true, true),
    ("eventfd2", false, true),
    ("pipe2", false, true),
    ("preadv", true, true),
    ("pwritev", true, true),
    ("recvmmsg", true, true),
    ("sendmmsg", true, true),
    ("io_uring_enter", true, true),
    ("epoll_pwait2", true, true),
];

/// Known syscalls, in the order of [`TRAITS`].
pub fn known() -> &'static [SyscallInfo] {
    static KNOWN: std::sync::OnceLock<Vec<SyscallInfo>> = std::sync::OnceLock::new();
    KNOWN.get_or_init(|| {
        TRAITS
            .iter()
            .filter_map(|&(name, fd_arg, blocking)| {
                Some(SyscallInfo {
                    name,
                    nr: causeway_format::syscalls::syscall_nr(name)?,
                    fd_arg,
                    blocking,
                })
            })
            .collect()
    })
}

/// The syscall with this name.
pub fn by_name(name: &str) -> Option<&'static SyscallInfo> {
    known().iter().find(|s| s.name == name)
}

/// The syscall with this number.
pub fn by_nr(nr: u32) -> Option<&'static SyscallInfo> {
    known().iter().find(|s| s.nr == nr)
}

/// Name of a syscall number, or `syscall_N`.
pub fn name_of(nr: u32) -> String {
    by_nr(nr)
        .map(|s| s.name.to_string())
        .unwrap_or_else(|| format!("syscall_{nr}"))
}

/// The default set: every known syscall that can block.
pub fn default_set() -> Vec<SyscallInfo> {
    known().iter().filter(|s| s.blocking).copied().collect()
}

/// Parse a comma-separated list of names or numbers; `default` expands to the
/// default set and `none` to nothing.
pub fn parse_list(list: &str) -> Result<Vec<SyscallInfo>, ConfigError> {
    let mut out: Vec<SyscallInfo> = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item {
            "default" => out.extend(default_set()),
            "none" => {}
            _ => {
                let info = if let Ok(nr) = item.parse::<u32>() {
                    if nr >= 512 {
                        return Err(ConfigError::SyscallNumber(nr));
                    }
                    by_nr(nr).copied().unwrap_or(SyscallInfo {
                        name: "",
                        nr,
                        fd_arg: false,
                        blocking: false,
                    })
                } else {
                    *by_name(item).ok_or_else(|| ConfigError::Syscall(item.to_string()))?
                };
                out.push(info);
            }
        }
    }
    out.sort_by_key(|s| s.nr);
    out.dedup_by_key(|s| s.nr);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_default_is_the_blocking_set() {
        let d = parse_list("default").unwrap();
        assert!(d.iter().any(|s| s.name == "futex"));
        assert!(d.iter().any(|s| s.name == "fsync" && s.fd_arg));
        assert!(!d.iter().any(|s| s.name == "mmap"));
        let l = parse_list("read, 202,read").unwrap();
        assert_eq!(l.iter().map(|s| s.nr).collect::<Vec<_>>(), vec![0, 202]);
        assert!(
            parse_list("nosuch")
                .unwrap_err()
                .to_string()
                .contains("nosuch")
        );
        assert!(parse_list("600").is_err());
        assert!(parse_list("none").unwrap().is_empty());
    }

    #[test]
    fn every_syscall_the_recorder_knows_has_its_number() {
        assert_eq!(
            known().len(),
            TRAITS.len(),
            "a name the format's table lacks"
        );
        assert_eq!(by_name("fdatasync").map(|s| s.nr), Some(75));
        assert_eq!(by_name("epoll_pwait2").map(|s| s.nr), Some(441));
    }
}
