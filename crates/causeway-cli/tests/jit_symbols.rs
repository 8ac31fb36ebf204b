//! JIT-compiled code gets names from the runtimes' perf maps and jitdump files: a
//! minimal JIT of our own (both conventions), Node (`--perf-basic-prof`), a JVM (its
//! map written at exit, and a running one asked with `jcmd`) and Python 3.12+
//! (`-X perf`, when installed). Each records a hot loop with on-CPU samples and
//! checks that the hottest sampled frame has a name and the loop's own frame is among
//! the leaves. Needs root; skipped without it unless `CAUSEWAY_REQUIRE_ROOT=1`.

mod common;

use common::{build_prog, can_record, causeway};
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The folded on-CPU stacks of a trace (`flamegraph --folded`).
fn folded(trace: &Path) -> String {
    let o = causeway()
        .args(["flamegraph", "--kind", "on-cpu", "--folded"])
        .arg(trace)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

/// On-CPU samples by leaf frame, heaviest first.
fn leaves(trace: &Path) -> Vec<(String, u64)> {
    let mut by: HashMap<String, u64> = HashMap::new();
    for line in folded(trace).lines() {
        let Some((stack, w)) = line.rsplit_once(' ') else {
            continue;
        };
        let leaf = stack.rsplit(';').next().unwrap_or("").trim().to_string();
        *by.entry(leaf).or_default() += w.parse::<u64>().unwrap_or(0);
    }
    let mut v: Vec<(String, u64)> = by.into_iter().collect();
    v.sort_by_key(|x| std::cmp::Reverse(x.1));
    v
}

/// Record `args` (after `record -o TRACE`), then check the hottest leaf is named and
/// one leaf contains `want`. Returns record's stderr.
fn check(trace: &Path, args: &[&str], want: &str) -> String {
    let err = record_named(trace, args);
    let l = leaves(trace);
    assert!(
        l.iter().any(|(f, _)| f.contains(want)),
        "no leaf named like {want}: {l:?}\n{err}"
    );
    err
}

/// Record `args`, check the hottest sampled leaf has a name; returns record's stderr.
fn record_named(trace: &Path, args: &[&str]) -> String {
    let o = causeway()
        .arg("record")
        .arg("-o")
        .arg(trace)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let l = leaves(trace);
    let top = l.first().map(|x| x.0.clone()).unwrap_or_default();
    assert!(
        !top.is_empty() && !top.starts_with("0x"),
        "hottest sampled frame unnamed: {l:?}\n{}",
        text(&o.stderr)
    );
    text(&o.stderr)
}

/// The perf map a JVM wrote when asked: it would outlive the test.
fn remove_perf_map(pid: &str) {
    let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
}

#[test]
fn a_minimal_jit_is_named_from_its_perf_map_and_from_its_jitdump() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build_prog(dir.path(), "jit-code");
    let d = dir.path().to_str().unwrap();
    // "jitdump-late" maps its dump file 100 ms after its code, while the program
    // blocks: the mappings read then lack the dump.
    for how in ["perfmap", "jitdump", "jitdump-late"] {
        let trace = dir.path().join(format!("{how}.cwt"));
        let err = check(
            &trace,
            &["--", bin.to_str().unwrap(), "1", how, d],
            "jit_busy_loop",
        );
        assert!(err.contains("JIT code:"), "{how}: {err}");
    }
}

#[test]
fn node_frames_are_named_from_perf_basic_prof() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let js = dir.path().join("hot.js");
    std::fs::write(
        &js,
        "function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) { s += Math.sqrt(i) * (i % 7); } return s; }\n\
         let t = Date.now(), x = 0;\n\
         while (Date.now() - t < 1500) x += hotLoop(1e5);\n\
         if (x < 0) console.log(x);\n",
    )
    .unwrap();
    let trace = dir.path().join("node.cwt");
    // V8 also writes its own log when it writes the perf map: keep it in the scratch
    // directory, not in the directory the tests run from.
    let log = format!("--logfile={}", dir.path().join("v8.log").display());
    check(
        &trace,
        &[
            "--",
            "node",
            "--perf-basic-prof",
            "--no-logfile-per-isolate",
            &log,
            js.to_str().unwrap(),
        ],
        "hotLoop",
    );
}

/// `name` as found on PATH.
fn on_path(name: &str) -> std::path::PathBuf {
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .find(|f| f.is_file())
        })
        .unwrap_or_else(|| panic!("{name} is needed on PATH"))
}

/// Node run as a container runtime starts it (`workloads/ns-run.sh`: own mount and PID
/// namespaces, a root of its own that is removed when it exits): V8 writes its perf
/// map into that root's /tmp under its namespace PID (1), which the host's /tmp never
/// has. The recorder keeps the file open from when it first sees the process's JIT
/// code. Before: "JIT code: 0 of 29 addresses named".
#[test]
fn a_namespaced_node_is_named_from_the_perf_map_in_its_own_root() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/ns-run.sh");
    let node = on_path("node");
    let trace = dir.path().join("ns-node.cwt");
    check(
        &trace,
        &[
            "--",
            script.to_str().unwrap(),
            node.to_str().unwrap(),
            "--perf-basic-prof",
            // V8 writes a log beside the perf map, in the working directory otherwise.
            "--no-logfile-per-isolate",
            "--logfile=/dev/null",
            "-e",
            "function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) { s += Math.sqrt(i) * (i % 7); } return s; }\n\
             let t = Date.now(), x = 0; while (Date.now() - t < 1500) x += hotLoop(1e5); if (x < 0) console.log(x);",
        ],
        "hotLoop",
    );
}

const HOT_JAVA: &str = "public class Hot {\n\
    static double hotLoop(int n) { double s = 0; for (int i = 0; i < n; i++) { s += Math.sqrt(i) * (i % 7); } return s; }\n\
    public static void main(String[] a) {\n\
        long end = System.currentTimeMillis() + (long) (Double.parseDouble(a[0]) * 1000);\n\
        double x = 0;\n\
        while (System.currentTimeMillis() < end) x += hotLoop(100000);\n\
        if (x < 0) System.out.println(x);\n\
    }\n\
}\n";

/// Compile Hot.java into `dir`.
fn javac(dir: &Path) {
    std::fs::write(dir.join("Hot.java"), HOT_JAVA).unwrap();
    let st = Command::new("javac")
        .arg("-d")
        .arg(dir)
        .arg(dir.join("Hot.java"))
        .status()
        .expect("javac (a JDK) is needed for the JVM test");
    assert!(st.success());
}

#[test]
fn jvm_frames_are_named_from_its_map_at_exit_and_from_a_running_jvms_structures() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    javac(dir.path());
    let cp = dir.path().to_str().unwrap();
    let trace = dir.path().join("exit.cwt");
    check(
        &trace,
        &[
            "--",
            "java",
            "-XX:+UnlockDiagnosticVMOptions",
            "-XX:+DumpPerfMapAtExit",
            "-cp",
            cp,
            "Hot",
            "2",
        ],
        "Hot.hotLoop",
    );
    // A JVM started without any flag, recorded while it runs: its Java frames are
    // walked and named from the JVM's own structures, so it need not be asked for a
    // perf map (`jcmd` stays the fallback for code the walker did not name).
    let mut jvm = Command::new("java")
        .args(["-cp", cp, "Hot", "8"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let pid = jvm.id().to_string();
    let trace = dir.path().join("running.cwt");
    let err = check(&trace, &["-p", &pid, "-d", "2"], "Hot.hotLoop");
    let _ = jvm.kill();
    let _ = jvm.wait();
    remove_perf_map(&pid);
    assert!(
        err.contains("Java frames walked from the JVM's code cache"),
        "{err}"
    );
}

/// Python 3.12 or newer, if installed: on PATH, or among pyenv's versions.
fn python312() -> Option<String> {
    let mut cands: Vec<String> = ["python3.14", "python3.13", "python3.12", "python3"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let root = std::env::var("PYENV_ROOT").unwrap_or_else(|_| "/root/.pyenv".into());
    let mut pyenv: Vec<String> = std::fs::read_dir(Path::new(&root).join("versions"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|v| {
            ["python3.14", "python3.13", "python3.12"]
                .map(|b| v.path().join("bin").join(b).display().to_string())
        })
        .filter(|p| Path::new(p).is_file())
        .collect();
    pyenv.sort();
    cands.extend(pyenv);
    cands.into_iter().find(|p| {
        Command::new(p)
            .args([
                "-c",
                "import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

#[test]
fn python_frames_are_named_from_x_perf() {
    if !can_record() {
        return;
    }
    let Some(py) = python312() else {
        // Not a kernel facility: Debian 12 ships Python 3.11, without `-X perf`.
        eprintln!("skipping: no Python 3.12 or newer installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("hot.py");
    std::fs::write(
        &script,
        "import time\n\
         def hot_loop(n):\n    s = 0\n    for i in range(n):\n        s += i % 7\n    return s\n\
         end = time.time() + 1.5\n\
         while time.time() < end:\n    hot_loop(100000)\n",
    )
    .unwrap();
    let trace = dir.path().join("py.cwt");
    let err = record_named(&trace, &["--", &py, "-X", "perf", script.to_str().unwrap()]);
    // Python's perf trampolines are frames below the interpreter's C code, never leaves.
    assert!(
        folded(&trace).contains("py::hot_loop"),
        "no frame py::hot_loop in the samples' stacks\n{err}"
    );
}
