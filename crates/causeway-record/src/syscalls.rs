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

macro_rules! sc {
    ($name:literal, $nr:literal, $fd:literal, $blk:literal) => {
        SyscallInfo {
            name: $name,
            nr: $nr,
            fd_arg: $fd,
            blocking: $blk,
        }
    };
}

/// Known syscalls. The blocking ones form the default set.
pub const SYSCALLS: &[SyscallInfo] = &[
    sc!("read", 0, true, true),
    sc!("write", 1, true, true),
    sc!("open", 2, false, false),
    sc!("close", 3, true, false),
    sc!("poll", 7, false, true),
    sc!("mmap", 9, false, false),
    sc!("pread64", 17, true, true),
    sc!("pwrite64", 18, true, true),
    sc!("readv", 19, true, true),
    sc!("writev", 20, true, true),
    sc!("pipe", 22, false, true),
    sc!("select", 23, false, true),
    sc!("sched_yield", 24, false, false),
    sc!("msync", 26, false, true),
    sc!("nanosleep", 35, false, true),
    sc!("sendfile", 40, true, true),
    sc!("connect", 42, true, true),
    sc!("accept", 43, true, true),
    sc!("sendto", 44, true, true),
    sc!("recvfrom", 45, true, true),
    sc!("sendmsg", 46, true, true),
    sc!("recvmsg", 47, true, true),
    sc!("wait4", 61, false, true),
    sc!("flock", 73, true, true),
    sc!("fsync", 74, true, true),
    sc!("fdatasync", 75, true, true),
    sc!("futex", 202, false, true),
    sc!("epoll_wait", 232, true, true),
    sc!("clock_nanosleep", 230, false, true),
    sc!("waitid", 247, false, true),
    sc!("pselect6", 270, false, true),
    sc!("ppoll", 271, false, true),
    sc!("sync_file_range", 277, true, true),
    sc!("epoll_pwait", 281, true, true),
    sc!("eventfd", 284, false, true),
    sc!("accept4", 288, true, true),
    sc!("eventfd2", 290, false, true),
    sc!("pipe2", 293, false, true),
    sc!("preadv", 295, true, true),
    sc!("pwritev", 296, true, true),
    sc!("recvmmsg", 299, true, true),
    sc!("sendmmsg", 307, true, true),
    sc!("io_uring_enter", 426, true, true),
    sc!("epoll_pwait2", 441, true, true),
];

/// The syscall with this name.
pub fn by_name(name: &str) -> Option<&'static SyscallInfo> {
    SYSCALLS.iter().find(|s| s.name == name)
}

/// The syscall with this number.
pub fn by_nr(nr: u32) -> Option<&'static SyscallInfo> {
    SYSCALLS.iter().find(|s| s.nr == nr)
}

/// Name of a syscall number, or `syscall_N`.
pub fn name_of(nr: u32) -> String {
    by_nr(nr)
        .map(|s| s.name.to_string())
        .unwrap_or_else(|| format!("syscall_{nr}"))
}

/// The default set: every known syscall that can block.
pub fn default_set() -> Vec<SyscallInfo> {
    SYSCALLS.iter().filter(|s| s.blocking).copied().collect()
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
}
