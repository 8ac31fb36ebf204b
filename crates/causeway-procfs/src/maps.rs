//! `/proc/PID/maps`: a process's memory mappings.

use std::path::PathBuf;

/// One line of a `maps` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Readable.
    pub read: bool,
    /// Writable.
    pub write: bool,
    /// Executable.
    pub exec: bool,
    /// File offset of `start`.
    pub offset: u64,
    /// Device of the mapped file, as `stat`'s `st_dev` encodes it (0 for anonymous
    /// memory).
    pub dev: u64,
    /// Inode of the mapped file (0 for anonymous memory).
    pub inode: u64,
    /// The mapped file's path, a pseudo name (`[vdso]`, `[heap]`) or empty for
    /// anonymous memory. A path may contain spaces and end in ` (deleted)`.
    pub path: String,
}

impl Mapping {
    /// True for a mapping of a regular file (its path is absolute).
    pub fn is_file(&self) -> bool {
        self.path.starts_with('/')
    }

    /// True for executable code of a regular file (not JIT code, not `[vdso]`).
    pub fn is_exec_file(&self) -> bool {
        self.exec && self.is_file()
    }
}

/// Parse one line (`start-end perms offset dev inode [path]`); `None` if malformed.
pub fn parse_line(line: &str) -> Option<Mapping> {
    let mut f = line.split_whitespace();
    let (range, perms, off, dev, inode) = (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
    let (major, minor) = dev.split_once(':')?;
    let (s, e) = range.split_once('-')?;
    let p = perms.as_bytes();
    Some(Mapping {
        start: u64::from_str_radix(s, 16).ok()?,
        end: u64::from_str_radix(e, 16).ok()?,
        read: p.first() == Some(&b'r'),
        write: p.get(1) == Some(&b'w'),
        exec: p.get(2) == Some(&b'x'),
        offset: u64::from_str_radix(off, 16).ok()?,
        dev: libc::makedev(
            u32::from_str_radix(major, 16).ok()?,
            u32::from_str_radix(minor, 16).ok()?,
        ),
        inode: inode.parse().ok()?,
        path: f.collect::<Vec<_>>().join(" "),
    })
}

/// Parse the text of a `maps` file; malformed lines are skipped.
pub fn parse(text: &str) -> Vec<Mapping> {
    text.lines().filter_map(parse_line).collect()
}

/// The mappings of process `pid` as they are now.
pub fn read(pid: u32) -> std::io::Result<Vec<Mapping>> {
    Ok(parse(&std::fs::read_to_string(format!(
        "/proc/{pid}/maps"
    ))?))
}

/// The mappings of the calling process.
pub fn read_self() -> std::io::Result<Vec<Mapping>> {
    Ok(parse(&std::fs::read_to_string("/proc/self/maps")?))
}

/// The regular files among `maps`, each once, in map order (the executable first, as
/// the kernel maps it first).
pub fn mapped_files(maps: &[Mapping]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for m in maps.iter().filter(|m| m.is_file()) {
        let p = PathBuf::from(&m.path);
        if !files.contains(&p) {
            files.push(p);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
55d0c0a00000-55d0c0a02000 r--p 00000000 fe:01 1311 /usr/bin/my prog
55d0c0a02000-55d0c0a08000 r-xp 00002000 fe:01 1311 /usr/bin/my prog
55d0c0c00000-55d0c0c21000 rw-p 00000000 00:00 0 [heap]
7f00aa000000-7f00aa010000 rwxp 00000000 00:00 0
7f00ab028000-7f00ab1bd000 r-xp 00028000 fe:01 2048 /usr/lib/x86_64-linux-gnu/libc.so.6
7ffd5e3f0000-7ffd5e3f2000 r-xp 00000000 00:00 0 [vdso]
garbage line
";

    #[test]
    fn every_field_of_a_line_is_read() {
        let m = parse(TEXT);
        assert_eq!(m.len(), 6, "the malformed line is skipped");
        assert_eq!(
            m[1],
            Mapping {
                start: 0x55d0c0a02000,
                end: 0x55d0c0a08000,
                read: true,
                write: false,
                exec: true,
                offset: 0x2000,
                dev: libc::makedev(0xfe, 0x01),
                inode: 1311,
                path: "/usr/bin/my prog".into(),
            }
        );
        assert!(m[3].exec && m[3].path.is_empty() && !m[3].is_file());
    }

    #[test]
    fn executable_files_leave_out_jit_code_and_the_vdso() {
        let m = parse(TEXT);
        let code: Vec<&str> = m
            .iter()
            .filter(|m| m.is_exec_file())
            .map(|m| m.path.as_str())
            .collect();
        assert_eq!(
            code,
            ["/usr/bin/my prog", "/usr/lib/x86_64-linux-gnu/libc.so.6"]
        );
    }

    #[test]
    fn mapped_files_are_listed_once_in_map_order() {
        let files = mapped_files(&parse(TEXT));
        assert_eq!(
            files,
            [
                PathBuf::from("/usr/bin/my prog"),
                PathBuf::from("/usr/lib/x86_64-linux-gnu/libc.so.6")
            ]
        );
    }

    #[test]
    fn this_process_maps_its_own_executable() {
        let exe = std::env::current_exe().unwrap();
        let files = mapped_files(&read_self().unwrap());
        assert!(files.contains(&exe), "{files:?} lacks {exe:?}");
    }
}
