//! The shape every result's report follows: [`View`], and [`render`] to pick the form.

use crate::error::ReportError;
use crate::format::Format;
use serde::Serialize;
use std::io::Write;

/// An analysis result made readable. Each result type gets one implementation, in
/// this crate, that owns every word and number format shown for it; the command line
/// (and later the HTML report) only chooses the [`Format`] and where the bytes go.
pub trait View {
    /// The result's name, for messages and section titles (`bottleneck`, `info`).
    fn name(&self) -> &'static str;

    /// True if the result holds what its command looks for (exit status 0), false if it
    /// found nothing (exit status 1).
    fn found(&self) -> bool;

    /// The text form.
    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError>;

    /// The JSON form: one pretty-printed document and a newline.
    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError>;

    /// The graphviz DOT form. Results that are not graphs keep this default, which
    /// refuses.
    fn write_dot(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        let _ = out;
        Err(ReportError::Unsupported {
            view: self.name(),
            format: Format::Dot,
        })
    }
}

/// Write `view` in `format` to `out`, and flush it.
pub fn render(view: &dyn View, format: Format, out: &mut dyn Write) -> Result<(), ReportError> {
    match format {
        Format::Text => view.write_text(out)?,
        Format::Json => view.write_json(out)?,
        Format::Dot => view.write_dot(out)?,
    }
    out.flush()?;
    Ok(())
}

/// The JSON form of a document, for [`View::write_json`] implementations: serialized
/// whole before anything is written, so a closed pipe shows as an I/O error.
pub(crate) fn write_json<T: Serialize>(
    view: &'static str,
    doc: &T,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    let mut bytes =
        serde_json::to_vec_pretty(doc).map_err(|source| ReportError::Json { view, source })?;
    bytes.push(b'\n');
    out.write_all(&bytes)?;
    Ok(())
}
