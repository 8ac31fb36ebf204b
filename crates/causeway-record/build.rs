//! Compiles the eBPF recorder (and the data-flag uprobe program of `watch`) and
//! generates their Rust skeletons (`causeway-bpf-build`).

fn main() {
    causeway_bpf_build::build(&["recorder", "dataflag"], &["-Wno-unused-function"]);
}
