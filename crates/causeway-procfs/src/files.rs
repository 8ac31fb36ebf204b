//! The files a process maps, as this process can open them.
//!
//! `/proc/PID/maps` names files as the process sees them. A process in its own mount
//! namespace with its own root (a container) maps `/opt/app/lib/libc.so.6`, a path
//! that does not exist on the host or names another file there; the unwinder and the
//! symbolizer opened that path on the host and found nothing (bare addresses, stacks
//! cut short). The file itself stays reachable through `/proc/PID/root/…` while the
//! process lives, and through an open descriptor after that (the container may be
//! gone when the trace is written). So each mapped file is checked once: where the
//! host's file at that path is the one mapped (same device and inode), it is opened by
//! its path; otherwise it is opened through the process's root (or its `map_files`
//! entry) while the process lives, the descriptor is kept, and `/proc/self/fd/N`
//! stands for it. Files are keyed by device and inode, so two containers with
//! different files at the same path are never confused, and one file mapped by many
//! processes is opened once.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::MetadataExt;

/// Descriptors kept for files reachable only through their processes: at most this
/// many (each is one open file).
const MAX_KEPT: usize = 4096;

/// The files processes map, as paths this process can open.
#[derive(Debug, Default)]
pub struct ProcessFiles {
    /// By (device, inode): the path to open; a kept descriptor's `/proc/self/fd/N`.
    by_file: HashMap<(u64, u64), Option<String>>,
    /// By (process, path as it maps it): (device, inode).
    by_path: HashMap<(u32, String), (u64, u64)>,
    kept: Vec<File>,
}

impl ProcessFiles {
    /// Learn the file that process `tgid` maps at `m` (a file mapping), while it lives.
    /// Returns the path to open it by, if it can be opened.
    pub fn learn(&mut self, tgid: u32, m: &crate::Mapping) -> Option<String> {
        if !m.is_file() || m.inode == 0 {
            return None;
        }
        let key = (m.dev, m.inode);
        self.by_path.insert((tgid, m.path.clone()), key);
        if let Some(p) = self.by_file.get(&key) {
            return p.clone();
        }
        let open = self.open(tgid, m, key);
        self.by_file.insert(key, open.clone());
        open
    }

    /// The path to open for `path` as process `tgid` mapped it: learned before, else
    /// `path` itself.
    pub fn open_path<'a>(&'a self, tgid: u32, path: &'a str) -> &'a str {
        self.by_path
            .get(&(tgid, path.to_string()))
            .and_then(|k| self.by_file.get(k))
            .and_then(|p| p.as_deref())
            .unwrap_or(path)
    }

    /// Descriptors kept for files outside this process's view.
    pub fn kept(&self) -> usize {
        self.kept.len()
    }

    fn open(&mut self, tgid: u32, m: &crate::Mapping, key: (u64, u64)) -> Option<String> {
        let same = |md: &std::fs::Metadata| (md.dev(), md.ino()) == key;
        if std::fs::metadata(&m.path).is_ok_and(|md| same(&md)) {
            return Some(m.path.clone());
        }
        if self.kept.len() >= MAX_KEPT {
            return None;
        }
        let file = through_process(tgid, m)?;
        use std::os::fd::AsRawFd;
        let path = format!("/proc/self/fd/{}", file.as_raw_fd());
        self.kept.push(file);
        Some(path)
    }
}

/// The paths that may reach the file process `tgid` maps at `m` from here: through
/// the process's root, then its `map_files` entry.
fn through_paths(tgid: u32, m: &crate::Mapping) -> [String; 2] {
    [
        format!("/proc/{tgid}/root{}", m.path),
        format!("/proc/{tgid}/map_files/{:x}-{:x}", m.start, m.end),
    ]
}

/// The file process `tgid` maps at `m`, opened through the process and checked to be
/// that file (device and inode).
fn through_process(tgid: u32, m: &crate::Mapping) -> Option<File> {
    through_paths(tgid, m)
        .into_iter()
        .filter_map(|p| File::open(p).ok())
        .find(|f| {
            f.metadata()
                .is_ok_and(|md| (md.dev(), md.ino()) == (m.dev, m.inode))
        })
}

/// A path to open the file process `tgid` maps at `m` by, for a reader that opens it
/// now, while the process lives: the path itself where the host's file there is the
/// one mapped, else a path through the process (a container's file).
pub fn path_now(tgid: u32, m: &crate::Mapping) -> Option<std::path::PathBuf> {
    let [root, map] = through_paths(tgid, m);
    [m.path.clone(), root, map]
        .into_iter()
        .map(std::path::PathBuf::from)
        .find(|p| std::fs::metadata(p).is_ok_and(|md| (md.dev(), md.ino()) == (m.dev, m.inode)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own_mapping(path: &str) -> crate::Mapping {
        crate::maps::read(std::process::id())
            .expect("own maps")
            .into_iter()
            .find(|m| m.path == path)
            .expect("a mapping of the test binary")
    }

    #[test]
    fn a_file_seen_at_its_path_is_opened_by_it_and_another_through_the_process() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let exe = exe.to_str().unwrap();
        let me = std::process::id();
        let mut f = ProcessFiles::default();
        let m = own_mapping(exe);
        assert_eq!(f.learn(me, &m).as_deref(), Some(exe));
        assert_eq!(f.open_path(me, exe), exe);
        assert_eq!(f.kept(), 0);
        // The same file as a container would name it: a path absent here.
        let mut moved = m.clone();
        moved.path = "/opt/app/bin/not-on-this-host".into();
        let other = 1; // the same file mapped by another process: keyed by file
        let open = f.learn(other, &moved).expect("found by device and inode");
        assert_eq!(open, exe, "one file, opened once");
        // A file not at its path here: opened through the process and kept.
        let mut g = ProcessFiles::default();
        let open = g
            .learn(me, &moved)
            .expect("through /proc/PID/root or map_files");
        assert!(open.starts_with("/proc/self/fd/"), "{open}");
        assert_eq!(g.kept(), 1);
        let a = std::fs::metadata(&open).unwrap();
        assert_eq!((a.dev(), a.ino()), (m.dev, m.inode));
        assert_eq!(g.open_path(me, &moved.path), open);
        // Opened now, without keeping a descriptor: through the process's root.
        let now = path_now(me, &moved).expect("reachable through the process");
        assert!(now.starts_with("/proc/"), "{now:?}");
        assert_eq!(path_now(me, &m).as_deref(), Some(std::path::Path::new(exe)));
        // A path it never learned is itself.
        assert_eq!(g.open_path(me, "/usr/lib/x"), "/usr/lib/x");
    }
}
