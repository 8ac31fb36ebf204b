//! Compiles the data-flag uprobe program and generates its Rust skeleton
//! (`causeway-bpf-build`).

fn main() {
    causeway_bpf_build::build(&["dataflag"], &["-Wno-unused-function"]);
}
