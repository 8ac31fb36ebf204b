//! A recording never replaces an earlier trace silently: a regular file already at an
//! output path is kept as `PATH.old` (replacing an older `.old`), perf's habit. Called
//! when the finished trace is renamed onto the path ([`crate::Pending::commit`]), so a
//! recording that fails to start, or is killed, leaves the old trace where it was.

use std::io;
use std::path::{Path, PathBuf};

/// The name the file at `path` is kept under: `PATH.old`.
pub fn old_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".old");
    PathBuf::from(name)
}

/// Move a regular file at `path` to `PATH.old` and return that name. Nothing there, or
/// something that is not a regular file (a device such as `/dev/null`, a FIFO, a
/// directory), is left alone: `None`. A symbolic link to a regular file is renamed
/// itself, so the file it points to is not touched either.
pub fn keep(path: &Path) -> io::Result<Option<PathBuf>> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {
            let old = old_path(path);
            std::fs::rename(path, &old)?;
            Ok(Some(old))
        }
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_kept_replacing_an_older_copy() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.cwt");
        std::fs::write(&p, b"first").unwrap();
        assert_eq!(keep(&p).unwrap(), Some(dir.path().join("t.cwt.old")));
        assert!(!p.exists());
        std::fs::write(&p, b"second").unwrap();
        keep(&p).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("t.cwt.old")).unwrap(),
            b"second"
        );
    }

    #[test]
    fn missing_files_devices_and_directories_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(keep(&dir.path().join("none.cwt")).unwrap(), None);
        assert_eq!(keep(Path::new("/dev/null")).unwrap(), None);
        assert_eq!(keep(dir.path()).unwrap(), None);
        assert!(dir.path().exists());
    }

    #[test]
    fn a_link_is_renamed_not_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.cwt");
        std::fs::write(&target, b"trace").unwrap();
        let link = dir.path().join("link.cwt");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let old = keep(&link).unwrap().unwrap();
        assert_eq!(std::fs::read(&old).unwrap(), b"trace");
        assert_eq!(std::fs::read(&target).unwrap(), b"trace");
        assert!(!link.exists());
    }
}
