//! `causeway cluster` in a build without the `cluster` feature: a clear error saying
//! how to get it.

use anyhow::{Result, bail};

/// The command's answer in this build.
pub fn run<A>(_args: &A) -> Result<u8> {
    bail!(
        "this causeway was built without the Ballista cluster (the `cluster` feature); \
         `make build` or `cargo build --release -p causeway-cli` builds it"
    )
}
