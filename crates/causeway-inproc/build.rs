//! Builds the C half of libcauseway (trace points, buffers, control thread) into the
//! crate, so `cargo build` alone produces a complete library.

fn main() {
    println!("cargo:rerun-if-changed=c/causeway.c");
    println!("cargo:rerun-if-changed=c/causeway.h");
    println!("cargo:rerun-if-changed=c/cw_dump.h");
    println!("cargo:rerun-if-changed=c/patch.c");
    println!("cargo:rerun-if-changed=c/cw_patch.h");
    cc::Build::new()
        .file("c/causeway.c")
        .file("c/patch.c")
        .include("c")
        .opt_level(2)
        .flag("-fno-omit-frame-pointer")
        .flag_if_supported("-Wextra")
        .compile("causeway_c");
    println!("cargo:rustc-link-lib=pthread");
    println!("cargo:include={}/c", env!("CARGO_MANIFEST_DIR"));
}
