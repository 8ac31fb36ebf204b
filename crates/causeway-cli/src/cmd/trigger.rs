//! `causeway trigger`: ask flight recorders to dump (sends them SIGUSR1), and with
//! `--inproc` processes running libcauseway too (SIGUSR2).

use crate::exit;
use crate::flags::TriggerArgs;
use anyhow::{Result, bail};

/// Other processes (not this one) for which `keep` holds.
fn other_processes(keep: impl Fn(u32) -> bool) -> Vec<u32> {
    let me = std::process::id();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| p != me && keep(p))
        .collect()
}

/// Running `causeway record --flight` processes.
fn flight_recorders() -> Vec<u32> {
    other_processes(|p| {
        let Ok(raw) = std::fs::read(format!("/proc/{p}/cmdline")) else {
            return false;
        };
        let args: Vec<&[u8]> = raw.split(|&b| b == 0).collect();
        let is_causeway = args.first().is_some_and(|a| a.ends_with(b"causeway"));
        is_causeway
            && args.iter().any(|a| *a == b"record")
            && args.iter().any(|a| a.starts_with(b"--flight"))
    })
}

/// Ask every process with libcauseway.so loaded to dump, with the signal each listens
/// for (its `CAUSEWAY_TRIGGER`). A program linked with the static library is not found
/// this way; signal it yourself.
fn trigger_inproc() {
    let pids = causeway_record::inproc::ask_dumps(causeway_record::inproc::all_processes());
    if pids.is_empty() {
        eprintln!(
            "causeway: no running process has libcauseway.so loaded and listens for a dump signal"
        );
    }
    for p in pids {
        eprintln!("causeway: asked in-process tracer {p} to dump");
    }
}

/// Run `causeway trigger`.
pub fn run(a: &TriggerArgs) -> Result<u8> {
    if a.inproc {
        trigger_inproc();
    }
    let pids = match a.pid {
        Some(p) => vec![p],
        None => flight_recorders(),
    };
    if pids.is_empty() && a.inproc {
        return Ok(exit::OK);
    }
    if pids.is_empty() {
        eprintln!("causeway: no running flight recorder (`causeway record --flight SIZE ...`)");
        return Ok(exit::NOTHING_OR_USER_ERROR);
    }
    for p in &pids {
        // SAFETY: kill only sends a signal.
        if unsafe { libc::kill(*p as i32, libc::SIGUSR1) } != 0 {
            bail!(
                "cannot signal process {p}: {}",
                std::io::Error::last_os_error()
            );
        }
        eprintln!("causeway: asked flight recorder {p} to dump");
    }
    Ok(exit::OK)
}
