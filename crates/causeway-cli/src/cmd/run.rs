//! `causeway run --inproc -- CMD`: run a program with libcauseway preloaded, so its
//! calls are traced in-process and dumped on a trigger, then list the traces written.

use crate::flags::RunArgs;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

const LIB: &str = "libcauseway.so";

/// Where libcauseway.so is: `--lib`, `CAUSEWAY_LIB`, next to this program, or in
/// `../lib` beside its directory (an installed layout).
fn find_lib(args: &RunArgs) -> Result<PathBuf> {
    if let Some(l) = &args.lib {
        return Ok(l.clone());
    }
    if let Some(l) = std::env::var_os("CAUSEWAY_LIB") {
        return Ok(PathBuf::from(l));
    }
    let exe = std::env::current_exe().context("locating the causeway program")?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    for cand in [dir.join(LIB), dir.join("../lib").join(LIB)] {
        if cand.is_file() {
            return Ok(cand);
        }
    }
    bail!(
        "{LIB} not found next to {} (build it with `make build`, or scripts/build-libcauseway.sh; or pass --lib)",
        exe.display()
    )
}

fn traces_in(dir: &Path, pids: &[u32]) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            pids.iter()
                .any(|pid| n.starts_with(&format!("causeway-{pid}-")) && n.ends_with(".cwt"))
        })
        .collect();
    v.sort();
    v
}

/// Run the command; returns its exit code (or 1 if it was killed by a signal).
pub fn run(args: &RunArgs) -> Result<u8> {
    let lib = find_lib(args)?;
    let lib = lib
        .canonicalize()
        .with_context(|| format!("{} is missing", lib.display()))?;
    std::fs::create_dir_all(&args.out_dir)
        .with_context(|| format!("creating {}", args.out_dir.display()))?;
    let out_dir = args.out_dir.canonicalize()?;
    let preload = match std::env::var("LD_PRELOAD") {
        Ok(old) if !old.is_empty() => format!("{}:{old}", lib.display()),
        _ => lib.display().to_string(),
    };
    let (prog, rest) = args
        .command
        .split_first()
        .context("no command given after --")?;
    let mut child = Command::new(prog)
        .args(rest)
        .env("LD_PRELOAD", preload)
        .env("CAUSEWAY_OUTPUT", &out_dir)
        .env("CAUSEWAY_TRIGGER", &args.trigger)
        .env("CAUSEWAY_BUFFER", args.buffer.to_string())
        .env("CAUSEWAY_THREADS", &args.threads)
        .env("CAUSEWAY_CLOCK", &args.clock)
        .spawn()
        .with_context(|| format!("starting {prog}"))?;
    let pid = child.id();
    let status = child
        .wait()
        .with_context(|| format!("waiting for {prog}"))?;
    // Children that exec'd or forked write their own pids' traces; list the direct
    // child's (the common case) and say where the others are.
    let traces = traces_in(&out_dir, &[pid]);
    if traces.is_empty() {
        eprintln!(
            "causeway: {prog} wrote no trace in {} (was it built with -finstrument-functions, and did a trigger fire?)",
            out_dir.display()
        );
    }
    for t in &traces {
        eprintln!("causeway: trace {}", t.display());
    }
    Ok(status.code().map_or(1, |c| c.clamp(0, 255) as u8))
}
