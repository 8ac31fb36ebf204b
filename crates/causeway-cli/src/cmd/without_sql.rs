//! `causeway tables` and `causeway sql` in a build without the `sql` feature (the
//! light build of `make demo`): a clear error saying how to get them.

use anyhow::{Result, bail};

/// Both commands' answer in this build.
pub fn run<A>(_args: &A) -> Result<u8> {
    bail!(
        "this causeway was built without tables and SQL (the `sql` feature); `make build` or \
         `cargo build --release -p causeway-cli` builds them"
    )
}

/// `causeway fleet` in this build.
pub fn fleet<A>(args: &A) -> Result<u8> {
    run(args)
}
