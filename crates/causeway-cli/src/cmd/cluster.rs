//! `causeway cluster scheduler|executor`: the processes of a Ballista cluster
//! (through causeway-cluster), and the sessions `sql --cluster` and `fleet --cluster`
//! open on one.

use crate::flags::cluster::{ClusterArgs, ClusterRole, ExecutorArgs, SchedulerArgs};
use anyhow::{Context, Result};
use causeway_cluster::executor::ExecutorOptions;
use causeway_sql::Session;
use std::path::PathBuf;

/// Run the command.
pub fn run(args: &ClusterArgs) -> Result<u8> {
    causeway_cluster::logging::init(args.verbose);
    match &args.role {
        ClusterRole::Scheduler(a) => scheduler(a),
        ClusterRole::Executor(a) => executor(a),
    }
}

fn scheduler(a: &SchedulerArgs) -> Result<u8> {
    let bind = causeway_cluster::listen_addr(&a.bind)?;
    eprintln!("causeway: cluster scheduler on {bind} (Ctrl-C stops it)");
    causeway_cluster::scheduler::run(bind, &a.external_host).context("the scheduler stopped")?;
    Ok(0)
}

fn executor(a: &ExecutorArgs) -> Result<u8> {
    let scheduler = causeway_cluster::host_port(&a.scheduler)?;
    // Held until the executor returns: Ballista's own fallback directory is removed as
    // soon as it is made.
    let scratch;
    let work_dir = match &a.work_dir {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            d.clone()
        }
        None => {
            scratch = tempfile::Builder::new()
                .prefix("causeway-executor")
                .tempdir()?;
            scratch.path().to_path_buf()
        }
    };
    let opts = ExecutorOptions {
        scheduler,
        bind_host: a.bind_host.clone(),
        external_host: a.external_host.clone(),
        flight_port: a.flight_port,
        grpc_port: a.grpc_port,
        concurrency: a.concurrency,
        work_dir,
    };
    eprintln!(
        "causeway: cluster executor on {}:{} (flight) and :{} (tasks), scheduler {} (Ctrl-C stops it)",
        a.bind_host, a.flight_port, a.grpc_port, a.scheduler
    );
    causeway_cluster::executor::run(&opts).context("the executor stopped")?;
    Ok(0)
}

/// A session over `dirs`: embedded, or on the cluster at `scheduler`.
pub fn session(dirs: &[PathBuf], scheduler: Option<&str>) -> Result<Session> {
    match scheduler {
        None => Session::open(dirs).context("opening the tables"),
        Some(s) => {
            causeway_cluster::host_port(s)?;
            causeway_cluster::connect(s, dirs)
                .with_context(|| format!("opening the tables on the cluster at {s}"))
        }
    }
}
