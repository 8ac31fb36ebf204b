//! Crash-safe output files: a recording is written to a temporary file beside its
//! output path and renamed onto it only when it finished cleanly.
//!
//! So a killed recorder (SIGKILL, out-of-memory, a crash) never leaves a half-written
//! file at the output path, and the trace that was there before stays where it was;
//! the temporary file (`PATH.partial-PID`) keeps every chunk made durable before the
//! kill and is what `causeway check` salvages. The overwrite rule of [`crate::previous`]
//! applies at the rename: the file at the path then becomes `PATH.old`.
//!
//! Two rules guard what is at the path. Only a causeway trace (or an empty file) is
//! ever replaced: any other file (`-o notes.txt` by mistake) is refused before
//! recording starts. And the path must still hold what it held when the recording
//! started: if another recording (or anything else) put a file there meanwhile, this
//! one is not renamed over it, fails with a message naming where it was kept, and so
//! two concurrent recordings to one path never both report success. The check and
//! the renames happen under an exclusive `flock` on the directory, which every
//! recorder finishing in that directory takes.
//!
//! Outputs that are not regular files (`/dev/null`, a FIFO) are written in place.
//!
//! It knows files and the trace's magic number, not what is written: the recorder
//! writes its trace (a streaming recording, a flight-recorder dump) into the file it is
//! given, and `causeway check` asks for the temporary files left behind. A job of its
//! own: how a finished file reaches its path is the same for a streaming recording and
//! every flight-recorder dump, has nothing of BPF, and is asked without recording.

pub mod previous;

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Why an output could not be started or put in place: what was being done (naming
/// the paths) and the error of the file system.
#[derive(Debug)]
pub struct OutputError {
    /// What failed, e.g. `creating PATH.partial-PID`, or why the path is refused.
    pub what: String,
    /// The file system's error.
    pub source: io::Error,
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.source)
    }
}

impl std::error::Error for OutputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// An [`OutputError`] of `what` (a closure for `map_err`).
fn io_err(what: String) -> impl FnOnce(io::Error) -> OutputError {
    move |source| OutputError { what, source }
}

/// What was at the output path when the recording started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Before {
    /// Nothing.
    Nothing,
    /// This regular file (device and inode).
    File(u64, u64),
}

/// An output being written: the file to write, and how it reaches its path.
#[derive(Debug)]
pub struct Pending {
    path: PathBuf,
    /// The temporary file, or `None` when writing in place (not a regular file).
    temp: Option<PathBuf>,
    before: Before,
}

/// Why an existing file at `path` must not be replaced, if so.
fn refuse_reason(path: &Path, m: &std::fs::Metadata) -> Option<String> {
    if m.is_dir() {
        return Some(format!("{} is a directory", path.display()));
    }
    if !m.is_file() || m.len() == 0 {
        return None;
    }
    let mut magic = [0u8; 8];
    let is_trace = File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == causeway_format::FILE_MAGIC);
    (!is_trace).then(|| {
        format!(
            "refusing to replace {}: it is not a causeway trace (remove it or choose another output path)",
            path.display()
        )
    })
}

/// Fail if the file at `path` is one a recording must not replace (see the module
/// doc). Called before the recording starts, and again when it is created.
pub fn check_replaceable(path: &Path) -> Result<(), OutputError> {
    match std::fs::metadata(path) {
        Ok(m) => match refuse_reason(path, &m) {
            Some(why) => Err(io_err(why)(io::Error::from(io::ErrorKind::AlreadyExists))),
            None => Ok(()),
        },
        Err(_) => Ok(()),
    }
}

/// The temporary file a recording to `path` by this process writes.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".partial-{}", std::process::id()));
    PathBuf::from(name)
}

/// Temporary files of recordings to `path` (by any process) that were never renamed
/// into place: killed recordings, for `causeway check` to point at.
pub fn leftover_temps(path: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}.partial-", name.to_string_lossy());
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| dir.join(e.file_name()))
        .collect();
    found.sort();
    found
}

fn identity(path: &Path) -> io::Result<Before> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => Ok(Before::File(m.dev(), m.ino())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Before::Nothing),
        Err(e) => Err(e),
    }
}

/// Start an output at `path`: the file to write and what finishes it.
pub fn create(path: &Path) -> Result<(File, Pending), OutputError> {
    check_replaceable(path)?;
    if let Ok(m) = std::fs::metadata(path)
        && !m.is_file()
    {
        let f = File::create(path).map_err(io_err(format!("opening {}", path.display())))?;
        let p = Pending {
            path: path.to_path_buf(),
            temp: None,
            before: Before::Nothing,
        };
        return Ok((f, p));
    }
    let before = identity(path).map_err(io_err(format!("reading {}", path.display())))?;
    let temp = temp_path(path);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&temp)
        .map_err(io_err(format!("creating {}", temp.display())))?;
    let p = Pending {
        path: path.to_path_buf(),
        temp: Some(temp),
        before,
    };
    Ok((f, p))
}

/// An exclusive `flock` on a directory, released when dropped.
struct DirLock(File);

impl DirLock {
    fn take(dir: &Path) -> io::Result<DirLock> {
        let f = File::open(dir)?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(DirLock(f))
    }
}

impl Pending {
    /// The temporary file being written (`None` when writing in place).
    pub fn temp(&self) -> Option<&Path> {
        self.temp.as_deref()
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Put the finished file `f` at its path: make it durable, then (under the
    /// directory lock) check the path still holds what it held at the start, keep that
    /// as `PATH.old` and rename the temporary file onto the path. Returns where the
    /// previous file was kept.
    pub fn commit(self, f: File) -> Result<Option<PathBuf>, OutputError> {
        let Some(temp) = &self.temp else {
            return Ok(None);
        };
        let path = &self.path;
        f.sync_all()
            .map_err(io_err(format!("writing {}", temp.display())))?;
        drop(f);
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let lock = DirLock::take(dir).map_err(io_err(format!("locking {}", dir.display())))?;
        let now = identity(path).map_err(io_err(format!("reading {}", path.display())))?;
        if now != self.before {
            return Err(io_err(format!(
                "{} was replaced while recording (another recording to the same path?); \
                 this trace is kept as {}",
                path.display(),
                temp.display()
            ))(io::Error::from(
                io::ErrorKind::AlreadyExists,
            )));
        }
        let kept = crate::previous::keep(path).map_err(|e| {
            let old = crate::previous::old_path(path);
            io_err(format!("keeping {} as {}", path.display(), old.display()))(e)
        })?;
        std::fs::rename(temp, path).map_err(io_err(format!(
            "renaming {} to {}",
            temp.display(),
            path.display()
        )))?;
        // The rename itself is durable once the directory is.
        let _ = lock.0.sync_all();
        drop(lock);
        Ok(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_file_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.txt");
        std::fs::write(&p, b"my notes").unwrap();
        let err = create(&p).unwrap_err().to_string();
        assert!(err.contains("not a causeway trace"), "{err}");
        assert_eq!(std::fs::read(&p).unwrap(), b"my notes");
        assert!(leftover_temps(&p).is_empty());
    }

    #[test]
    fn a_trace_is_replaced_only_at_commit_and_kept_as_old() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.cwt");
        std::fs::write(&p, b"CAUSEWAY old trace").unwrap();
        let (f, pending) = create(&p).unwrap();
        // While recording, the old trace is still at the path.
        assert_eq!(std::fs::read(&p).unwrap(), b"CAUSEWAY old trace");
        assert_eq!(leftover_temps(&p), vec![temp_path(&p)]);
        std::fs::write(temp_path(&p), b"CAUSEWAY new").unwrap();
        let kept = pending.commit(f).unwrap();
        assert_eq!(kept, Some(dir.path().join("t.cwt.old")));
        assert_eq!(std::fs::read(&p).unwrap(), b"CAUSEWAY new");
        assert!(leftover_temps(&p).is_empty());
    }

    #[test]
    fn a_path_replaced_meanwhile_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("same.cwt");
        let (f, pending) = create(&p).unwrap();
        // Another recording finished first.
        std::fs::write(&p, b"CAUSEWAY other").unwrap();
        let err = pending.commit(f).unwrap_err().to_string();
        assert!(err.contains("replaced while recording"), "{err}");
        assert_eq!(std::fs::read(&p).unwrap(), b"CAUSEWAY other");
        assert!(
            temp_path(&p).exists(),
            "this trace is kept at its temporary path"
        );
    }

    #[test]
    fn devices_are_written_in_place() {
        let (_, pending) = create(Path::new("/dev/null")).unwrap();
        assert!(pending.temp().is_none());
    }
}
