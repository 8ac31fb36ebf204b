//! Builds the C half of libcauseway (trace points, buffers, control thread) into the
//! crate, so `cargo build` alone produces a complete library.

fn main() {
    println!("cargo:rerun-if-changed=c/causeway.c");
    println!("cargo:rerun-if-changed=c/causeway.h");
    println!("cargo:rerun-if-changed=c/cw_dump.h");
    println!("cargo:rerun-if-changed=c/patch.c");
    println!("cargo:rerun-if-changed=c/cw_patch.h");
    println!("cargo:rerun-if-changed=c/patch_tramp.c");
    cc::Build::new()
        .file("c/causeway.c")
        .file("c/patch.c")
        .include("c")
        .opt_level(2)
        .flag("-fno-omit-frame-pointer")
        .flag_if_supported("-Wextra")
        .compile("causeway_c");
    // The fast paths of the patched-entry trampolines: general registers only, so the
    // trampolines never save vector state (c/patch_tramp.c); leaf functions, no frame
    // pointer needed.
    cc::Build::new()
        .file("c/patch_tramp.c")
        .include("c")
        .opt_level(2)
        .flag("-mgeneral-regs-only")
        .flag_if_supported("-Wextra")
        .compile("causeway_tramp");
    println!("cargo:rustc-link-lib=pthread");
    println!("cargo:include={}/c", env!("CARGO_MANIFEST_DIR"));
}
