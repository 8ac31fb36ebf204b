//! Compiles the eBPF recorder and generates its Rust skeleton (`causeway-bpf-build`).

fn main() {
    causeway_bpf_build::build(&["recorder"], &["-Wno-unused-function"]);
}
