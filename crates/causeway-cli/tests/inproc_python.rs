//! The `causeway` Python module end to end, on every interpreter path: Debian's
//! python3 (3.11: the frame evaluation hook and the `setprofile` path, always tested)
//! and pyenv's 3.12 and 3.13 (the `sys.monitoring` path; skipped with a message where
//! pyenv lacks them).
//! - the stall watchdog: a Python event loop stalls once for 300 ms in
//!   `handle_request > load_settings > parse_config`; the automatic dump holds that
//!   chain and `causeway calls --chains` names it first;
//! - names: functions with nested, unicode and over-long qualified names, and one run
//!   by a thread started after tracing began, come back from a dump exactly as
//!   `causeway.name_of` spells them;
//! - selection: with `start(modules=[...])` only the selected modules are traced.
//!
//! No root needed. The module is built here by scripts/build-python.sh if needed.

mod common;

use common::{causeway, libcauseway, ok, target_dir};
use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The stall tests measure time: run them one at a time on a busy machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// An interpreter and the directory holding its build of the module.
struct Python {
    exe: PathBuf,
    version: String,
    module_dir: PathBuf,
    /// CAUSEWAY_PY_HOOK for 3.11 (`eval` or `setprofile`).
    hook: &'static str,
}

fn version_of(exe: &Path) -> Option<String> {
    let o = Command::new(exe)
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Builds of the module, one at a time (tests of one version share its output).
static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Builds the module for `exe` (one cc run) and returns the interpreter.
fn with_module(exe: PathBuf) -> Python {
    let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    libcauseway();
    let version = version_of(&exe).expect("interpreter runs");
    let st = Command::new("bash")
        .arg(repo().join("scripts/build-python.sh"))
        .arg(&exe)
        .env("CAUSEWAY_TARGET", target_dir())
        .status()
        .expect("run build-python.sh");
    assert!(
        st.success(),
        "cannot build the Python module for {} (Debian: install python3-dev)",
        exe.display()
    );
    let module_dir = target_dir().join("python").join(&version);
    Python {
        exe,
        version,
        module_dir,
        hook: "eval",
    }
}

/// Debian's python3, which is 3.11 on Debian 12: the `setprofile` path, never skipped.
fn python311() -> Python {
    let system = PathBuf::from("/usr/bin/python3");
    let exe = if version_of(&system).as_deref() == Some("3.11") {
        system
    } else {
        pyenv("3.11").expect("a Python 3.11 is needed: /usr/bin/python3 or pyenv's 3.11")
    };
    with_module(exe)
}

/// pyenv's newest `minor` interpreter, if pyenv has one.
fn pyenv(minor: &str) -> Option<PathBuf> {
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pyenv")))?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(root.join("versions"))
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_prefix(minor).is_some_and(|rest| {
                rest.starts_with('.') && rest[1..].chars().all(|c| c.is_ascii_digit())
            })
        })
        .map(|e| e.path().join("bin/python3"))
        .filter(|p| p.exists())
        .collect();
    found.sort();
    found.pop()
}

/// pyenv's `minor` with the module, or None after saying why the test is skipped.
fn newer(minor: &str) -> Option<Python> {
    match pyenv(minor) {
        Some(exe) => Some(with_module(exe)),
        None => {
            eprintln!(
                "skipping: no Python {minor} under pyenv ($PYENV_ROOT or ~/.pyenv/versions/{minor}.*); \
                 the sys.monitoring path is not tested on {minor}"
            );
            None
        }
    }
}

fn prog(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/progs")
        .join(name)
}

fn traces_in(dir: &Path) -> Vec<PathBuf> {
    let mut t: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwt"))
        .collect();
    t.sort();
    t
}

fn calls_json(trace: &Path, args: &[&str]) -> Value {
    let o = ok(causeway()
        .args(["calls", "--json"])
        .args(args)
        .arg(trace)
        .output());
    serde_json::from_slice(&o.stdout).unwrap()
}

/// A Python function's name without its ` (file:line)`.
fn bare(name: &str) -> &str {
    name.split(" (").next().unwrap()
}

fn watchdog_case(py: &Python) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lib = libcauseway();
    let dir = tempfile::tempdir().unwrap();
    let out = causeway()
        .args(["run", "--inproc", "--trigger", "stall=200ms,signal=off"])
        .arg("--out-dir")
        .arg(dir.path())
        .arg("--lib")
        .arg(&lib)
        .arg("--")
        .arg(&py.exe)
        .arg(prog("stall_loop.py"))
        .env("PYTHONPATH", &py.module_dir)
        .env("CAUSEWAY_PY_HOOK", py.hook)
        .output()
        .expect("run causeway run");
    assert!(
        out.status.success(),
        "Python {}: {}",
        py.version,
        String::from_utf8_lossy(&out.stderr)
    );
    let traces = traces_in(dir.path());
    let dumps: Vec<Value> = traces
        .iter()
        .map(|t| calls_json(t, &["--chains", "3"]))
        .collect();
    // Every dump is the watchdog's. The tests run niced on a shared machine, where the
    // scheduler can hold a turn of the loop past 200 ms: a real stall of the loop, so
    // the watchdog may dump it too. The 300 ms stall is the dump that caught
    // parse_config running; there must be exactly one such dump.
    assert!(
        (1..=3).contains(&dumps.len()),
        "Python {}: {traces:?}",
        py.version
    );
    for d in &dumps {
        assert_eq!(d["trigger"]["kind"], "stall", "{d:#}");
    }
    let running_parse = |d: &&Value| {
        d["chains"].as_array().unwrap().iter().any(|c| {
            c["calls"].as_array().unwrap().last().is_some_and(|l| {
                l["open"] == true && bare(l["function"].as_str().unwrap()) == "parse_config"
            })
        })
    };
    let held: Vec<&Value> = dumps.iter().filter(running_parse).collect();
    assert_eq!(held.len(), 1, "Python {}: {dumps:#?}", py.version);
    if dumps.len() > 1 {
        eprintln!(
            "Python {}: {} dumps; the others were turns the scheduler held past 200 ms",
            py.version,
            dumps.len()
        );
    }
    let first = &held[0]["chains"][0];
    let calls = first["calls"].as_array().unwrap();
    let names: Vec<&str> = calls
        .iter()
        .map(|c| bare(c["function"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            "main",
            "event_loop",
            "handle_request",
            "load_settings",
            "parse_config"
        ],
        "Python {}: {first:#}",
        py.version
    );
    // Names carry the file and the line of the def.
    let last = calls.last().unwrap();
    let full = last["function"].as_str().unwrap();
    assert!(full.ends_with("stall_loop.py:11)"), "{full}");
    assert_eq!(last["open"], true, "the stall was still going at the dump");
    let ms = first["self_in_window_ns"].as_f64().unwrap() / 1e6;
    assert!(
        (190.0..320.0).contains(&ms),
        "Python {}: stalled {ms} ms before the dump",
        py.version
    );
    // The signature finds the stalled instance by the bare names.
    let at = dumps.iter().position(|d| std::ptr::eq(d, held[0])).unwrap();
    let m = calls_json(
        &traces[at],
        &["--match", "handle_request>load_settings>parse_config"],
    );
    let inst = &m["matches"]["instances"][0]["calls"];
    assert!(
        inst[2]["duration_ns"].as_f64().unwrap() / 1e6 > 190.0,
        "{inst:#}"
    );
}

/// Runs py_names.py (with `arg`) and returns its report and the functions of its dump.
/// Runs a test script of tests/progs with the module, its traces written to `out`;
/// returns the JSON report it prints.
fn run_script(py: &Python, script: &str, args: &[&OsStr], out: &Path) -> Value {
    let o = Command::new(&py.exe)
        .arg(prog(script))
        .args(args)
        .env("PYTHONPATH", &py.module_dir)
        .env("CAUSEWAY_PY_HOOK", py.hook)
        .env("CAUSEWAY_OUTPUT", out)
        .env("CAUSEWAY_TRIGGER", "signal=off,stall=off")
        .env_remove("CAUSEWAY_START")
        .env_remove("CAUSEWAY_PATCH")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "Python {}: {}",
        py.version,
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn names_run(py: &Python, arg: Option<&str>) -> (Value, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<&OsStr> = arg.iter().map(OsStr::new).collect();
    let report = run_script(py, "py_names.py", &args, dir.path());
    let trace = PathBuf::from(report["trace"].as_str().unwrap());
    assert_eq!(traces_in(dir.path()), std::slice::from_ref(&trace));
    let v = calls_json(&trace, &["--top", "1000"]);
    let functions = v["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap().to_string())
        .collect();
    (report, functions)
}

fn names_case(py: &Python, mode: &str) {
    let (report, functions) = names_run(py, None);
    assert_eq!(report["mode"], mode);
    let names: Vec<&str> = report["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 10);
    for n in &names {
        assert!(
            functions.iter().any(|f| f == n),
            "Python {}: {n:?} not in the dump: {functions:#?}",
            py.version
        );
    }
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("nested.<locals>.inner_fn ("))
    );
    assert!(names.iter().any(|n| n.starts_with("café_ünïcode_名前 (")));
    assert!(names.iter().any(|n| n.starts_with("Outer.Inner.method (")));
    // The 600-byte name is cut to 500 bytes, the same in the module and the dump.
    let long = names.iter().find(|n| n.starts_with("very_long")).unwrap();
    assert_eq!(long.len(), 500);
    // Selecting the json package only: none of the program's functions, json's are.
    let (_, selected) = names_run(py, Some("select"));
    assert!(
        !selected.iter().any(|f| f.contains("py_names.py")),
        "{selected:#?}"
    );
    assert!(
        selected
            .iter()
            .any(|f| f.contains("json") && f.starts_with("dumps (")),
        "Python {}: {selected:#?}",
        py.version
    );
}

#[test]
fn python311_watchdog_dump_names_the_stalled_chain_first() {
    watchdog_case(&python311());
}

#[test]
fn python311_names_round_trip_and_selection() {
    names_case(&python311(), "eval-frame");
}

#[test]
fn python311_setprofile_watchdog_dump_names_the_stalled_chain_first() {
    let py = Python {
        hook: "setprofile",
        ..python311()
    };
    watchdog_case(&py);
}

#[test]
fn python311_setprofile_names_round_trip_and_selection() {
    let py = Python {
        hook: "setprofile",
        ..python311()
    };
    names_case(&py, "setprofile");
}

#[test]
fn python312_watchdog_dump_names_the_stalled_chain_first() {
    if let Some(py) = newer("3.12") {
        watchdog_case(&py);
    }
}

#[test]
fn python312_names_round_trip_and_selection() {
    if let Some(py) = newer("3.12") {
        names_case(&py, "sys.monitoring");
    }
}

#[test]
fn python313_watchdog_dump_names_the_stalled_chain_first() {
    if let Some(py) = newer("3.13") {
        watchdog_case(&py);
    }
}

#[test]
fn python313_names_round_trip_and_selection() {
    if let Some(py) = newer("3.13") {
        names_case(&py, "sys.monitoring");
    }
}

/// `python -m causeway` runs an unchanged script traced from its first line: the
/// script sees its own arguments, `__name__`, path and exit status; the options reach
/// the library (output directory, exit trigger) and the selection (`--modules
/// __main__`: the script's functions and nothing of the standard library).
fn unchanged_case(py: &Python) {
    let dir = tempfile::tempdir().unwrap();
    let script = prog("py_unchanged.py");
    let out = Command::new(&py.exe)
        .args(["-m", "causeway", "--trigger", "exit,signal=off,stall=off"])
        .arg("--output")
        .arg(dir.path())
        .args(["--modules", "__main__", "--hook", py.hook])
        .arg(&script)
        .args(["3", "--flag"])
        .env("PYTHONPATH", &py.module_dir)
        .env_remove("CAUSEWAY_OUTPUT")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(3),
        "Python {}: {stderr}",
        py.version
    );
    let seen: Value = serde_json::from_slice(&out.stdout).expect("the script's report");
    assert_eq!(seen["argv"][0], script.to_str().unwrap());
    assert_eq!(seen["argv"][1], "3");
    assert_eq!(seen["argv"][2], "--flag");
    assert_eq!(seen["name"], "__main__");
    assert_eq!(seen["path0"], seen["here"]);
    assert_eq!(seen["total"], 2550);
    let traces = traces_in(dir.path());
    assert_eq!(traces.len(), 1, "Python {}: {stderr}", py.version);
    let m = calls_json(&traces[0], &["--match", "main>mid>leaf"]);
    assert_eq!(
        m["matches"]["instances"].as_array().unwrap().len(),
        50,
        "Python {}: {m:#}",
        py.version
    );
    let top = calls_json(&traces[0], &["--top", "1000"]);
    let calls_of = |name: &str| {
        top["top"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["function"].as_str().unwrap().starts_with(name))
            .map(|f| f["calls"].as_u64().unwrap())
    };
    assert_eq!(
        calls_of("leaf ("),
        Some(50),
        "Python {}: {top:#}",
        py.version
    );
    assert_eq!(
        calls_of("main ("),
        Some(1),
        "Python {}: {top:#}",
        py.version
    );
    let functions: Vec<&str> = top["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap())
        .collect();
    // The launcher's own frames (also `__main__`) were running when tracing started:
    // their exits are the only calls not of the script.
    for f in functions.iter().filter(|f| **f != "[before trace]") {
        assert!(
            f.contains("py_unchanged.py:"),
            "Python {}: {f} traced, not of the selected script",
            py.version
        );
    }
}

#[test]
fn python311_runs_an_unchanged_script_traced() {
    unchanged_case(&python311());
    let py = Python {
        hook: "setprofile",
        ..python311()
    };
    unchanged_case(&py);
}

#[test]
fn python312_runs_an_unchanged_script_traced() {
    if let Some(py) = newer("3.12") {
        unchanged_case(&py);
    }
}

#[test]
fn python313_runs_an_unchanged_script_traced() {
    if let Some(py) = newer("3.13") {
        unchanged_case(&py);
    }
}

/// A native extension with keyed trace points (tests/progs/cwext.c), imported after
/// tracing started: its spans are in the dump under the Python function that called
/// them (tests/progs/py_native.py).
fn native_case(py: &Python) {
    let lib = libcauseway();
    let libdir = lib.parent().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let include = Command::new(&py.exe)
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['include'])",
        ])
        .output()
        .unwrap();
    let include = String::from_utf8_lossy(&include.stdout).trim().to_string();
    let o = Command::new("cc")
        .args(["-O2", "-g", "-fPIC", "-shared"])
        .arg(format!("-I{include}"))
        .arg("-I")
        .arg(repo().join("crates/causeway-inproc/c"))
        .arg("-o")
        .arg(dir.path().join("cwext.so"))
        .arg(prog("cwext.c"))
        .arg("-L")
        .arg(libdir)
        .arg("-lcauseway")
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .output()
        .expect("run the compiler");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = run_script(py, "py_native.py", &[dir.path().as_os_str()], dir.path());
    // 50 calls of work(10): the sum of 3i + 1 over i < 10 is 145.
    assert_eq!(report["total"], 50 * 145, "{report}");
    let trace = PathBuf::from(report["trace"].as_str().unwrap());
    let v = calls_json(&trace, &["--match", "outer>cwext_work>cwext_leaf"]);
    let instances = v["matches"]["instances"].as_array().unwrap().len();
    assert_eq!(instances, 500, "Python {}: {v:#}", py.version);
}

#[test]
fn python311_native_keyed_trace_points_of_an_extension_imported_later() {
    native_case(&python311());
}

#[test]
fn python312_native_keyed_trace_points_of_an_extension_imported_later() {
    if let Some(py) = newer("3.12") {
        native_case(&py);
    }
}
