//! The one build step of causeway's BPF crates (the recorder and the live probes),
//! called from their `build.rs`: `vmlinux.h` generated from the build machine's kernel
//! BTF with bpftool, each `src/bpf/NAME.bpf.c` compiled with clang, and its Rust
//! skeleton `NAME.skel.rs` written to `OUT_DIR`.
//!
//! The programs use CO-RE (field accesses are relocated at load time), so `vmlinux.h`
//! only needs the type names and fields, not this kernel's exact layout;
//! `CAUSEWAY_BTF` names another BTF file (a vmlinux with BTF) to build against.
//!
//! The headers every BPF program may share (`include/causeway/*.bpf.h`: log2 slots,
//! per-CPU counters) are on the include path as `causeway/NAME.bpf.h`.

use libbpf_cargo::SkeletonBuilder;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The shared BPF headers' directory.
pub fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// Write `vmlinux.h` into `out` from the kernel's BTF (or `CAUSEWAY_BTF`'s file);
/// panics with what to do when bpftool or the BTF is missing (a build script's way to
/// fail).
fn vmlinux_h(out: &Path) {
    let btf = std::env::var("CAUSEWAY_BTF").unwrap_or_else(|_| "/sys/kernel/btf/vmlinux".into());
    let dump = Command::new("bpftool")
        .args(["btf", "dump", "file", &btf, "format", "c"])
        .output();
    match dump {
        Ok(o) if o.status.success() => {
            std::fs::write(out.join("vmlinux.h"), o.stdout).expect("write vmlinux.h")
        }
        Ok(o) => panic!(
            "bpftool could not read kernel BTF at {btf} ({}); set CAUSEWAY_BTF to a vmlinux with BTF",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => panic!("bpftool not found ({e}); run scripts/setup.sh (apt package bpftool)"),
    }
}

/// Compile `src/bpf/NAME.bpf.c` for each name in `programs` (headers in `src/bpf` and
/// the shared ones) with `-O2 -Wall` and `extra` clang arguments, and generate their
/// skeletons. Panics on failure, naming the source.
pub fn build(programs: &[&str], extra: &[&str]) {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    vmlinux_h(&out);
    let include = include_dir();
    for name in programs {
        let src = format!("src/bpf/{name}.bpf.c");
        let mut args: Vec<OsString> = vec![
            "-I".into(),
            out.clone().into_os_string(),
            "-Isrc/bpf".into(),
            "-I".into(),
            include.clone().into_os_string(),
            "-O2".into(),
            "-Wall".into(),
        ];
        args.extend(extra.iter().map(OsString::from));
        SkeletonBuilder::new()
            .source(&src)
            .clang_args(args)
            .build_and_generate(out.join(format!("{name}.skel.rs")))
            .unwrap_or_else(|e| panic!("compile {src}: {e}"));
        println!("cargo:rerun-if-changed={src}");
    }
    println!("cargo:rerun-if-changed=src/bpf");
    println!("cargo:rerun-if-changed={}", include.display());
    println!("cargo:rerun-if-env-changed=CAUSEWAY_BTF");
}
