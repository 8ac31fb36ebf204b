//! Flags of the commands about causeway itself: shell completions and man pages, both
//! generated from the one CLI definition.

use clap::Args;
use clap_complete::Shell;
use std::path::PathBuf;

/// `causeway completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// `causeway man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Directory to write `causeway.1` and one `causeway-CMD.1` per subcommand into.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out_dir: PathBuf,
}
