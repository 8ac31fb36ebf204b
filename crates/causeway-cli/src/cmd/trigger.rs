//! `causeway trigger`: ask flight recorders to dump (sends them SIGUSR1).

use crate::exit;
use crate::flags::TriggerArgs;
use anyhow::{Result, bail};

/// Running `causeway record --flight` processes.
fn flight_recorders() -> Vec<u32> {
    let me = std::process::id();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| p != me)
        .filter(|&p| {
            let Ok(raw) = std::fs::read(format!("/proc/{p}/cmdline")) else {
                return false;
            };
            let args: Vec<&[u8]> = raw.split(|&b| b == 0).collect();
            let is_causeway = args.first().is_some_and(|a| a.ends_with(b"causeway"));
            is_causeway
                && args.iter().any(|a| *a == b"record")
                && args.iter().any(|a| a.starts_with(b"--flight"))
        })
        .collect()
}

/// Run `causeway trigger`.
pub fn run(a: &TriggerArgs) -> Result<u8> {
    let pids = match a.pid {
        Some(p) => vec![p],
        None => flight_recorders(),
    };
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
