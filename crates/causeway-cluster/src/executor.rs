//! An executor: Ballista's, with causeway's functions in its registry (it decodes the
//! physical plans of its tasks, which may call `dur()`).

use crate::{ClusterError, runtime};
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use datafusion::execution::SessionStateBuilder;
use std::path::PathBuf;
use std::sync::Arc;

/// Where an executor listens and whom it serves.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The scheduler's host and port.
    pub scheduler: (String, u16),
    /// The address to listen on.
    pub bind_host: String,
    /// The name the scheduler and clients reach this executor by.
    pub external_host: Option<String>,
    /// The port of its Arrow Flight service (results and shuffle data).
    pub flight_port: u16,
    /// The port of its gRPC service (tasks pushed by the scheduler).
    pub grpc_port: u16,
    /// Tasks run at once (0: one per CPU).
    pub concurrency: usize,
    /// Where shuffle files go.
    pub work_dir: PathBuf,
}

/// Serve as an executor until the process is stopped.
pub fn run(opts: &ExecutorOptions) -> Result<(), ClusterError> {
    let mut state = SessionStateBuilder::new().with_default_features().build();
    causeway_sql::stdlib::register_functions(&mut state)?;
    let config = ExecutorProcessConfig {
        bind_host: opts.bind_host.clone(),
        external_host: opts.external_host.clone(),
        port: opts.flight_port,
        grpc_port: opts.grpc_port,
        scheduler_host: opts.scheduler.0.clone(),
        scheduler_port: opts.scheduler.1,
        vcores: opts.concurrency,
        work_dir: Some(opts.work_dir.display().to_string()),
        print_thread_info: false,
        override_function_registry: Some(Arc::new(BallistaFunctionRegistry::from(&state))),
        ..ExecutorProcessConfig::default()
    };
    runtime()?.block_on(start_executor_process(Arc::new(config)))?;
    Ok(())
}
