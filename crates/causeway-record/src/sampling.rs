//! On-CPU sampling: one software `cpu-clock` perf event per CPU drives the BPF
//! `cpu_sample` program, which keeps the samples of recorded threads.
//!
//! A software clock rather than `cycles`: hardware PMU counters are often missing in
//! VMs and containers, and a clock gives samples proportional to time on the CPU, which
//! is what "where does this thread burn its CPU" asks. The period is fixed (not perf's
//! frequency mode) so every sample stands for the same time.

use crate::error::RecordError;
use libbpf_rs::{Link, ProgramMut};
use std::os::fd::{FromRawFd, OwnedFd};

pub use crate::config::{DEFAULT_SAMPLE_HZ, MAX_SAMPLE_HZ};

/// The per-CPU sampling events and their program links; dropping it stops sampling.
pub struct Sampler {
    /// One link per CPU. libbpf's perf-event link owns its event's descriptor and
    /// closes it on detach, so the descriptors are handed over, not kept here too
    /// (keeping them closed each twice: a debug build aborted on it, a release build
    /// could close whatever descriptor had taken the number meanwhile).
    _links: Vec<Link>,
}

/// Open a `cpu-clock` sampling event on `cpu` for every thread, firing every
/// `period_ns` nanoseconds of CPU time.
fn open_cpu_clock(cpu: u32, period_ns: u64) -> Result<OwnedFd, RecordError> {
    let mut attr = libbpf_sys::perf_event_attr {
        type_: libbpf_sys::PERF_TYPE_SOFTWARE,
        size: size_of::<libbpf_sys::perf_event_attr>() as u32,
        config: libbpf_sys::PERF_COUNT_SW_CPU_CLOCK as u64,
        ..Default::default()
    };
    attr.__bindgen_anon_1.sample_period = period_ns;
    // SAFETY: attr is a valid, fully initialised perf_event_attr of the size it
    // declares; pid -1 with a CPU number asks for every thread on that CPU.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const libbpf_sys::perf_event_attr,
            -1i32,
            cpu as i32,
            -1i32,
            libbpf_sys::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(RecordError::Attach(
            format!("cpu-clock sampling on CPU {cpu}"),
            e.to_string(),
        ));
    }
    // SAFETY: the syscall returned a new file descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

impl Sampler {
    /// Sample every online CPU `hz` times per second of CPU time with `prog`.
    pub fn start(prog: &ProgramMut<'_>, hz: u32) -> Result<Sampler, RecordError> {
        let period = 1_000_000_000 / u64::from(hz.clamp(1, MAX_SAMPLE_HZ));
        let mut links = Vec::new();
        for cpu in online_cpus() {
            let fd = open_cpu_clock(cpu, period)?;
            let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
            let link = prog.attach_perf_event(raw).map_err(|e| {
                RecordError::Attach(format!("cpu_sample on CPU {cpu}"), e.to_string())
            })?;
            // The link owns the descriptor now (on failure `fd` is dropped and closed).
            let _ = std::os::fd::IntoRawFd::into_raw_fd(fd);
            links.push(link);
        }
        Ok(Sampler { _links: links })
    }
}

/// Online CPU numbers from sysfs (`0-3,6`), or every possible CPU if unreadable.
fn online_cpus() -> Vec<u32> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| parse_cpu_list(s.trim()))
        .unwrap_or_else(|| (0..possible_cpus()).collect())
}

/// Number of possible CPUs (what libbpf sizes per-CPU data by).
fn possible_cpus() -> u32 {
    libbpf_rs::num_possible_cpus().map_or(1, |n| n as u32)
}

/// Parse a kernel CPU list such as `0-3,6`.
fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut v = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => v.extend(a.parse::<u32>().ok()?..=b.parse::<u32>().ok()?),
            None => v.push(part.parse().ok()?),
        }
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::parse_cpu_list;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-3,6"), Some(vec![0, 1, 2, 3, 6]));
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list("x"), None);
    }
}
