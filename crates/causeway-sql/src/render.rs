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
            // Arrow's writer prints `[]` for no rows in some versions and nothing in
            // others: render into a buffer and make sure an empty answer is one `[]`.
            let mut buf = Vec::new();
            let mut w = arrow::json::ArrayWriter::new(&mut buf);
            let refs: Vec<&RecordBatch> = batches.iter().collect();
            w.write_batches(&refs).map_err(SqlError::Render)?;
            w.finish().map_err(SqlError::Render)?;
            drop(w);
            if buf.is_empty() {
                buf.extend_from_slice(b"[]");
            }
            out.write_all(&buf)
                .map_err(|e| SqlError::Render(e.into()))?;
            writeln!(out).map_err(|e| SqlError::Render(e.into()))?;
        }
    }
    Ok(())
}

/// Rows in `batches`.
pub fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(|b| b.num_rows()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Int64Array};
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    fn batch(values: &[i64]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        let col: ArrayRef = Arc::new(Int64Array::from(values.to_vec()));
        RecordBatch::try_new(schema, vec![col]).unwrap()
    }

    fn json(batches: &[RecordBatch]) -> String {
        let mut out = Vec::new();
        write(batches, Format::Json, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn an_empty_answer_is_one_empty_array() {
        assert_eq!(json(&[]), "[]\n");
        assert_eq!(json(&[batch(&[])]), "[]\n");
        assert_eq!(json(&[batch(&[]), batch(&[])]), "[]\n");
    }

    #[test]
    fn rows_of_several_batches_are_one_array() {
        let got = json(&[batch(&[1]), batch(&[]), batch(&[2, 3])]);
        assert_eq!(got, "[{\"x\":1},{\"x\":2},{\"x\":3}]\n");
    }
}
