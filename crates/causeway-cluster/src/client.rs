//! A session whose queries run on the cluster.

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use causeway_sql::{Session, SqlError};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;
use std::path::PathBuf;

/// Open the tables of `dirs` in a session planned and run by the Ballista scheduler
/// at `scheduler` (`HOST:PORT`). The directories must be readable at the same paths
/// on every executor.
pub fn connect(scheduler: &str, dirs: &[PathBuf]) -> Result<Session, SqlError> {
    let url = format!("df://{scheduler}");
    Session::open_with(dirs, |rt, config| {
        let config = config.upgrade_for_ballista();
        let state = SessionStateBuilder::new()
            .with_default_features()
            .with_config(config)
            .build();
        rt.block_on(SessionContext::remote_with_state(&url, state))
            .map_err(SqlError::Query)
    })
}
