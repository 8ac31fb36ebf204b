//! `causeway demo`: record the zoo's blocking-write workload and summarize it.
//!
//! Until causeway's own recorder exists the recording is made with `perf record` and
//! converted with the importer; the summary is what `causeway info` prints.

use crate::cli::{DemoArgs, InfoArgs};
use crate::cmd::{import, info};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Find the workload binary: next to the causeway executable's build tree, or under
/// the current directory.
fn find_workload(name: &str) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Ok(dir) = std::env::var("CAUSEWAY_WORKLOADS") {
        candidates.push(PathBuf::from(dir).join(name));
    }
    if let Ok(exe) = std::env::current_exe() {
        // target/{release,debug}/causeway -> repository root.
        if let Some(root) = exe.parent().and_then(Path::parent).and_then(Path::parent) {
            candidates.push(root.join("workloads/bin").join(name));
        }
    }
    candidates.push(PathBuf::from("workloads/bin").join(name));
    candidates.into_iter().find(|p| p.is_file())
}

/// Record `cmd` system-wide with perf into `perf_data`.
pub fn perf_record(perf_data: &Path, cmd: &[String]) -> Result<()> {
    let mut c = Command::new("perf");
    c.arg("record").arg("-q").arg("-g").arg("-a");
    for e in causeway_import::RECORD_EVENTS {
        c.arg("-e").arg(e);
    }
    c.arg("-o").arg(perf_data).arg("--").args(cmd);
    let status = c.status().map_err(|e| {
        anyhow::anyhow!(
            "cannot run perf ({e}); install it with `apt install linux-perf` or run `make demo`"
        )
    })?;
    if !status.success() {
        bail!(
            "perf record failed ({status}); it needs root (or kernel.perf_event_paranoid <= -1) and tracefs"
        );
    }
    Ok(())
}

/// Run the command; returns the exit code.
pub fn run(args: &DemoArgs) -> Result<u8> {
    let workload = match &args.workload {
        Some(p) => p.clone(),
        None => find_workload("blocking-write").context(
            "blocking-write workload not found; build it with `make workloads` or pass --workload",
        )?,
    };
    std::fs::create_dir_all(&args.out_dir)
        .with_context(|| format!("creating {}", args.out_dir.display()))?;
    let perf_data = args.out_dir.join("blocking-write.perf.data");
    let trace = args.out_dir.join("blocking-write.cwt");
    eprintln!(
        "== recording {} for {}s with perf (causeway's eBPF recorder is not built yet)",
        workload.display(),
        args.seconds
    );
    let cmd = vec![
        workload.display().to_string(),
        "--seconds".to_string(),
        args.seconds.to_string(),
    ];
    perf_record(&perf_data, &cmd)?;
    eprintln!(
        "== converting {} to {}",
        perf_data.display(),
        trace.display()
    );
    let summary = import::convert(&perf_data, &trace, false)?;
    import::print_summary(&summary, &trace, false)?;
    eprintln!("== causeway info --comm blocking-write {}", trace.display());
    let report = info::build(&InfoArgs {
        trace: trace.clone(),
        json: false,
        top: 8,
        pid: Vec::new(),
        comm: Some("blocking-write".to_string()),
    })?;
    info::print(&report, false)?;
    if report.model_anomalies > 0 {
        println!(
            "\nThe anomalies are events perf did not record: on some kernels perf drops events\n\
             taken in interrupt context on an idle CPU (block completions, the wake-ups they\n\
             cause) without a lost-event record. The model marks the affected time unknown\n\
             instead of guessing (see docs/causeway-import.md)."
        );
    }
    println!(
        "\nExpected diagnosis (workloads/README.md): the producer waits longest, but the\n\
         consumer and the disk (its fsync) limit throughput. Look at the consumer's waits and\n\
         who ends them with `causeway dump {} --kind sched_switch,wakeup,stack --stacks`.",
        trace.display()
    );
    Ok(info::exit_code(&report))
}
