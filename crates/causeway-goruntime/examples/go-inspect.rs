//! Print what causeway reads from Go binaries: `go-inspect FILE...` prints each file's
//! inspection; `go-inspect --row FILE` prints the row of the table of known versions
//! (`src/versions.rs`) that a build with DWARF gives (a parent goid offset of 0:
//! the field is absent).

use causeway_goruntime::{Inspection, inspect};
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (row, files) = match args.first().map(String::as_str) {
        Some("--row") => (true, &args[1..]),
        _ => (false, &args[..]),
    };
    if files.is_empty() {
        eprintln!("usage: go-inspect [--row] FILE...");
        return ExitCode::from(2);
    }
    let mut code = ExitCode::SUCCESS;
    for f in files {
        match inspect(Path::new(f)) {
            Ok(Inspection::Go(rt)) if row => {
                let minor = rt
                    .version
                    .strip_prefix("go1.")
                    .and_then(|v| v.split(['.', 'r', ' ']).next())
                    .unwrap_or("?");
                let l = rt.layout;
                let p = l.poll.expect("pollDesc in the DWARF");
                println!(
                    "    known({minor}, [{}, {}, {}, {}, {}, {}, {}], [{}, {}, {}, {}], {}),",
                    l.g_goid,
                    l.g_m,
                    l.g_startpc,
                    l.g_parent_goid.unwrap_or(0),
                    l.g_schedlink,
                    l.m_curg,
                    l.glist_head,
                    p.fd,
                    p.rg,
                    p.wg,
                    p.this,
                    rt.wait_reasons.len()
                );
            }
            Ok(i) => println!("{f}: {i:?}"),
            Err(e) => {
                eprintln!("{f}: {e}");
                code = ExitCode::FAILURE;
            }
        }
    }
    code
}
