//! Compiles the eBPF recorder with clang and generates its Rust skeleton.
//!
//! `vmlinux.h` is generated from the build machine's kernel BTF with bpftool: the
//! programs use CO-RE (field accesses are relocated at load time), so the header only
//! needs the type names and fields, not this kernel's exact layout.

use libbpf_cargo::SkeletonBuilder;
use std::path::PathBuf;
use std::process::Command;

const SRC: &str = "src/bpf/recorder.bpf.c";

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
    SkeletonBuilder::new()
        .source(SRC)
        .clang_args([
            "-I".into(),
            out.clone().into_os_string(),
            "-Isrc/bpf".into(),
            "-O2".into(),
            "-Wall".into(),
            "-Wno-unused-function".into(),
        ])
        .build_and_generate(out.join("recorder.skel.rs"))
        .expect("compile src/bpf/recorder.bpf.c");
    println!("cargo:rerun-if-changed={SRC}");
    println!("cargo:rerun-if-changed=src/bpf");
    println!("cargo:rerun-if-env-changed=CAUSEWAY_BTF");
}
