//! libbpf's messages, the kernel verifier's log among them: kept here instead of
//! printed, shown only when asked for (`-v`). A refused program's name is read back
//! from them, so that the recorder can load another entry point for that one program,
//! and a failed load can quote the log's last lines.

use libbpf_rs::PrintLevel;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Lines kept for error messages and for finding refused programs: a verifier log of
/// one refused program is ~100 lines; more than a few hundred is never read.
const KEEP: usize = 400;

static VERBOSE: AtomicBool = AtomicBool::new(false);
static KEPT: Mutex<VecDeque<String>> = Mutex::new(VecDeque::new());

/// Route libbpf's messages through causeway: printed on stderr (prefixed `libbpf: `)
/// only if `verbose`, kept either way. Process-wide; call once, before any BPF object
/// is opened.
pub fn init(verbose: bool) {
    VERBOSE.store(verbose, Ordering::Relaxed);
    let level = if verbose {
        PrintLevel::Debug
    } else {
        PrintLevel::Info
    };
    libbpf_rs::set_print(Some((level, on_message)));
}

/// Whether libbpf's messages are printed.
pub fn verbose() -> bool {
    VERBOSE.load(Ordering::Relaxed)
}

fn on_message(_level: PrintLevel, msg: String) {
    if VERBOSE.load(Ordering::Relaxed) {
        eprint!("{msg}");
    }
    let Ok(mut kept) = KEPT.lock() else {
        return;
    };
    for line in msg.lines() {
        if kept.len() == KEEP {
            kept.pop_front();
        }
        kept.push_back(line.to_string());
    }
}

/// Forget what was kept: the next load's messages start afresh.
pub fn clear() {
    if let Ok(mut k) = KEPT.lock() {
        k.clear();
    }
}

/// The kept lines, oldest first.
pub fn lines() -> Vec<String> {
    KEPT.lock()
        .map(|k| k.iter().cloned().collect())
        .unwrap_or_default()
}

/// Names of the programs libbpf said it failed to load (`prog 'NAME': failed to load`,
/// `prog 'NAME': BPF program load failed`), in order, once each.
pub fn refused_programs(lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in lines {
        let Some(rest) = l.split("prog '").nth(1) else {
            continue;
        };
        let Some((name, tail)) = rest.split_once("': ") else {
            continue;
        };
        let refused = tail.starts_with("failed to load") || tail.contains("load failed");
        if refused && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// The last `n` kept lines that say why a load failed (the verifier's conclusion is at
/// the end of its log), for an error message.
pub fn tail(n: usize) -> Vec<String> {
    let all = lines();
    let skip = all.len().saturating_sub(n);
    all.into_iter().skip(skip).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_programs_are_read_from_libbpfs_lines() {
        let lines: Vec<String> = [
            "libbpf: prog 'btf_hrtimer_expire_entry': BPF program load failed: -EACCES",
            "libbpf: prog 'btf_hrtimer_expire_entry': -- BEGIN PROG LOAD LOG --",
            "R1 type=ctx expected=fp",
            "math between trusted_ptr_ pointer and register with unbounded min value is not allowed",
            "libbpf: prog 'btf_hrtimer_expire_entry': -- END PROG LOAD LOG --",
            "libbpf: prog 'btf_hrtimer_expire_entry': failed to load: -13",
            "libbpf: prog 'btf_sched_switch': failed to load: -22",
            "libbpf: failed to load object 'recorder_bpf'",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            refused_programs(&lines),
            vec!["btf_hrtimer_expire_entry", "btf_sched_switch"]
        );
        assert!(refused_programs(&lines[2..4]).is_empty());
    }
}
