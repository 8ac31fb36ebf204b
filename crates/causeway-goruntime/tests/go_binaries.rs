//! The runtime facts of real Go binaries: the zoo's go-commit as built by the
//! machine's Go, the same source built without DWARF, without symbols and stripped
//! (the same facts), its function table against its symbol table, and a binary that
//! is not Go.

use causeway_goruntime::{Inspection, Pclntab, PclntabCache, inspect};
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
fn stripped_builds_give_the_same_runtime_as_the_unstripped_one() {
    let dir = tempfile::tempdir().unwrap();
    let full = inspect(&build("", dir.path())).unwrap();
    assert!(matches!(full, Inspection::Go(_)), "{full:?}");
    let no_dwarf = build("-w", dir.path());
    assert_eq!(inspect(&no_dwarf).unwrap(), full, "-w build");
    let no_symbols = build("-s -w", dir.path());
    assert_eq!(inspect(&no_symbols).unwrap(), full, "-s -w build");
    // `strip` on the full build (what packaging does) removes the same.
    let stripped = dir.path().join("go-commit-stripped");
    std::fs::copy(build("", dir.path()), &stripped).unwrap();
    let status = Command::new("strip").arg(&stripped).status().unwrap();
    assert!(status.success());
    assert_eq!(inspect(&stripped).unwrap(), full, "stripped build");
}

#[test]
fn the_function_table_names_what_the_symbol_table_names() {
    use object::{Object, ObjectSymbol, SymbolKind};
    let dir = tempfile::tempdir().unwrap();
    let bin = build("", dir.path());
    let data = std::fs::read(&bin).unwrap();
    let tab = Pclntab::from_bytes(&data).unwrap().expect("a .gopclntab");
    assert!(tab.len() > 1000, "{} functions", tab.len());
    let obj = object::File::parse(&*data).unwrap();
    let mut checked = 0;
    for s in obj.symbols().filter(|s| s.kind() == SymbolKind::Text) {
        let name = s.name().unwrap();
        // The C objects of cgo have section symbols (`net(.text)`, `(.text.unlikely)`) beside their
        // functions' at the same address.
        if name.contains("(.text") || s.size() == 0 {
            continue;
        }
        // The symbol table marks assembly functions' ABI (`.abi0`) and writes the
        // compiler's `·` as `.`; the runtime's own table does neither.
        let name = name.trim_end_matches(".abi0");
        let f = tab
            .function_at(s.address())
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(
            (f.name.replace('·', "."), f.entry),
            (name.into(), s.address())
        );
        assert_eq!(tab.function_at(s.address() + s.size() - 1), Some(f));
        checked += 1;
    }
    assert!(checked > 1000, "{checked} functions checked");
    assert!(tab.function_at(0x1000).is_none());

    // The probe points of a build without symbols, named back from its table.
    let no_symbols = build("-s -w", dir.path());
    let Inspection::Go(rt) = inspect(&no_symbols).unwrap() else {
        panic!("-s -w build not followable");
    };
    let tab = Pclntab::open(&no_symbols).unwrap().unwrap();
    let name = |off| tab.function_at_offset(off).map(|f| f.name);
    assert_eq!(name(rt.probes.gopark), Some("runtime.gopark"));
    assert_eq!(name(rt.probes.execute), Some("runtime.execute"));
    assert_eq!(name(rt.probes.ready), Some("runtime.ready"));
    assert_eq!(name(rt.probes.injectglist), Some("runtime.injectglist"));
    assert!(
        tab.functions().any(|f| f.name == "main.(*server).commit"),
        "the program's own functions"
    );
    // The recorder's cache, by path and file offset.
    let mut cache = PclntabCache::default();
    let path = no_symbols.to_str().unwrap();
    let (name, into) = cache.name_at_offset(path, rt.probes.gopark).unwrap();
    assert_eq!(name, "runtime.gopark");
    assert!(into < 32, "the probe is in the prologue: {into}");
    assert_eq!(cache.name_at_offset("/bin/sh", 0x1000), None);
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

/// Position-independent and externally linked builds (as some distributions make
/// them): the same facts with and without symbols.
#[test]
fn pie_and_externally_linked_builds_read_the_same_stripped() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tiny");
    for (i, flags) in [&["-buildmode=pie"][..], &["-ldflags=-linkmode=external"]]
        .iter()
        .enumerate()
    {
        let build = |extra: &[&str], name: &str| {
            let out = dir.path().join(format!("{name}-{i}"));
            let status = Command::new("go")
                .arg("build")
                .args(*flags)
                .args(extra)
                .arg("-o")
                .arg(&out)
                .arg(".")
                .current_dir(&tiny)
                .env("GOTOOLCHAIN", "local")
                .status()
                .unwrap();
            assert!(status.success(), "go build {flags:?} {extra:?}");
            out
        };
        let full = inspect(&build(&[], "full")).unwrap();
        assert!(matches!(full, Inspection::Go(_)), "{flags:?}: {full:?}");
        // -ldflags given twice: the last wins, so the linking mode is repeated.
        let sw = match flags[0] {
            "-buildmode=pie" => build(&["-ldflags=-s -w"], "sw"),
            _ => build(&["-ldflags=-linkmode=external -s -w"], "sw"),
        };
        assert_eq!(inspect(&sw).unwrap(), full, "{flags:?} -s -w");
    }
}
