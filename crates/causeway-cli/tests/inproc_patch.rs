//! Patched function entries end to end: a program built with
//! `-fpatchable-function-entry=5` (tests/progs/patched.c), linked with libcauseway
//! statically (the trampolines within reach of the stubs' direct calls) and as a shared
//! library (far away: the stubs call through pointers). The program checks its own
//! entry bytes (five one-byte nops before the library starts, a jump to the site's stub
//! while tracing, one 5-byte nop after `cw_stop`), that arguments and results of every
//! kind cross the trampolines intact, and survives a longjmp out of three patched
//! frames; the test reads its dump with `causeway calls` and checks the call trees:
//! every call of both threads, the frames the longjmp skipped closed where it happened,
//! nothing traced while off.
//!
//! Then linking: a program that references nothing of the library
//! (tests/progs/patched_plain.c) is patched and traced when linked with the
//! pkg-config lines (the link anchor), statically and as a shared library under
//! `--as-needed`, and is not without the anchor. No root needed.

mod common;

use common::causeway;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles `src` (C, or C++ by its name) with libcauseway's header: `flags`, then
/// linked with libcauseway.a (`static_link`) or libcauseway.so (found by rpath).
fn compile(src: &[PathBuf], exe: &Path, flags: &[&str], static_link: bool) {
    let lib = lib_dir();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cxx = src
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "cpp"));
    let mut cc = Command::new(if cxx { "g++" } else { "cc" });
    cc.args(flags)
        .arg("-I")
        .arg(manifest.join("../causeway-inproc/c"))
        .arg("-o")
        .arg(exe)
        .args(src);
    if static_link {
        cc.arg(lib.join("libcauseway.a"))
            .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lgcc_s"]);
    } else {
        cc.arg("-L")
            .arg(&lib)
            .arg("-lcauseway")
            .arg(format!("-Wl,-rpath,{}", lib.display()));
    }
    let o = cc.output().expect("run the compiler");
    assert!(
        o.status.success(),
        "compiling {src:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A test program of tests/progs.
fn prog(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/progs")
        .join(name)
}

/// A test program run with its traces written to `out`, with `trigger`, and nothing
/// of the caller's environment that would change how the library starts.
fn traced(exe: &Path, out: &Path, trigger: &str) -> Command {
    let mut cmd = Command::new(exe);
    cmd.env("CAUSEWAY_OUTPUT", out)
        .env("CAUSEWAY_TRIGGER", trigger)
        .env_remove("CAUSEWAY_START")
        .env_remove("CAUSEWAY_PATCH")
        .env_remove("CAUSEWAY_DISABLE")
        .env_remove("LD_PRELOAD");
    cmd
}

/// Builds patched.c, linked `static` (libcauseway.a) or shared (libcauseway.so).
fn build(dir: &Path, static_link: bool) -> PathBuf {
    let exe = dir.join(if static_link {
        "patched-static"
    } else {
        "patched-shared"
    });
    let flags = [
        "-O2",
        "-g",
        "-fpatchable-function-entry=5",
        "-Wno-prio-ctor-dtor",
    ];
    compile(&[prog("patched.c")], &exe, &flags, static_link);
    exe
}

/// Calls of `name` in a `causeway calls --top` JSON answer.
fn top_calls(top: &Value, name: &str) -> Option<u64> {
    top["top"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"] == name)
        .map(|f| f["calls"].as_u64().unwrap())
}

fn calls_json(trace: &Path, args: &[&str]) -> Value {
    let o = causeway()
        .args(["calls", "--json"])
        .args(args)
        .arg(trace)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "causeway calls {args:?} {}: {} {}",
        trace.display(),
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Instances of a call-chain signature (`causeway calls` exits 1 when there are none).
fn instances(trace: &Path, sig: &str) -> usize {
    let o = causeway()
        .args(["calls", "--json", "--match", sig])
        .arg(trace)
        .output()
        .unwrap();
    let n = serde_json::from_slice::<Value>(&o.stdout)
        .map(|v| v["matches"]["instances"].as_array().map_or(0, |a| a.len()))
        .unwrap_or_else(|e| panic!("{sig}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!(o.status.code(), Some(if n > 0 { 0 } else { 1 }), "{sig}");
    n
}

/// Runs patched.c; with `one_buffer`, CAUSEWAY_THREADS=1 leaves the two other threads
/// untraced (their patched calls skip the stubs), which must change nothing but the
/// dump.
/// With `by_byte`, CAUSEWAY_PATCH=byte switches every entry by its first byte (as
/// for libraries loaded while threads run), which must change nothing but the bytes.
fn case(static_link: bool, one_buffer: bool, by_byte: bool) {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), static_link);
    let mut cmd = traced(&exe, dir.path(), "signal=off,stall=off");
    cmd.env("CAUSEWAY_THREADS", if one_buffer { "1" } else { "16" });
    if by_byte {
        cmd.env("CAUSEWAY_PATCH", "byte");
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("the program's report");
    // Entry bytes: the jump while on, one 5-byte nop when off. A linked libcauseway.a
    // starts after the program's priority-100 constructor, which sees the compiler's
    // five one-byte nops; a shared one starts before any of the program's.
    if static_link {
        assert_eq!(r["before"], "9090909090", "{r}");
    } else {
        assert!(r["before"].as_str().unwrap().starts_with("e9"), "{r}");
    }
    if by_byte {
        assert_eq!(r["on"], "e990909090", "{r}");
        assert_eq!(r["off"], "9090909090", "{r}");
    } else {
        assert!(r["on"].as_str().unwrap().starts_with("e9"), "{r}");
        assert_eq!(r["off"], "0f1f440000", "{r}");
    }
    // Values through the trampolines.
    assert_eq!(r["s"], 60200, "{r}");
    assert_eq!(r["ws"], 3001000, "{r}");
    assert_eq!(r["d"], 6.0, "{r}");
    assert_eq!(r["d2"], 3.0, "{r}");
    assert_eq!(r["va"], 15, "{r}");
    assert_eq!(r["vd"], 0.875, "{r}");
    assert_eq!(r["big"], serde_json::json!([40, 41, 42]), "{r}");
    assert_eq!(r["jumped"], 1);
    assert_eq!(r["quiet"], 46);
    assert_eq!(r["sites"], 10, "{r}");
    assert_eq!(r["skipped"], 0, "{r}");
    assert_eq!(r["dumped"], 0, "{r} {stderr}");
    let trace = PathBuf::from(r["trace"].as_str().unwrap());
    // 200 top_a calls on the main thread and 1000 on the worker, each with two leaves;
    // the call after cw_stop is not in the dump (it came after it anyway).
    let top_a = if one_buffer { 200 } else { 1200 };
    assert_eq!(instances(&trace, "top_a>mid_b>leaf_c"), 2 * top_a);
    // The longjmp: the three skipped frames closed; the calls after it are main's.
    assert_eq!(instances(&trace, "jump_top>jump_mid>jump_deep"), 1);
    assert_eq!(instances(&trace, "jump_deep>top_a"), 0);
    assert_eq!(instances(&trace, "jump_top>top_a"), 0);
    let top = calls_json(&trace, &["--top", "100"]);
    let count = |name: &str| top_calls(&top, name);
    assert_eq!(count("top_a"), Some(top_a as u64), "{top:#}");
    assert_eq!(count("leaf_c"), Some(2 * top_a as u64), "{top:#}");
    assert_eq!(count("scale"), Some(if one_buffer { 1 } else { 2 }));
    assert_eq!(count("sum_va"), Some(1));
    assert_eq!(count("sum_vd"), Some(1));
    assert_eq!(count("make_big"), Some(1));
    assert_eq!(count("jump_deep"), Some(1));
    assert_eq!(count("look_before"), None, "not patchable");
}

#[test]
fn patched_entries_trace_every_call_with_the_library_linked_statically() {
    case(true, false, false);
}

#[test]
fn patched_entries_trace_every_call_through_a_stub_to_a_shared_library() {
    case(false, false, false);
}

#[test]
fn patched_entries_switched_by_their_first_byte_trace_the_same_calls() {
    case(true, false, true);
    case(false, true, true);
}

#[test]
fn patched_calls_of_threads_past_the_buffer_limit_run_untraced_and_right() {
    case(true, true, false);
}

// ---- linking a program that references nothing of the library ----------------------

/// libcauseway's directory, with the pkg-config files build-libcauseway.sh writes
/// beside the libraries (linked again if an older script made the libraries).
fn lib_dir() -> PathBuf {
    let dir = common::libcauseway()
        .parent()
        .expect("libcauseway.so has a directory")
        .to_path_buf();
    if !dir.join("causeway-static.pc").exists() {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/build-libcauseway.sh");
        let st = Command::new("bash")
            .arg(script)
            .arg(&dir)
            .status()
            .expect("run build-libcauseway.sh");
        assert!(st.success(), "build-libcauseway.sh failed");
    }
    dir
}

/// `pkg-config ARGS` over libcauseway's own .pc files, split into arguments.
fn pkg_config(dir: &Path, args: &[&str]) -> Vec<String> {
    let o = Command::new("pkg-config")
        .env("PKG_CONFIG_PATH", dir)
        .args(args)
        .output()
        .expect("run pkg-config (scripts/setup.sh installs it)");
    assert!(
        o.status.success(),
        "pkg-config {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// How patched_plain.c is linked with libcauseway.
#[derive(Clone, Copy, Debug)]
enum Link {
    /// libcauseway.a on the command line and nothing else: the static linker takes none
    /// of it, since the program references none of its symbols.
    BareArchive,
    /// `pkg-config --libs causeway-static`: the archive plus the link anchor.
    PkgConfigStatic,
    /// `-Wl,--as-needed` then `pkg-config --libs causeway`: the shared library, kept
    /// as needed only through the anchor.
    PkgConfigSharedAsNeeded,
}

fn build_plain(dir: &Path, link: Link) -> PathBuf {
    let lib = lib_dir();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/progs/patched_plain.c");
    let exe = dir.join(format!("plain-{link:?}"));
    let mut cc = Command::new("cc");
    cc.args(["-O2", "-g", "-fpatchable-function-entry=5", "-o"])
        .arg(&exe)
        .arg(&src);
    match link {
        Link::BareArchive => {
            cc.arg(lib.join("libcauseway.a"))
                .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lgcc_s"]);
        }
        Link::PkgConfigStatic => {
            cc.args(pkg_config(&lib, &["--libs", "causeway-static"]));
        }
        Link::PkgConfigSharedAsNeeded => {
            cc.arg("-Wl,--as-needed")
                .args(pkg_config(&lib, &["--libs", "causeway"]))
                .arg(format!("-Wl,-rpath,{}", lib.display()));
        }
    }
    let o = cc.output().expect("run cc");
    assert!(
        o.status.success(),
        "cc {link:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    exe
}

/// Runs the program with an exit dump; returns its entry bytes, its sum and the
/// traces it wrote.
fn run_plain(exe: &Path, out: &Path) -> (String, i64, Vec<PathBuf>) {
    let o = traced(exe, out, "exit,signal=off,stall=off")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{}: {stdout} {}",
        exe.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    let mut words = stdout.split_whitespace();
    let bytes = words.next().expect("entry bytes").to_string();
    let sum = words.next().and_then(|w| w.parse().ok()).expect("sum");
    let traces = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cwt"))
        .collect();
    (bytes, sum, traces)
}

/// Builds and runs patched_plain.c linked as `link`: its entry bytes and the traces it
/// wrote, in a directory that lives as long as the returned guard.
fn plain_case(link: Link) -> (tempfile::TempDir, String, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_plain(dir.path(), link);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (bytes, sum, traces) = run_plain(&exe, &out);
    // sum over i < 500 of (2i + 1) + (2(i + 1) + 1): the calls ran right either way.
    assert_eq!(sum, 501_000, "{link:?}");
    (dir, bytes, traces)
}

fn assert_patched_and_traced(link: Link) {
    let (_dir, bytes, traces) = plain_case(link);
    assert!(bytes.starts_with("e9"), "{link:?}: entry {bytes}");
    assert_eq!(traces.len(), 1, "{link:?}: one exit dump, got {traces:?}");
    let trace = &traces[0];
    assert_eq!(instances(trace, "outer>inner"), 1000, "{link:?}");
    let top = calls_json(trace, &["--top", "10"]);
    let calls = |name: &str| {
        top["top"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["function"] == name)
            .and_then(|f| f["calls"].as_u64())
    };
    assert_eq!(calls("outer"), Some(500), "{top:#}");
    assert_eq!(calls("inner"), Some(1000), "{top:#}");
}

#[test]
fn a_program_referencing_nothing_of_the_archive_is_not_patched_without_the_anchor() {
    // The pitfall the anchor exists for: the constructor never runs, nothing is dumped.
    let (_dir, bytes, traces) = plain_case(Link::BareArchive);
    assert_eq!(bytes, "9090909090");
    assert!(traces.is_empty(), "{traces:?}");
}

#[test]
fn the_static_pkg_config_line_patches_a_program_referencing_nothing() {
    assert_patched_and_traced(Link::PkgConfigStatic);
}

#[test]
fn the_shared_pkg_config_line_survives_as_needed() {
    assert_patched_and_traced(Link::PkgConfigSharedAsNeeded);
}

// ---- keyed trace points (CW_KEYED) -------------------------------------------------

/// Builds keyed.c, linked with libcauseway statically or as a shared library.
fn build_keyed(dir: &Path, static_link: bool) -> PathBuf {
    let exe = dir.join(if static_link {
        "keyed-static"
    } else {
        "keyed-shared"
    });
    compile(&[prog("keyed.c")], &exe, &["-O2", "-g"], static_link);
    exe
}

/// Runs keyed.c: every span while on is in the dump, none while off.
fn keyed_case(static_link: bool, start_off: bool) {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_keyed(dir.path(), static_link);
    let mut cmd = traced(&exe, dir.path(), "signal=off,stall=off");
    if start_off {
        cmd.env("CAUSEWAY_START", "off").arg("stay-off");
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("the program's report");
    // Two spans of two trace points each; a compiler may copy a trace point (more
    // sites), never drop one.
    assert!(r["keys"].as_u64().unwrap() >= 4, "{r}");
    assert_eq!(r["skipped"], 0, "{r}");
    // top(i) = 6i + 5: summed over i < 100 twice and i < 50 once; i < 1000.
    assert_eq!(r["s"], 2 * 30_200 + 7_600, "{r}");
    assert_eq!(r["ws"], 3_002_000, "{r}");
    assert_eq!(r["dumped"], 0, "{r} {stderr}");
    let trace = PathBuf::from(r["trace"].as_str().unwrap());
    if start_off {
        // The dump holds the threads and no call at all.
        let o = causeway().arg("calls").arg(&trace).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains("no calls"), "{err}");
    } else {
        let n = 100 + 1000 + 100;
        assert_eq!(instances(&trace, "top>leaf"), 2 * n, "{r}");
        let top = calls_json(&trace, &["--top", "10"]);
        let count = |name: &str| top_calls(&top, name);
        assert_eq!(count("top"), Some(n as u64), "{top:#}");
        assert_eq!(count("leaf"), Some(2 * n as u64), "{top:#}");
    }
}

#[test]
fn keyed_trace_points_record_while_on_and_not_while_off() {
    keyed_case(true, false);
}

#[test]
fn keyed_trace_points_in_a_program_using_the_shared_library() {
    keyed_case(false, false);
}

#[test]
fn keyed_trace_points_stay_nops_when_tracing_starts_off() {
    keyed_case(true, true);
}

#[test]
fn keyed_spans_in_a_cpp_inline_function_link_and_trace_once() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("keyed-cxx");
    // -O0: the inline function stays a function, emitted in both units.
    let src = [prog("keyed_cxx/a.cpp"), prog("keyed_cxx/b.cpp")];
    compile(&src, &exe, &["-O0", "-g"], true);
    let out = traced(&exe, dir.path(), "signal=off,stall=off")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w: Vec<&str> = stdout.split_whitespace().collect();
    // sum over i < 10 of (7i + 1) + 7i; one copy of the function: its two sites.
    assert_eq!(w[..3], ["640", "2", "0"], "{stdout}");
    let top = calls_json(Path::new(w[3]), &["--top", "5"]);
    assert_eq!(top_calls(&top, "shared_fn"), Some(20), "{top:#}");
}

// ---- libraries loaded with dlopen ------------------------------------------------------

/// keyed_dlopen.c loads two builds of keyed_plugin.c after the library started: the
/// trace points of the first are found by the control thread alone; the second,
/// loaded while another thread runs, is found by `cw_rescan()`, its patched entry
/// switched by its first byte (0xe9 on, 0x90 off, the four nops after it never
/// touched); after the first is unloaded, switching tracing off and on again writes
/// nothing where it was, and its sites are forgotten; loaded again, its entry is
/// traced again (where it was before, through its old mirror).
#[test]
fn trace_points_of_libraries_loaded_later_are_switched_and_forgotten_when_unloaded() {
    let dir = tempfile::tempdir().unwrap();
    let inc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../causeway-inproc/c");
    let mut plugs = Vec::new();
    for n in ["plug1", "plug2"] {
        let so = dir.path().join(format!("lib{n}.so"));
        let o = Command::new("cc")
            .args([
                "-O2",
                "-g",
                "-fPIC",
                "-shared",
                "-fpatchable-function-entry=5",
            ])
            .arg(format!("-DPLUG={n}"))
            .arg("-I")
            .arg(&inc)
            .arg("-o")
            .arg(&so)
            .arg(prog("keyed_plugin.c"))
            .output()
            .expect("run the compiler");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        plugs.push(so);
    }
    let exe = dir.path().join("keyed-dlopen");
    compile(&[prog("keyed_dlopen.c")], &exe, &["-O2", "-g"], false);
    let out = traced(&exe, dir.path(), "signal=off,stall=off")
        .args(&plugs)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("the program's report");
    let keys: Vec<u64> = r["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    // Two spans of two trace points in each library (a compiler may copy one).
    assert_eq!(keys[0], 0, "{r}");
    assert!(keys[1] >= 4 && keys[2] >= keys[1] + 4, "{r}");
    assert_eq!(keys[3], keys[2] - keys[1], "plug1's sites forgotten: {r}");
    // The control thread ticks every 100 ms here.
    assert!(r["waited_ms"].as_u64().unwrap() < 3000, "{r}");
    assert_eq!(r["entries"], serde_json::json!([0, 1, 2, 2]), "{r}");
    assert_eq!(r["skipped"], serde_json::json!([0, 0]), "{r}");
    assert_eq!(r["entry_on"], "e990909090", "{r}");
    assert_eq!(r["entry_off"], "9090909090", "{r}");
    assert_eq!(r["rescan"], serde_json::json!([0, 0, 0]), "{r}");
    // top(i) = 6i + 5, entry(i) = 2i + 1.
    assert_eq!(r["s1"], 30_200 + 10_000 + 100, "{r}");
    assert_eq!(r["s2"], 320 + 100 + 320, "{r}");
    assert_eq!(r["dumped"], serde_json::json!([0, 0]), "{r} {stderr}");

    let first = calls_json(
        Path::new(r["traces"][0].as_str().unwrap()),
        &["--top", "20"],
    );
    let count = |name: &str| top_calls(&first, name);
    assert_eq!(count("plug1_top"), Some(100), "{first:#}");
    assert_eq!(count("plug1_leaf"), Some(200), "{first:#}");
    assert_eq!(count("plug1_entry"), Some(100), "{first:#}");
    assert_eq!(count("plug2_top"), Some(10), "{first:#}");
    assert_eq!(count("plug2_leaf"), Some(20), "{first:#}");
    assert_eq!(count("plug2_entry"), Some(10), "{first:#}");
    let second = calls_json(
        Path::new(r["traces"][1].as_str().unwrap()),
        &["--top", "20"],
    );
    assert_eq!(top_calls(&second, "plug2_top"), Some(20), "{second:#}");
    assert_eq!(top_calls(&second, "plug2_leaf"), Some(40), "{second:#}");
    // Loaded where it was, plug1's earlier calls are named again.
    let again = if r["same_place"] == 1 { 110 } else { 10 };
    assert_eq!(
        top_calls(&second, "plug1_entry"),
        Some(again),
        "{r} {second:#}"
    );
}
