//! Flags of `causeway cluster`: the processes of a Ballista cluster.

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// `causeway cluster`.
#[derive(Debug, Args)]
#[command(after_help = "\
A cluster runs `causeway sql --cluster` and `causeway fleet --cluster` queries over
table directories too large for one machine: one scheduler, and executors on the hosts
that can read the tables. Both are Apache Ballista's, with causeway's functions (dur)
added. Every executor must read the table directories at the paths the query names: a
shared file system, or the same copy on each host (docs/fleet.md).

EXAMPLE (three shells, or three hosts):
    causeway cluster scheduler --bind 0.0.0.0:50050
    causeway cluster executor --scheduler node1:50050 --flight-port 50051 --grpc-port 50052
    causeway sql --cluster node1:50050 \"SELECT host, count(*) FROM knots GROUP BY host\" /shared/fleet")]
pub struct ClusterArgs {
    /// Which process to run.
    #[command(subcommand)]
    pub role: ClusterRole,
    /// Also print Ballista's log lines (tasks, registrations, retried failures) on
    /// standard error; `-vv` adds its debug lines.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
}

/// The processes of a cluster.
#[derive(Debug, Subcommand)]
pub enum ClusterRole {
    /// Run the scheduler: it plans queries into stages and hands their tasks to the
    /// executors. Runs until stopped (Ctrl-C).
    Scheduler(SchedulerArgs),
    /// Run an executor: it runs tasks, reading the Parquet tables itself, and serves
    /// their results. Runs until stopped (Ctrl-C).
    Executor(ExecutorArgs),
}

/// `causeway cluster scheduler`.
#[derive(Debug, Args)]
pub struct SchedulerArgs {
    /// Address to listen on.
    #[arg(long, value_name = "HOST:PORT", default_value = "0.0.0.0:50050")]
    pub bind: String,
    /// The name executors and clients reach this host by.
    #[arg(long, value_name = "NAME", default_value = "localhost")]
    pub external_host: String,
}

/// `causeway cluster executor`.
#[derive(Debug, Args)]
pub struct ExecutorArgs {
    /// The scheduler to serve.
    #[arg(long, value_name = "HOST:PORT", default_value = "localhost:50050")]
    pub scheduler: String,
    /// Address to listen on.
    #[arg(long, value_name = "HOST", default_value = "0.0.0.0")]
    pub bind_host: String,
    /// The name the scheduler and clients reach this executor by (default: its bind
    /// address as the scheduler sees it).
    #[arg(long, value_name = "NAME")]
    pub external_host: Option<String>,
    /// Port of the Arrow Flight service that serves results and shuffle data.
    #[arg(long, default_value_t = 50051)]
    pub flight_port: u16,
    /// Port of the gRPC service the scheduler pushes tasks to.
    #[arg(long, default_value_t = 50052)]
    pub grpc_port: u16,
    /// Tasks to run at once (default: one per CPU).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub concurrency: usize,
    /// Directory for shuffle files (default: a temporary directory, removed at exit).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
}
