//! The scheduler: Ballista's, whose sessions also know causeway's functions (it plans
//! the client's logical plan, and a call to `dur()` must resolve there).

use crate::{ClusterError, runtime};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use datafusion::execution::SessionState;
use datafusion::prelude::SessionConfig;
use std::net::SocketAddr;
use std::sync::Arc;

/// Serve as the cluster's scheduler on `bind` until the process is stopped.
/// `external_host` is the name executors and clients reach this host by.
pub fn run(bind: SocketAddr, external_host: &str) -> Result<(), ClusterError> {
    let config = SchedulerConfig {
        bind_host: bind.ip().to_string(),
        bind_port: bind.port(),
        external_host: external_host.to_string(),
        override_session_builder: Some(Arc::new(session_with_functions)),
        ..SchedulerConfig::default()
    };
    runtime()?.block_on(async move {
        let cluster = BallistaCluster::new_from_config(&config).await?;
        start_server(cluster, bind, Arc::new(config)).await?;
        Ok(())
    })
}

/// Ballista's default session, with causeway's functions.
fn session_with_functions(config: SessionConfig) -> datafusion::common::Result<SessionState> {
    let mut state = ballista_core::utils::default_session_builder(config)?;
    causeway_sql::stdlib::register_functions(&mut state)?;
    Ok(state)
}
