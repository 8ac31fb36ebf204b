//! `causeway watch` and `record --watch` with real hardware watchpoints and uprobes:
//! attaching to a running process (`-p`), threads that live less than a
//! millisecond (watched from their first instruction), a variable of a shared
//! object, the errors a user can make, and the instructions found for uprobes
//! (checked against objdump).
//!
//! The recording tests need root and the built zoo; skipped without root unless
//! `CAUSEWAY_REQUIRE_ROOT=1` (then they fail, as in CI).

mod common;

use causeway_format::{EventKind, Marker, TraceReader};
use common::{build_prog, can_record, causeway, ok, workload};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Data-flag events of a trace: (thread, address, is a write).
fn flag_events(path: &Path) -> Vec<(u32, u64, bool, u64)> {
    let mut r = TraceReader::open(path).unwrap();
    let mut v = Vec::new();
    for e in r.events() {
        if let EventKind::Marker {
            tid,
            marker: Marker::DataFlag { addr, access, ip },
        } = e.unwrap().kind
        {
            v.push((tid.0, addr, access.is_write(), ip));
        }
    }
    v
}

/// `causeway watch ARGS -- PROG`: the JSON summary and the trace. Recorded again
/// (up to six times) if the program died of the platform's stray SIGTRAP (see
/// docs/causeway-watch.md).
fn watch_prog(dir: &Path, name: &str, args: &[&str], prog: &[&Path]) -> (Value, PathBuf) {
    let out = dir.join(format!("{name}.cwt"));
    let json = dir.join(format!("{name}.json"));
    let mut summary = Value::Null;
    for _ in 0..6 {
        let o = causeway()
            .arg("watch")
            .args(args)
            .arg("-o")
            .arg(&out)
            .arg(format!("--json={}", json.display()))
            .arg("--")
            .args(prog)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "causeway watch {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        summary = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        if summary["command_exit_code"] != 128 + 5 {
            break;
        }
    }
    assert_eq!(summary["command_exit_code"], 0, "{summary:#}");
    (summary, out)
}

#[test]
fn threads_that_live_under_a_millisecond_are_watched_from_their_first_instruction() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let prog = build_prog(dir.path(), "flag-threads");
    // Twenty threads each write `flag` once and exit at once.
    let writers = |via: &str| {
        let (s, trace) = watch_prog(
            dir.path(),
            via,
            &["--symbol", "flag", "--via", via],
            &[prog.as_path()],
        );
        let addr = s["watched"]["addr"].as_u64().unwrap();
        let ev = flag_events(&trace);
        assert!(ev.iter().all(|e| e.1 == addr), "{ev:?}");
        let w: Vec<u32> = ev.iter().filter(|e| e.2).map(|e| e.0).collect();
        (s, w)
    };
    // Inherited watchpoints, attached while the command is stopped at its exec.
    let (s, w) = writers("breakpoint");
    assert_eq!(s["counters"]["watch_inherited"], 1, "{s:#}");
    assert_eq!(w.len(), 20, "{w:?}");
    assert_eq!(w.iter().collect::<BTreeSet<_>>().len(), 20, "{w:?}");
    // Uprobes on the store, bound to the process: every thread too.
    let (s, w) = writers("uprobe");
    assert!(
        s["counters"]["watch_uprobes"].as_u64().unwrap() >= 2,
        "{s:#}"
    );
    assert_eq!(w.len(), 20, "{w:?}");
    // Per-thread watchpoints, new threads looked for every 10 ms: the threads are
    // gone before they are found.
    let (s, w) = writers("thread-breakpoint");
    assert!(s["counters"]["watch_inherited"].is_null(), "{s:#}");
    assert!(w.len() < 20, "the poll saw all {} writes: {w:?}", w.len());
}

#[test]
fn a_variable_of_a_shared_object_is_found_and_told_apart_by_lib_name() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/progs");
    let lib = dir.path().join("libcwflag.so");
    let st = Command::new("cc")
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(src.join("cwflag.c"))
        .status()
        .unwrap();
    assert!(st.success());
    let exe = dir.path().join("flag-lib");
    let st = Command::new("cc")
        .args(["-O2", "-pthread", "-o"])
        .arg(&exe)
        .arg(src.join("flag-lib.c"))
        .arg(format!("-L{}", dir.path().display()))
        .arg("-lcwflag")
        .arg(format!("-Wl,-rpath,{}", dir.path().display()))
        .status()
        .unwrap();
    assert!(st.success());
    // The plain name is the executable's: main writes it five times.
    let (s, trace) = watch_prog(dir.path(), "exe", &["--symbol", "shared_flag"], &[&exe]);
    let exe_addr = s["watched"]["addr"].as_u64().unwrap();
    let w: Vec<u32> = flag_events(&trace)
        .iter()
        .filter(|e| e.2)
        .map(|e| e.0)
        .collect();
    assert_eq!(w.len(), 5, "{w:?}");
    assert_eq!(w.iter().collect::<BTreeSet<_>>().len(), 1, "{w:?}");
    // LIB:NAME is the library's, mapped after the exec: five threads write it.
    let (s, trace) = watch_prog(
        dir.path(),
        "lib",
        &["--symbol", "libcwflag:shared_flag"],
        &[&exe],
    );
    let lib_addr = s["watched"]["addr"].as_u64().unwrap();
    assert_ne!(lib_addr, exe_addr);
    let ev = flag_events(&trace);
    assert!(ev.iter().all(|e| e.1 == lib_addr), "{ev:?}");
    // The setters write through lib_set's one store. The dynamic loader, when it maps
    // the library, zeroes the rest of the page after its data (where the variable is)
    // from the main thread: a watch armed quickly enough records those writes too, at
    // other instructions and before any setter's (seen once in a loaded CI run).
    let setter_ip = ev.iter().rfind(|e| e.2).map(|e| e.3);
    let w: Vec<u32> = ev
        .iter()
        .filter(|e| e.2 && Some(e.3) == setter_ip)
        .map(|e| e.0)
        .collect();
    assert_eq!(w.len(), 5, "{ev:?}");
    assert_eq!(w.iter().collect::<BTreeSet<_>>().len(), 5, "{ev:?}");
    let first_setter = ev.iter().position(|e| e.2 && Some(e.3) == setter_ip);
    let last_other = ev.iter().rposition(|e| e.2 && Some(e.3) != setter_ip);
    assert!(last_other < first_setter, "{ev:?}");
    // A library that does not define it.
    let o = causeway()
        .args(["watch", "--symbol", "libc:shared_flag", "-o"])
        .arg(dir.path().join("none.cwt"))
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no symbol `shared_flag`"));
}

#[test]
fn the_instructions_that_access_a_flag_are_those_objdump_shows() {
    // Where `--via uprobe` puts its probes: every instruction of spin-flag whose
    // operand is `done`, on an instruction boundary, loads and stores told apart.
    let exe = workload("spin-flag");
    let data = std::fs::read(&exe).unwrap();
    let var = causeway_record::watch::find_symbol(&data, "done", None).unwrap();
    let scan = causeway_record::watch::accessing_instructions(&data, var.vaddr, var.len);
    let o = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn", "-M", "intel"])
        .arg(&exe)
        .output()
        .expect("objdump (binutils)");
    let text = String::from_utf8_lossy(&o.stdout);
    // "  4011d6:\tmov    rax,QWORD PTR [rip+0x2e43]        # 4020 <done>"
    let refs: Vec<(u64, String)> = text
        .lines()
        .filter(|l| l.ends_with("<done>"))
        .filter_map(|l| {
            let (addr, rest) = l.trim().split_once(':')?;
            Some((u64::from_str_radix(addr, 16).ok()?, rest.trim().to_string()))
        })
        .collect();
    assert!(!refs.is_empty(), "objdump shows no access to done");
    let found: BTreeSet<u64> = scan.sites.iter().map(|s| s.vaddr).collect();
    for (addr, insn) in &refs {
        if insn.starts_with("lea") {
            continue;
        }
        let site = scan.sites.iter().find(|s| s.vaddr == *addr);
        let site = site.unwrap_or_else(|| panic!("{addr:#x} {insn} not found: {scan:?}"));
        // Intel syntax: the destination first, so a store names memory first
        // (cmp and test only read theirs).
        let insn = insn.strip_prefix("lock ").unwrap_or(insn);
        let (mnemonic, ops) = insn.split_once(' ').unwrap_or((insn, ""));
        let memory_first = ops
            .trim_start()
            .split(',')
            .next()
            .is_some_and(|o| o.contains('['));
        let stores = memory_first && mnemonic != "cmp" && mnemonic != "test";
        assert_eq!(site.access.writes(), stores, "{addr:#x} {insn}");
    }
    assert_eq!(found.len(), scan.sites.len());
    assert!(
        found.iter().all(|a| refs.iter().any(|r| r.0 == *a)),
        "{scan:?}"
    );
    assert!(scan.sites.iter().any(|s| !s.access.writes()));
    assert!(scan.sites.iter().any(|s| s.access.writes()));
}

#[test]
fn the_functions_that_touch_a_flag_are_found_in_the_code() {
    // What `watch` offers for uprobes when the kernel refuses breakpoints: every
    // function of spin-flag that reads or writes `done`, and no other.
    let data = std::fs::read(workload("spin-flag")).unwrap();
    let var = causeway_record::watch::find_symbol(&data, "done", None).unwrap();
    assert_eq!(var.len, 8);
    let f = causeway_record::watch::functions_referring(&data, var.vaddr, var.len);
    for name in ["spin_until_done", "sleep_until_done", "helper_main"] {
        assert!(f.iter().any(|x| x == name), "{name} not in {f:?}");
    }
    assert!(!f.iter().any(|x| x == "compute_part"), "{f:?}");
}

#[test]
fn watch_refuses_what_it_cannot_watch() {
    // Usage errors need no privileges.
    let o = causeway()
        .args(["watch", "--symbol", "done", "--len", "3", "-p", "1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no watchpoint length"));
    let o = causeway().args(["watch", "-p", "1"]).output().unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--symbol NAME or --addr ADDR"));
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.cwt");
    let exe = workload("spin-flag");
    let o = causeway()
        .args(["watch", "--symbol", "no_such_flag", "-o"])
        .arg(&out)
        .arg("--")
        .arg(&exe)
        .args(["--seconds", "0.2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no symbol `no_such_flag`"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // `--watch` with several processes: which one's variable?
    let o = causeway()
        .args(["record", "--watch", "done", "-a", "-d", "0.1", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs one process"));
}

#[test]
fn watch_attaches_to_a_running_process_and_records_its_flag() {
    if !can_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut prog = Command::new(workload("spin-flag"))
        .args(["--seconds", "4"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Let it start its threads: they are watched from the first drain on anyway.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let out = dir.path().join("attached.cwt");
    let json = dir.path().join("summary.json");
    let o = causeway()
        .args(["watch", "--symbol", "done", "-d", "1s", "-p"])
        .arg(prog.id().to_string())
        .arg("-o")
        .arg(&out)
        .arg(format!("--json={}", json.display()))
        .output()
        .unwrap();
    let _ = prog.kill();
    let _ = prog.wait();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("watched 8 bytes at 0x"), "{err}");
    let s: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let addr = s["watched"]["addr"].as_u64().unwrap();
    assert!(
        s["counters"]["watch_threads"].as_u64().unwrap() >= 4,
        "{s:#}"
    );
    // The trace holds writes by the helpers and reads by the waiter, at the flag's
    // address, and never a read and a write for the same access.
    let mut r = TraceReader::open(&out).unwrap();
    let tables = r.tables().clone();
    let name = |tid: u32| {
        tables
            .threads
            .iter()
            .rev() // the latest name: threads name themselves after they start
            .find(|t| t.tid.0 == tid)
            .map(|t| tables.string(t.comm).to_string())
            .unwrap_or_default()
    };
    let (mut writers, mut readers) = (Vec::new(), Vec::new());
    for e in r.events() {
        let e = e.unwrap();
        if let EventKind::Marker {
            tid,
            marker: Marker::DataFlag {
                addr: a, access, ..
            },
        } = e.kind
        {
            assert_eq!(a, addr);
            let list = if access.is_write() {
                &mut writers
            } else {
                &mut readers
            };
            list.push(name(tid.0));
        }
    }
    assert!(!writers.is_empty() && !readers.is_empty());
    assert!(
        writers.iter().all(|w| w.starts_with("helper-")),
        "{writers:?}"
    );
    assert!(readers.iter().any(|r| r == "waiter"), "{readers:?}");
}

/// Instruction addresses objdump finds in `path`'s executable sections, or only in
/// `window` (start, end) when given.
fn objdump_starts(path: &Path, window: Option<(u64, u64)>) -> BTreeSet<u64> {
    let mut cmd = Command::new("objdump");
    cmd.args(["-d", "--no-show-raw-insn"]);
    if let Some((start, end)) = window {
        cmd.arg(format!("--start-address={start:#x}"))
            .arg(format!("--stop-address={end:#x}"));
    }
    let o = cmd.arg(path).output().expect("objdump (binutils)");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            // objdump pads addresses to 8 columns: past 16 MiB of text a line starts
            // with one space, not two.
            let (addr, rest) = l.strip_prefix(' ')?.trim_start().split_once(":\t")?;
            (!rest.contains("(bad)")).then_some(())?;
            u64::from_str_radix(addr.trim(), 16).ok()
        })
        .collect()
}

/// The first `len` bytes of `path`'s `.text` section, as addresses, from `objdump -h`.
fn text_window(path: &Path, len: u64) -> (u64, u64) {
    let o = Command::new("objdump")
        .arg("-h")
        .arg(path)
        .output()
        .expect("objdump (binutils)");
    let text = String::from_utf8_lossy(&o.stdout);
    // " 16 .text  07593c21  00000000029f4c80  ..." (index, name, size, VMA)
    let (size, vma) = text
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(1) == Some(&".text")).then(|| {
                (
                    u64::from_str_radix(f[2], 16).unwrap(),
                    u64::from_str_radix(f[3], 16).unwrap(),
                )
            })
        })
        .expect("a .text section");
    (vma, vma + size.min(len))
}

#[test]
fn the_sweep_lands_on_the_instructions_objdump_finds() {
    // A uprobe put inside an instruction corrupts the program: every instruction the
    // sweep decodes must be one objdump decodes too, in a small C program and in the
    // C library (hand-written assembly, AVX and AVX-512 code) and in causeway's own
    // binary (Rust), and it must miss few.
    let libc = causeway_procfs::mapped_files(&causeway_procfs::maps::read_self().unwrap())
        .into_iter()
        .find(|p| p.to_string_lossy().contains("/libc.so"))
        .expect("the test links libc");
    // causeway's test build has over 100 MiB of code, which objdump takes a minute
    // to print; its first 8 MiB (the same start for both sweeps) are thousands of
    // Rust functions, enough to show a decoder out of step.
    let own = PathBuf::from(env!("CARGO_BIN_EXE_causeway"));
    let own_window = text_window(&own, 8 << 20);
    for (path, window) in [
        (workload("spin-flag"), None),
        (libc, None),
        (own, Some(own_window)),
    ] {
        let mut ours = causeway_record::watch::instruction_starts(&std::fs::read(&path).unwrap());
        let theirs = objdump_starts(&path, window);
        if let Some((start, end)) = window {
            // The last instruction objdump prints may run past the window's end.
            let last = theirs.last().copied().unwrap_or(end);
            ours.retain(|a| *a >= start && *a <= last);
        }
        let stray: Vec<String> = ours
            .iter()
            .filter(|a| !theirs.contains(a))
            .take(10)
            .map(|a| format!("{a:#x}"))
            .collect();
        assert!(
            stray.is_empty(),
            "{}: not instruction starts: {stray:?}",
            path.display()
        );
        let found = ours.len() as f64 / theirs.len() as f64;
        eprintln!(
            "{}: {} of {} instructions",
            path.display(),
            ours.len(),
            theirs.len()
        );
        assert!(
            found > 0.95,
            "{}: only {found:.3} of objdump's",
            path.display()
        );
    }
}

#[test]
fn without_a_free_debug_register_the_watch_falls_back_to_uprobes() {
    if !can_record() {
        return;
    }
    // The program holds all four debug registers of its threads, then has short
    // threads write `flag`: breakpoints are refused, uprobes are not.
    let dir = tempfile::tempdir().unwrap();
    let exe = build_prog(dir.path(), "debugregs-taken");
    let mut prog = Command::new(&exe)
        .arg("4")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(prog.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(
        ready.trim(),
        "ready",
        "the program could not take the registers"
    );
    let pid = prog.id().to_string();
    let out = dir.path().join("fallback.cwt");
    let json = dir.path().join("fallback.json");
    ok(causeway()
        .args(["watch", "--symbol", "flag", "-d", "1s", "-p", &pid, "-o"])
        .arg(&out)
        .arg(format!("--json={}", json.display()))
        .output());
    let s: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let c = &s["counters"];
    assert_eq!(c["watch_inherit_refused"], 1, "{s:#}");
    assert_eq!(c["watch_uprobes"], 1, "{s:#}");
    let writers: BTreeSet<u32> = flag_events(&out)
        .iter()
        .filter(|e| e.2)
        .map(|e| e.0)
        .collect();
    assert!(writers.len() >= 20, "{writers:?}");
    // Watchpoints only: refused, with the reason and the way out.
    let o = causeway()
        .args([
            "watch",
            "--via",
            "breakpoint",
            "--symbol",
            "flag",
            "-d",
            "1s",
            "-p",
            &pid,
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let _ = prog.kill();
    let _ = prog.wait();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("(no free debug register)"), "{err}");
    assert!(
        err.contains("`--via uprobe` probes the instructions that access `flag`, in: writer"),
        "{err}"
    );
}
