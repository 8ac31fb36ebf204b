//! Compiles the function-latency and root-path BPF programs and generates their Rust
//! skeletons (`causeway-bpf-build`, as for the recorder).

fn main() {
    causeway_bpf_build::build(&["funclat", "rootpath"], &[]);
}
