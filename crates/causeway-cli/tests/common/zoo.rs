//! The steps every recording test starts with, in one place: skip (or fail in CI)
//! without root, record a program into a scratch directory and check the recorder
//! succeeded, then run an analysis on the trace and parse its JSON.
//!
//! ```ignore
//! let Some(zoo) = Zoo::start() else { return };
//! let trace = zoo.record("blocking-write").seconds("1").run();
//! let report = analyse_json(&trace, &["bottleneck", "--json"]);
//! ```

use super::{can_record, causeway, workload};
use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Mutex;
use tempfile::TempDir;

/// A scratch directory for a test's recordings, on a machine that can record.
pub struct Zoo {
    dir: TempDir,
}

impl Zoo {
    /// A scratch directory in the system's temporary directory, or `None` (reported,
    /// or a failure under `CAUSEWAY_REQUIRE_ROOT=1`) when this machine cannot record.
    pub fn start() -> Option<Zoo> {
        can_record().then(|| Zoo {
            dir: tempfile::tempdir().unwrap(),
        })
    }

    /// The same under the target directory: a real disk, for workloads whose syncs
    /// must reach a block device (a temporary directory may be in memory).
    pub fn on_disk() -> Option<Zoo> {
        can_record().then(|| Zoo {
            dir: tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap(),
        })
    }

    /// The scratch directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A recording of the zoo workload `name` (`workloads/bin/NAME`), into `NAME.cwt`.
    pub fn record(&self, name: &str) -> Rec<'_> {
        self.record_program(workload(name))
            .out(&format!("{name}.cwt"))
    }

    /// A recording of any program (one built by the test, a shell, a system tool),
    /// into `trace.cwt` unless [`Rec::out`] names another file.
    pub fn record_program(&self, program: impl AsRef<OsStr>) -> Rec<'_> {
        Rec {
            dir: self.dir(),
            out: self.dir().join("trace.cwt"),
            program: program.as_ref().to_owned(),
            flags: Vec::new(),
            seconds: None,
            args: Vec::new(),
            in_dir: false,
            one_at_a_time: None,
        }
    }
}

/// A failed test keeps its recordings: the trace that made an assertion fail is the
/// one worth reading (a timing-dependent failure may not come back).
impl Drop for Zoo {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.dir.disable_cleanup(true);
            eprintln!(
                "the recordings of this test are kept in {}",
                self.dir.path().display()
            );
        }
    }
}

/// `causeway record [FLAGS] -o OUT -- PROGRAM [--seconds S] [ARGS]`, being set up.
pub struct Rec<'z> {
    dir: &'z Path,
    out: PathBuf,
    program: OsString,
    flags: Vec<OsString>,
    seconds: Option<String>,
    args: Vec<OsString>,
    in_dir: bool,
    one_at_a_time: Option<&'static Mutex<()>>,
}

impl Rec<'_> {
    /// The trace's file name in the scratch directory.
    pub fn out(mut self, file: &str) -> Self {
        self.out = self.dir.join(file);
        self
    }

    /// Recorder flags (before the `--`).
    pub fn flags<S: AsRef<OsStr>>(mut self, flags: impl IntoIterator<Item = S>) -> Self {
        self.flags
            .extend(flags.into_iter().map(|f| f.as_ref().to_owned()));
        self
    }

    /// `--seconds S` right after the program: how long a zoo workload runs.
    pub fn seconds(mut self, s: &str) -> Self {
        self.seconds = Some(s.to_string());
        self
    }

    /// The program's arguments (after `--seconds`).
    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Run in the scratch directory: zoo workloads write scratch files where they run.
    pub fn in_dir(mut self) -> Self {
        self.in_dir = true;
        self
    }

    /// Hold `lock` while recording, so that workloads that want every CPU do not run
    /// side by side and change each other's waits.
    pub fn one_at_a_time(mut self, lock: &'static Mutex<()>) -> Self {
        self.one_at_a_time = Some(lock);
        self
    }

    /// Record; panics with the recorder's stderr if it fails.
    pub fn run(self) -> Recording {
        let mut cmd = causeway();
        if self.in_dir {
            cmd.current_dir(self.dir);
        }
        cmd.arg("record").arg("-o").arg(&self.out).args(&self.flags);
        cmd.arg("--").arg(&self.program);
        if let Some(s) = &self.seconds {
            cmd.args(["--seconds", s]);
        }
        cmd.args(&self.args);
        let o = {
            let _one = self
                .one_at_a_time
                .map(|l| l.lock().unwrap_or_else(|e| e.into_inner()));
            cmd.output().expect("run causeway record")
        };
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(
            o.status.success(),
            "causeway record {:?} -- {:?} {:?} failed: {stderr}",
            self.flags,
            self.program,
            self.args
        );
        Recording {
            path: self.out,
            stderr,
        }
    }
}

/// A trace recorded by [`Rec::run`]; derefs to its path.
pub struct Recording {
    /// The trace file.
    pub path: PathBuf,
    /// What the recorder printed on standard error.
    pub stderr: String,
}

impl Recording {
    /// The path as a string, for argument lists of `&str`.
    pub fn as_str(&self) -> &str {
        self.path.to_str().expect("a UTF-8 scratch path")
    }
}

impl Deref for Recording {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Recording {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<OsStr> for Recording {
    fn as_ref(&self) -> &OsStr {
        self.path.as_os_str()
    }
}

/// `causeway ARGS TRACE` with an empty standard input; its output once it exited with
/// one of `codes`.
fn run_analysis(trace: &Path, args: &[&str], codes: &[i32]) -> Output {
    let o = causeway()
        .args(args)
        .arg(trace)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run causeway");
    assert!(
        o.status.code().is_some_and(|c| codes.contains(&c)),
        "causeway {args:?} {} failed ({:?}): {}",
        trace.display(),
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// `causeway ARGS TRACE` (the trace last, after any other files in `args`), which must
/// succeed.
pub fn analyse(trace: &Path, args: &[&str]) -> Output {
    run_analysis(trace, args, &[0])
}

/// `causeway ARGS TRACE`, which must succeed, its standard output parsed as JSON.
pub fn analyse_json(trace: &Path, args: &[&str]) -> Value {
    json(&analyse(trace, args))
}

/// `causeway ARGS TRACE` for an answer either way: exit status 0 (found) or 1 (not).
pub fn answer(trace: &Path, args: &[&str]) -> Output {
    run_analysis(trace, args, &[0, 1])
}

/// A command's standard output parsed as JSON.
pub fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "causeway's JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}
