//! Helpers shared by the integration tests that need the kernel (root, perf, eBPF).

#![allow(dead_code)]

pub mod devtools;
pub mod netns;
pub mod zoo;

use causeway_format::{Tables, TraceReader};
use causeway_model::Model;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A kernel facility is missing: fail under `CAUSEWAY_REQUIRE_ROOT=1` (CI), else skip.
pub fn unavailable(reason: &str) {
    if std::env::var_os("CAUSEWAY_REQUIRE_ROOT").is_some_and(|v| v == "1") {
        panic!("CAUSEWAY_REQUIRE_ROOT=1 but {reason}");
    }
    eprintln!("skipping: {reason}");
}

/// Effective user is root.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("Uid:"))?;
            l.split_whitespace().nth(2).map(|euid| euid == "0")
        })
        .unwrap_or(false)
}

/// A zoo workload binary (built by `make workloads`).
pub fn workload(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../workloads/bin")
        .join(name)
        .canonicalize()
        .unwrap_or_else(|_| panic!("workload {name} is not built: run `make workloads`"))
}

/// The causeway binary under test.
pub fn causeway() -> Command {
    Command::new(env!("CARGO_BIN_EXE_causeway"))
}

/// Root and the zoo are there; otherwise report (fail in CI) and return false.
pub fn can_record() -> bool {
    if !is_root() {
        unavailable("recording needs root");
        return false;
    }
    true
}

/// Run `causeway record -o OUT ARGS...`; panics with its stderr if it fails.
pub fn record(out: &Path, args: &[&str]) -> Output {
    let o = causeway()
        .arg("record")
        .arg("-o")
        .arg(out)
        .args(args)
        .output()
        .expect("run causeway record");
    assert!(
        o.status.success(),
        "causeway record {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// A `causeway record` started in the background and known to be recording.
pub struct Started {
    /// The recorder.
    pub child: std::process::Child,
    /// The temporary file it said it writes until it stops, if it named one.
    pub temp: Option<PathBuf>,
    /// When it said it was recording (its probes are attached and the command runs).
    pub at: std::time::Instant,
    /// The rest of its stderr, read to its end so it never blocks on a full pipe.
    pub rest: std::thread::JoinHandle<String>,
}

/// Start `causeway record -o OUT ARGS` (stdout discarded) and return once it says it
/// is recording. Tests that time something against the recording start from here,
/// not from the spawn: attaching the probes takes a second or more on a loaded host.
pub fn start_recording(out: &Path, args: &[&str]) -> Started {
    use std::io::{BufRead, BufReader};
    let mut child = causeway()
        .arg("record")
        .arg("-o")
        .arg(out)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run causeway record");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (mut temp, mut seen) = (None, String::new());
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.strip_prefix("causeway: writing ") {
            temp = Some(PathBuf::from(rest.split(" until ").next().unwrap()));
        }
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("Ctrl-C to stop") {
            let at = std::time::Instant::now();
            let rest = std::thread::spawn(move || {
                let mut text = seen;
                for l in lines.map_while(Result::ok) {
                    text.push_str(&l);
                    text.push('\n');
                }
                text
            });
            return Started {
                child,
                temp,
                at,
                rest,
            };
        }
    }
    let status = child.wait().expect("wait for causeway record");
    panic!("causeway record ended ({status}) before it was recording: {seen}");
}

/// The output of a command that must have succeeded (its stderr is the failure
/// message; the failure points at the caller's line).
#[track_caller]
pub fn ok(run: std::io::Result<Output>) -> Output {
    let o = run.expect("start the command");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// Open a trace and build its model.
pub fn model(path: &Path) -> (Model, Tables, causeway_format::TraceStats) {
    let mut r = TraceReader::open(path).expect("open trace");
    let tables = r.tables().clone();
    let stats = r.stats().clone();
    let m = Model::from_reader(&mut r).expect("model");
    (m, tables, stats)
}

/// Compile the test program `tests/progs/NAME.c` into `dir`; returns the binary.
pub fn build_prog(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/progs/{name}.c"));
    let bin = dir.join(name);
    let st = Command::new("cc")
        .args(["-O2", "-pthread", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("run cc");
    assert!(st.success(), "compiling {}", src.display());
    bin
}

/// Compile `tests/progs/NAME.c` with `-finstrument-functions` (libcauseway's hooks)
/// into `dir`; functions are not inlined so that each call is traced.
pub fn build_instrumented(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/progs/{name}.c"));
    let exe = dir.join(name);
    let st = Command::new("cc")
        .args(["-O1", "-fno-inline", "-finstrument-functions", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("run cc");
    assert!(st.success(), "cc failed on {}", src.display());
    exe
}

/// The directory of the causeway binary under test (where `make build` puts
/// libcauseway and the Python module).
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_causeway"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// libcauseway.so beside the test binary, linked from the crate's staticlib if `make
/// build` has not made it (or made it before the staticlib was rebuilt).
pub fn libcauseway() -> PathBuf {
    let dir = target_dir();
    let so = dir.join("libcauseway.so");
    let a = dir.join("libcauseway_inproc.a");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let stale = modified(&so).is_none()
        || modified(&a).is_some_and(|ta| modified(&so).is_some_and(|ts| ts < ta));
    if stale {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/build-libcauseway.sh");
        let st = Command::new("bash")
            .arg(script)
            .arg(&dir)
            .status()
            .expect("run build-libcauseway.sh");
        assert!(
            st.success(),
            "cannot link libcauseway.so; run `make build` (needs {})",
            a.display()
        );
    }
    so
}
