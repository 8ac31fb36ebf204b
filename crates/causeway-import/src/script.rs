//! `perf script` text in, trace out: reads the optional `# ...` header, then feeds
//! the rest line by line to the converter.
//!
//! This module does not interpret lines (see [`crate::script_parse`] and
//! [`crate::convert`]) or run perf (see [`crate::perf_run`]).

use crate::convert::Converter;
use crate::error::ImportError;
use crate::options::ImportOptions;
use crate::perf_header::{PerfHeader, WRITER};
use crate::summary::ImportSummary;
use causeway_format::{Header, TraceWriter};
use std::io::{BufRead, Write};

/// Convert `perf script` text into a trace written to `out`.
///
/// The text must have been produced with the fields of [`crate::SCRIPT_FIELDS`] (see there for
/// what may be left out). If it starts with perf's `# ...` header (`perf script
/// --header`), its host name, kernel release, architecture, CPU count and command line
/// fill the fields of `header` that are empty or zero. `header.writer` is set to
/// [`WRITER`] if empty.
///
/// Returns the finished output and a summary; fails only on I/O errors or if nothing in
/// the input was recognized.
pub fn import_perf_script<R: BufRead, W: Write>(
    mut input: R,
    mut header: Header,
    out: W,
    opts: &ImportOptions,
) -> Result<(W, ImportSummary), ImportError> {
    let mut buf = Vec::with_capacity(256);
    let mut perf_header = PerfHeader::default();
    let mut header_lines = 0u64;
    // Leading comment lines: perf's header, if any.
    let first_line = loop {
        if !read_line(&mut input, &mut buf)? {
            break None;
        }
        let line = line_text(&buf);
        if line.starts_with('#') {
            perf_header.parse_line(&line);
            header_lines += 1;
            continue;
        }
        break Some(line.into_owned());
    };
    perf_header.fill_missing(&mut header);
    if header.writer.is_empty() {
        header.writer = WRITER.to_string();
    }
    let mut conv = Converter::new(TraceWriter::new(out, &header)?, opts);
    for _ in 0..header_lines {
        conv.count_skipped_line();
    }
    if let Some(line) = first_line {
        conv.line(&line)?;
        while read_line(&mut input, &mut buf)? {
            conv.line(&line_text(&buf))?;
        }
    }
    conv.finish()
}

/// Read one line into `buf` (terminator removed); false at the end of input.
fn read_line<R: BufRead>(input: &mut R, buf: &mut Vec<u8>) -> Result<bool, ImportError> {
    buf.clear();
    let n = input
        .read_until(b'\n', buf)
        .map_err(|source| ImportError::Io {
            what: "reading perf script output".to_string(),
            source,
        })?;
    if n == 0 {
        return Ok(false);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(true)
}

/// The line as text; invalid UTF-8 (e.g. in a thread name) is replaced, not fatal.
fn line_text(buf: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(buf)
}
