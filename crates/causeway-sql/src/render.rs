//! Query results printed: an aligned text table, CSV with a header, or one JSON array
//! of objects (integers stay integers).

use crate::SqlError;
use arrow::record_batch::RecordBatch;
use std::io::Write;

/// How rows are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned text table.
    Table,
    /// CSV with a header line.
    Csv,
    /// A JSON array of objects.
    Json,
}

/// Print `batches` to `out`.
pub fn write(batches: &[RecordBatch], format: Format, out: &mut dyn Write) -> Result<(), SqlError> {
    match format {
        Format::Table => {
            let t =
                arrow::util::pretty::pretty_format_batches(batches).map_err(SqlError::Render)?;
            writeln!(out, "{t}").map_err(|e| SqlError::Render(e.into()))?;
        }
        Format::Csv => {
            let mut w = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(out);
            for b in batches {
                w.write(b).map_err(SqlError::Render)?;
            }
        }
        Format::Json => {
            let mut w = arrow::json::ArrayWriter::new(&mut *out);
            let refs: Vec<&RecordBatch> = batches.iter().collect();
            w.write_batches(&refs).map_err(SqlError::Render)?;
            w.finish().map_err(SqlError::Render)?;
            let empty = batches.iter().all(|b| b.num_rows() == 0);
            if empty {
                // The writer prints nothing for no rows; an empty array is still JSON.
                write!(out, "[]").map_err(|e| SqlError::Render(e.into()))?;
            }
            writeln!(out).map_err(|e| SqlError::Render(e.into()))?;
        }
    }
    Ok(())
}

/// Rows in `batches`.
pub fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(|b| b.num_rows()).sum()
}
