//! Compiles the eBPF recorder (and the data-flag uprobe program of `watch`) with
//! clang and generates their Rust skeletons.
//!
//! `vmlinux.h` is generated from the build machine's kernel BTF with bpftool: the
//! programs use CO-RE (field accesses are relocated at load time), so the header only
//! needs the type names and fields, not this kernel's exact layout.

use libbpf_cargo::SkeletonBuilder;
use std::path::PathBuf;
use std::process::Command;

const SRCS: &[&str] = &["recorder", "dataflag"];

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    let vmlinux = out.join("vmlinux.h");
    let btf = std::env::var("CAUSEWAY_BTF").unwrap_or_else(|_| "/sys/kernel/btf/vmlinux".into());
    let dump = Command::new("bpftool")
        .args(["btf", "dump", "file", &btf, "format", "c"])
        .output();
    match dump {
        Ok(o) if o.status.success() => std::fs::write(&vmlinux, o.stdout).expect("write vmlinux.h"),
        Ok(o) => panic!(
            "bpftool could not read kernel BTF at {btf} ({}); set CAUSEWAY_BTF to a vmlinux with BTF",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => panic!("bpftool not found ({e}); run scripts/setup.sh (apt package bpftool)"),
    }
    for name in SRCS {
        let src = format!("src/bpf/{name}.bpf.c");
        SkeletonBuilder::new()
            .source(&src)
            .clang_args([
                "-I".into(),
                out.clone().into_os_string(),
                "-Isrc/bpf".into(),
                "-O2".into(),
                "-Wall".into(),
                "-Wno-unused-function".into(),
            ])
            .build_and_generate(out.join(format!("{name}.skel.rs")))
            .unwrap_or_else(|e| panic!("compile {src}: {e}"));
        println!("cargo:rerun-if-changed={src}");
    }
    println!("cargo:rerun-if-changed=src/bpf");
    println!("cargo:rerun-if-env-changed=CAUSEWAY_BTF");
}
