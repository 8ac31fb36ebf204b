//! Trace tables: one recording as Apache Parquet files that any SQL engine reads.
//!
//! A trace becomes one partition, `DIR/host=H/trace=T/<table>.parquet`, with every row
//! carrying `trace_id` and `host`, so the tables of a fleet's recordings can be put
//! side by side and queried at once (by `causeway sql` on DataFusion, or by DuckDB,
//! Spark, Trino). The schema is declared once in [`schema`] and documented from there
//! in docs/tables.md; [`SCHEMA_VERSION`] says which version a file follows.
//!
//! Writing takes one pass over the events (fed by the caller while it ingests the
//! trace, [`TraceTables::push`]), then the model's tables
//! ([`TraceTables::write_model`], which needs no analysis, so a caller runs the
//! analyses on another thread meanwhile) and the analyses' results
//! ([`TraceTables::finish`]). Batches are encoded on a thread of their own.

mod analysis;
pub mod columns;
mod error;
mod events;
mod model;
pub mod schema;
pub mod sites;
mod writer;

pub use error::TablesError;
pub use schema::SCHEMA_VERSION;
pub use writer::{BATCH_ROWS, TableCount, path_safe};

use causeway_format::{Event, Header, Tables};
use causeway_latency::Profiles;
use causeway_model::Trace;
use causeway_report::{BottleneckRows, ChainRow};
use columns::{ColumnDoc, Table};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The analyses' results to write beside the trace's own tables.
#[derive(Clone, Copy, Debug, Default)]
pub struct Analyses<'a> {
    /// The bottleneck findings as rows, if the analysis ran.
    pub bottleneck: Option<&'a BottleneckRows>,
    /// The latency profiles, if made.
    pub latency: Option<&'a Profiles>,
    /// The culprit chain of the longest stall, if the diagnosis ran and found one.
    pub diagnosis: Option<&'a [ChainRow]>,
    /// The program's own frames where each bottleneck edge's waits blocked, by edge id
    /// ([`sites::wait_sites`]).
    pub wait_sites: Option<&'a [Option<String>]>,
}

/// What was written for one trace.
#[derive(Clone, Debug)]
pub struct Written {
    /// The partition's directory.
    pub dir: PathBuf,
    /// The trace's id.
    pub trace_id: String,
    /// The host it was recorded on (or the name given instead).
    pub host: String,
    /// Events read.
    pub events: u64,
    /// Rows and bytes per table.
    pub tables: BTreeMap<&'static str, TableCount>,
}

/// The id a trace's rows carry: its header's random file id in hex, stable across
/// conversions of the same file.
pub fn trace_id(header: &Header) -> String {
    format!("{:016x}", header.file_id)
}

/// One trace's tables being written.
pub struct TraceTables {
    out: writer::PartitionWriter,
    events: events::EventTables,
    trace_id: String,
    host: String,
    count: u64,
    error: Option<TablesError>,
    model_written: bool,
}

impl TraceTables {
    /// Start the partition of the trace with `header` and `tables` under `root`;
    /// `host` replaces the header's host name if given.
    pub fn create(
        root: &Path,
        header: &Header,
        tables: &Tables,
        host: Option<&str>,
    ) -> Result<TraceTables, TablesError> {
        let trace_id = trace_id(header);
        let host = host.unwrap_or(&header.host.hostname).to_string();
        let host = if host.is_empty() {
            "unknown".to_string()
        } else {
            host
        };
        Ok(TraceTables {
            out: writer::PartitionWriter::create(root, &host, &trace_id)?,
            events: events::EventTables::new(tables.clone()),
            trace_id,
            host,
            count: 0,
            error: None,
            model_written: false,
        })
    }

    /// Add one event (in trace order). An error is kept and returned by `finish`, so
    /// this can be fed from a reading loop that cannot stop.
    #[inline]
    pub fn push(&mut self, ev: &Event) {
        if self.error.is_none() {
            self.count += 1;
            if let Err(e) = self.events.push(ev, &mut self.out) {
                self.error = Some(e);
            }
        }
    }

    /// Write the tables that need the whole trace but no analysis: the rest of the event
    /// tables, threads, thread states and stacks. The costliest part of `finish`: a
    /// caller can run the analyses on another thread meanwhile. `finish` calls it if
    /// the caller did not.
    pub fn write_model(&mut self, trace: &Trace) -> Result<(), TablesError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.model_written {
            return Ok(());
        }
        self.model_written = true;
        let out = &mut self.out;
        self.events.finish(out)?;
        model::processes_and_threads(trace, out)?;
        model::thread_states(trace, out)?;
        model::interned(trace, out)
    }

    /// Write the rest (the model's tables unless written, the trace's row, the
    /// analyses) and move the partition into place.
    pub fn finish(
        mut self,
        trace: &Trace,
        path: &Path,
        analyses: Analyses<'_>,
    ) -> Result<Written, TablesError> {
        self.write_model(trace)?;
        let out = &mut self.out;
        let row = model::TraceRow {
            path: &path.display().to_string(),
            trace_id: &self.trace_id,
            events: self.count,
            bottleneck: analyses.bottleneck.map(|b| b.summary.as_str()),
        };
        model::traces(trace, &row, out)?;
        analysis::bottleneck(analyses.bottleneck, analyses.wait_sites, out)?;
        analysis::latency(analyses.latency, trace.tables(), out)?;
        analysis::diagnosis(analyses.diagnosis.unwrap_or_default(), out)?;
        let (dir, tables) = self.out.finish()?;
        Ok(Written {
            dir,
            trace_id: self.trace_id,
            host: self.host,
            events: self.count,
            tables,
        })
    }
}

/// One table of the schema, documented.
#[derive(Clone, Debug)]
pub struct TableDoc {
    /// Its name.
    pub name: &'static str,
    /// What a row is.
    pub doc: &'static str,
    /// Its own columns (after `trace_id` and `host`).
    pub columns: Vec<ColumnDoc>,
    /// Its Arrow schema, `trace_id` and `host` first.
    pub schema: arrow_schema::Schema,
}

fn doc_of<T: Table>() -> TableDoc {
    TableDoc {
        name: T::NAME,
        doc: T::DOC,
        columns: T::columns(),
        schema: writer::schema_of::<T>(),
    }
}

/// Every table of the schema, in the order docs/tables.md lists them.
pub fn catalog() -> Vec<TableDoc> {
    use schema::{
        BlockIo, BottleneckEdges, BottleneckVertices, Callstacks, Diagnosis, Flows, Frames,
        Goroutines, Interrupts, Knots, LatencyBins, LatencyPeaks, Lifecycle, Losses, Markers,
        Packets, Processes, Signals, Sinks, Sockets, StackFrames, Stacks, Switches, Syscalls,
        ThreadStates, Threads, Timers, Traces, Wakeups,
    };
    vec![
        doc_of::<Traces>(),
        doc_of::<Processes>(),
        doc_of::<Threads>(),
        doc_of::<ThreadStates>(),
        doc_of::<Switches>(),
        doc_of::<Wakeups>(),
        doc_of::<Callstacks>(),
        doc_of::<Syscalls>(),
        doc_of::<BlockIo>(),
        doc_of::<Packets>(),
        doc_of::<Interrupts>(),
        doc_of::<Sockets>(),
        doc_of::<Flows>(),
        doc_of::<Signals>(),
        doc_of::<Timers>(),
        doc_of::<Goroutines>(),
        doc_of::<Markers>(),
        doc_of::<Lifecycle>(),
        doc_of::<Losses>(),
        doc_of::<Stacks>(),
        doc_of::<StackFrames>(),
        doc_of::<Frames>(),
        doc_of::<BottleneckVertices>(),
        doc_of::<BottleneckEdges>(),
        doc_of::<Knots>(),
        doc_of::<Sinks>(),
        doc_of::<Diagnosis>(),
        doc_of::<LatencyBins>(),
        doc_of::<LatencyPeaks>(),
    ]
}

/// The schema's reference as Markdown: what docs/tables.md holds between its markers
/// (a test keeps the two equal).
pub fn catalog_markdown() -> String {
    let mut s = String::new();
    for t in catalog() {
        s.push_str(&format!("### `{}`\n\n{}\n\n", t.name, t.doc));
        s.push_str("| column | type | meaning |\n|---|---|---|\n");
        s.push_str("| `trace_id` | VARCHAR | The trace (`traces.trace_id`). |\n");
        s.push_str("| `host` | VARCHAR | The host it was recorded on. |\n");
        for c in &t.columns {
            s.push_str(&format!("| `{}` | {} | {} |\n", c.name, c.sql_type, c.doc));
        }
        s.push('\n');
    }
    s
}
