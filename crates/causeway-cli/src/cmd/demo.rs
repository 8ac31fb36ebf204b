//! `causeway demo`: record the zoo's blocking-write workload, summarize and diagnose it.
//!
//! Records with causeway's eBPF recorder, prints what `causeway info` and
//! `causeway bottleneck` say about it.

use crate::cmd::{bottleneck, info, record};
use crate::flags::{BottleneckArgs, DemoArgs, InfoArgs};
use crate::output;
use anyhow::{Context, Result};
use causeway_report::Format;
use std::path::{Path, PathBuf};

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
    let trace = args.out_dir.join("blocking-write.cwt");
    // The workload takes seconds as a decimal number.
    let seconds = args.seconds.as_secs_f64();
    eprintln!(
        "== causeway record -o {} -- {} --seconds {seconds}",
        trace.display(),
        workload.display(),
    );
    let cmd = vec![
        workload.display().to_string(),
        "--seconds".to_string(),
        seconds.to_string(),
    ];
    record::record_command(&cmd, &trace, false)?;
    eprintln!(
        "\n== causeway info --comm blocking-write {}",
        trace.display()
    );
    let report = info::build(&InfoArgs {
        trace: trace.clone(),
        json: false,
        top: 6,
        pid: Vec::new(),
        comm: Some("blocking-write".to_string()),
    })?;
    output::emit(&report, Format::Text)?;
    eprintln!("\n== causeway bottleneck {}", trace.display());
    let b = BottleneckArgs::for_trace(trace.clone());
    let code = bottleneck::run(&b)?;
    println!(
        "\nExpected diagnosis (workloads/README.md): the producer waits longest, but the\n\
         consumer and the disk (its fsync) limit throughput: the knot above. See every wait\n\
         and who ended it with `causeway dump {} --kind sched_switch,wakeup,stack --stacks`.",
        trace.display()
    );
    Ok(code)
}
