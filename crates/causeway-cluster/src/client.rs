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
        // Ballista's adaptive planner is off: in 55.0 it can lose a stage's results.
        // When a join's side comes back empty it replaces the join by an empty plan,
        // and a union over it gets tasks that report fewer operator metrics than
        // their siblings. The scheduler rejects such a task's status after it has
        // already marked the task done, so the stage either never completes (the
        // query hangs) or completes without that task's rows (a wrong answer). The
        // static planner plans the whole query at once, as the embedded engine does.
        let config = config
            .upgrade_for_ballista()
            .with_ballista_adaptive_query_planner(false);
        let state = SessionStateBuilder::new()
            .with_default_features()
            .with_config(config)
            .build();
        rt.block_on(SessionContext::remote_with_state(&url, state))
            .map_err(SqlError::Query)
    })
}
