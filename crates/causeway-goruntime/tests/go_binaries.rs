//! The runtime facts of real Go binaries: the zoo's go-commit as built by the
//! machine's Go, the same source built without DWARF and without symbols, and a
//! binary that is not Go.

use causeway_goruntime::{Inspection, inspect};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Build the go-commit workload with extra linker flags into a temporary directory.
fn build(ldflags: &str, dir: &Path) -> PathBuf {
    let out = dir.join("go-commit");
    let status = Command::new("go")
        .args(["build", "-ldflags", ldflags, "-o"])
        .arg(&out)
        .arg("./go-commit")
        .current_dir(repo().join("workloads/go"))
        .env("GOTOOLCHAIN", "local")
        .status()
        .expect("the go command runs (scripts/setup.sh installs it)");
    assert!(status.success(), "go build -ldflags '{ldflags}' failed");
    out
}

#[test]
fn a_go_program_gives_its_probe_points_layout_and_wait_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let bin = build("", dir.path());
    let Inspection::Go(rt) = inspect(&bin).unwrap() else {
        panic!("go-commit not read as a followable Go program");
    };
    eprintln!("{} {:?} {:?}", rt.version, rt.probes, rt.layout);
    assert!(rt.version.starts_with("go1."), "version {:?}", rt.version);
    let p = rt.probes;
    let offsets = [p.execute, p.gopark, p.ready, p.injectglist];
    assert!(offsets.iter().all(|&o| o > 0), "{p:?}");
    let mut sorted = offsets.to_vec();
    sorted.dedup();
    assert_eq!(sorted.len(), 4, "four distinct functions: {p:?}");
    // goid follows the stack bounds, the scheduler context and the panic/defer
    // links at the start of runtime.g, so it is never at the very start.
    let l = rt.layout;
    assert!(l.g_goid >= 16 && l.g_goid < 1024, "{l:?}");
    assert!(l.g_startpc > l.g_goid, "{l:?}");
    assert!(
        l.g_parent_goid.is_some(),
        "Go 1.21+ records the parent: {l:?}"
    );
    assert_eq!(l.glist_head, 0, "{l:?}");
    let poll = l.poll.expect("pollDesc in the DWARF");
    assert!(poll.wg == poll.rg + 8 && poll.this > poll.wg, "{poll:?}");
    assert!(rt.io_wait_reason().is_some_and(|r| r > 0));
    for reason in ["chan receive", "chan send", "IO wait", "sleep"] {
        assert!(
            rt.wait_reasons.iter().any(|r| r == reason),
            "{reason:?} missing from {:?}",
            rt.wait_reasons
        );
    }
    assert_eq!(rt.wait_reasons[0], "", "waitReasonZero has no name");
}

#[test]
fn stripped_go_programs_are_named_and_refused() {
    let dir = tempfile::tempdir().unwrap();
    let no_dwarf = build("-w", dir.path());
    match inspect(&no_dwarf).unwrap() {
        Inspection::Unsupported { version, reason } => {
            assert!(version.is_some(), "the symbol table still says the version");
            assert!(reason.contains("-w"), "{reason}");
        }
        other => panic!("-w build: {other:?}"),
    }
    let no_symbols = build("-s -w", dir.path());
    match inspect(&no_symbols).unwrap() {
        Inspection::Unsupported { reason, .. } => assert!(reason.contains("-s"), "{reason}"),
        other => panic!("-s -w build: {other:?}"),
    }
}

#[test]
fn other_programs_are_not_go() {
    assert_eq!(inspect(Path::new("/bin/sh")).unwrap(), Inspection::NotGo);
    assert!(inspect(Path::new("/nonexistent/go-program")).is_err());
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not an executable").unwrap();
    assert!(inspect(&text).is_err());
}
