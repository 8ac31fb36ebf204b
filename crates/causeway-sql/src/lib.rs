//! SQL over trace tables, with Apache DataFusion.
//!
//! A [`Session`] registers every table of the schema (`causeway_tables::catalog`)
//! over all the partitions of the given directories (`DIR/host=…/trace=…/`), so one
//! query spans every host and trace; then the standard library ([`stdlib`]): views
//! such as `waits` and `thread_summary`, and the function `dur`. Results come back as
//! Arrow record batches, printed by [`render`] as a text table, CSV or JSON.

mod error;
pub mod fleet;
pub mod fleet_text;
pub mod render;
pub mod stdlib;

pub use error::SqlError;

use arrow::record_batch::RecordBatch;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::prelude::{SessionConfig, SessionContext};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A DataFusion session over the tables of some directories.
pub struct Session {
    ctx: SessionContext,
    runtime: tokio::runtime::Runtime,
}

impl Session {
    /// A session over the table directories `dirs` (each written by `causeway tables`).
    pub fn open(dirs: &[PathBuf]) -> Result<Session, SqlError> {
        Session::open_with(dirs, |_, config| {
            Ok(SessionContext::new_with_config(config))
        })
    }

    /// A session over `dirs` in a context made by `make` from the session's
    /// configuration (a context whose queries run elsewhere, such as on a cluster);
    /// the tables, views and functions are registered in it as in [`Session::open`].
    pub fn open_with(
        dirs: &[PathBuf],
        make: impl FnOnce(&tokio::runtime::Runtime, SessionConfig) -> Result<SessionContext, SqlError>,
    ) -> Result<Session, SqlError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(SqlError::Runtime)?;
        let config = SessionConfig::new().with_information_schema(true);
        let ctx = make(&runtime, config)?;
        register_tables(&ctx, dirs)?;
        stdlib::register(&ctx, &runtime)?;
        Ok(Session { ctx, runtime })
    }

    /// Run one query (or statement) and collect its rows: at least one batch, so the
    /// columns are known also when no row answers.
    pub fn query(&self, sql: &str) -> Result<Vec<RecordBatch>, SqlError> {
        self.runtime.block_on(async {
            let df = self.ctx.sql(sql).await.map_err(SqlError::Query)?;
            let schema = df.schema().inner().clone();
            let mut batches = df.collect().await.map_err(SqlError::Query)?;
            // No rows may come as no batches: keep the columns, so an empty answer
            // still shows its header (table, CSV) as other SQL shells do.
            if batches.is_empty() {
                batches.push(RecordBatch::new_empty(schema));
            }
            Ok(batches)
        })
    }

    /// The DataFusion context, for callers that add their own tables or functions.
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }
}

/// The URL DataFusion lists a directory by.
fn dir_url(dir: &Path) -> Result<ListingTableUrl, SqlError> {
    let abs = std::fs::canonicalize(dir).map_err(|e| SqlError::Input {
        path: dir.to_path_buf(),
        source: e,
    })?;
    let mut s = abs.display().to_string();
    if !s.ends_with('/') {
        s.push('/');
    }
    ListingTableUrl::parse(&s).map_err(SqlError::Query)
}

/// Register each table of the schema over every partition of `dirs`: the files are
/// found by name (`…/<table>.parquet`, the `/` keeps `stacks` from matching
/// `callstacks`) and read with the schema declared in causeway-tables, so a directory
/// with no trace yet still has every table, empty.
fn register_tables(ctx: &SessionContext, dirs: &[PathBuf]) -> Result<(), SqlError> {
    let urls = dirs
        .iter()
        .map(|d| dir_url(d))
        .collect::<Result<Vec<_>, _>>()?;
    for t in causeway_tables::catalog() {
        let opts = ListingOptions::new(Arc::new(ParquetFormat::default()))
            .with_file_extension(format!("/{}.parquet", t.name));
        let config = ListingTableConfig::new_with_multi_paths(urls.clone())
            .with_listing_options(opts)
            .with_schema(Arc::new(t.schema.clone()));
        let table = ListingTable::try_new(config).map_err(SqlError::Query)?;
        ctx.register_table(t.name, Arc::new(table))
            .map_err(SqlError::Query)?;
    }
    Ok(())
}
