//! `causeway completions` and `causeway man`: shell completions and man pages generated
//! from the command-line definition, so they never drift from `--help`.

use crate::exit;
use crate::flags::{Cli, CompletionsArgs, ManArgs};
use anyhow::{Context, Result};
use clap::CommandFactory;
use std::path::Path;

/// Print the completion script for a shell.
pub fn completions(args: &CompletionsArgs) -> Result<u8> {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "causeway", &mut std::io::stdout());
    Ok(exit::OK)
}

/// Write the man pages.
pub fn man(args: &ManArgs) -> Result<u8> {
    std::fs::create_dir_all(&args.out_dir)
        .with_context(|| format!("creating {}", args.out_dir.display()))?;
    let cmd = Cli::command();
    write_page(&args.out_dir, "causeway", cmd.clone())?;
    for sub in cmd.get_subcommands() {
        let name = format!("causeway-{}", sub.get_name());
        write_page(&args.out_dir, &name, sub.clone().name(name.clone()))?;
    }
    Ok(exit::OK)
}

fn write_page(dir: &Path, name: &str, cmd: clap::Command) -> Result<()> {
    let path = dir.join(format!("{name}.1"));
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut buf)?;
    std::fs::write(&path, buf).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}
