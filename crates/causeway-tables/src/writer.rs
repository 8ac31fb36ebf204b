//! Writing one trace's tables: record batches go to a thread that encodes them into
//! one Parquet file per table, so encoding runs beside the pass over the events.
//! The files are written into a temporary directory renamed into place at the end, so
//! a failed conversion never leaves half a partition behind.

use crate::TablesError;
use crate::columns::Table;
use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Rows gathered before a batch goes to the encoder: large enough that Parquet's
/// per-batch costs vanish, small enough that a few in flight stay a few MB.
pub const BATCH_ROWS: usize = 64 * 1024;

/// Batches in flight between the pass over the events and the encoder.
const IN_FLIGHT: usize = 8;

/// What was written for one table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableCount {
    /// Rows.
    pub rows: u64,
    /// Bytes of its Parquet file.
    pub bytes: u64,
}

type Msg = (&'static str, RecordBatch);

/// The writer of one trace's partition: `DIR/host=H/trace=T/<table>.parquet`.
pub struct PartitionWriter {
    trace_id: String,
    host: String,
    tmp: PathBuf,
    dest: PathBuf,
    tx: Option<SyncSender<Msg>>,
    encoder: Option<JoinHandle<Result<BTreeMap<&'static str, TableCount>, TablesError>>>,
    schemas: BTreeMap<&'static str, Arc<Schema>>,
}

impl PartitionWriter {
    /// Start writing the partition of trace `trace_id` of `host` under `root`.
    pub fn create(root: &Path, host: &str, trace_id: &str) -> Result<PartitionWriter, TablesError> {
        let parent = root.join(format!("host={}", path_safe(host)));
        let dest = parent.join(format!("trace={}", path_safe(trace_id)));
        let tmp = parent.join(format!(
            ".trace={}.{}.tmp",
            path_safe(trace_id),
            std::process::id()
        ));
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(|e| TablesError::io(&tmp, e))?;
        }
        std::fs::create_dir_all(&tmp).map_err(|e| TablesError::io(&tmp, e))?;
        let (tx, rx) = sync_channel(IN_FLIGHT);
        let dir = tmp.clone();
        let encoder = std::thread::Builder::new()
            .name("tables-encode".into())
            .spawn(move || encode(&dir, rx))
            .map_err(|e| TablesError::io(&tmp, e))?;
        Ok(PartitionWriter {
            trace_id: trace_id.to_string(),
            host: host.to_string(),
            tmp,
            dest,
            tx: Some(tx),
            encoder: Some(encoder),
            schemas: BTreeMap::new(),
        })
    }

    /// Send the rows `t` holds as one batch (also when it holds none: every table gets
    /// a file, so a query over many traces never misses one).
    pub fn flush<T: Table>(&mut self, t: &mut T) -> Result<(), TablesError> {
        let rows = t.rows();
        let schema = self
            .schemas
            .entry(T::NAME)
            .or_insert_with(|| Arc::new(schema_of::<T>()))
            .clone();
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
        cols.push(constant(&self.trace_id, rows));
        cols.push(constant(&self.host, rows));
        cols.extend(t.finish_columns());
        let batch = RecordBatch::try_new(schema, cols).map_err(TablesError::Arrow)?;
        let tx = self.tx.as_ref().expect("sender lives until finish");
        if tx.send((T::NAME, batch)).is_err() {
            // The encoder stopped: its error is what finish reports.
            return self.join().map(|_| ());
        }
        Ok(())
    }

    /// Send `t`'s rows if it holds a full batch.
    #[inline]
    pub fn flush_full<T: Table>(&mut self, t: &mut T) -> Result<(), TablesError> {
        if t.rows() >= BATCH_ROWS {
            self.flush(t)?;
        }
        Ok(())
    }

    /// Close every file and move the partition into place (replacing an older one);
    /// returns what each table holds, and the partition's directory.
    pub fn finish(mut self) -> Result<(PathBuf, BTreeMap<&'static str, TableCount>), TablesError> {
        let counts = self.join()?;
        if self.dest.exists() {
            std::fs::remove_dir_all(&self.dest).map_err(|e| TablesError::io(&self.dest, e))?;
        }
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| TablesError::io(&self.dest, e))?;
        Ok((self.dest.clone(), counts))
    }

    fn join(&mut self) -> Result<BTreeMap<&'static str, TableCount>, TablesError> {
        self.tx = None;
        match self.encoder.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(TablesError::Encoder),
            None => Err(TablesError::Encoder),
        }
    }
}

impl Drop for PartitionWriter {
    fn drop(&mut self) {
        if self.encoder.is_some() {
            let _ = self.join();
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

/// A table's schema: `trace_id` and `host`, then its own columns.
pub fn schema_of<T: Table>() -> Schema {
    let mut fields = vec![
        Field::new("trace_id", DataType::Utf8, false),
        Field::new("host", DataType::Utf8, false),
    ];
    fields.extend(T::fields());
    let mut meta = std::collections::HashMap::new();
    meta.insert(
        "causeway.schema_version".to_string(),
        crate::SCHEMA_VERSION.to_string(),
    );
    Schema::new_with_metadata(fields, meta)
}

fn constant(v: &str, rows: usize) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(std::iter::repeat_n(v, rows)))
}

/// Columns of times and counters: rising (or nearly) within a file, so their deltas
/// are small; delta encoding stores them in a few bits where a dictionary would grow
/// without use. Set by name: a name means the same in every table.
const DELTA_COLUMNS: [&str; 16] = [
    "ts",
    "start_ns",
    "end_ns",
    "enter_ns",
    "exit_ns",
    "issue_ns",
    "complete_ns",
    "wake_ns",
    "dur_ns",
    "created_ns",
    "exited_ns",
    "seg",
    "waker_seg",
    "stack_id",
    "frame_id",
    "utid",
];

fn properties() -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(1).expect("valid level"),
        ))
        .set_created_by(format!("causeway {}", env!("CARGO_PKG_VERSION")));
    for c in DELTA_COLUMNS {
        let path = ColumnPath::from(c);
        b = b
            .set_column_dictionary_enabled(path.clone(), false)
            .set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
    }
    b.build()
}

/// The encoder thread: one Parquet file per table, opened at its first batch.
fn encode(
    dir: &Path,
    rx: Receiver<Msg>,
) -> Result<BTreeMap<&'static str, TableCount>, TablesError> {
    // zstd level 1: about as fast as snappy to write here and a third smaller; every
    // engine named in docs/fleet.md reads it.
    let props = properties();
    let mut writers: BTreeMap<&'static str, (ArrowWriter<BufWriter<File>>, u64)> = BTreeMap::new();
    for (name, batch) in rx {
        let (w, rows) = match writers.entry(name) {
            std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => {
                let path = dir.join(format!("{name}.parquet"));
                let f = File::create(&path).map_err(|e| TablesError::io(&path, e))?;
                let w =
                    ArrowWriter::try_new(BufWriter::new(f), batch.schema(), Some(props.clone()))
                        .map_err(TablesError::Parquet)?;
                v.insert((w, 0))
            }
        };
        *rows += batch.num_rows() as u64;
        if batch.num_rows() > 0 {
            w.write(&batch).map_err(TablesError::Parquet)?;
        }
    }
    let mut out = BTreeMap::new();
    for (name, (w, rows)) in writers {
        w.close().map_err(TablesError::Parquet)?;
        let path = dir.join(format!("{name}.parquet"));
        let bytes = std::fs::metadata(&path)
            .map_err(|e| TablesError::io(&path, e))?
            .len();
        out.insert(name, TableCount { rows, bytes });
    }
    Ok(out)
}

/// A host or trace name made safe as one path component (`/`, `=` and control
/// characters become `_`), so `host=…` stays one directory level.
pub fn path_safe(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| {
            if c == '/' || c == '=' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    if t.is_empty() || t == "." || t == ".." {
        "_".to_string()
    } else {
        t
    }
}
