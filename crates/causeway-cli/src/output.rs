//! Where a command's result goes: the report layer writes its view to standard output
//! in the chosen form, and whether it found anything becomes the exit code. Every
//! analysis command ends here, so none picks its output with its own `if`.

use crate::exit;
use anyhow::Result;
use causeway_report::{Format, View, render};
use std::io::Write;

/// The form the `--json` / `--dot` flags ask for (`--json` wins), text otherwise.
pub fn format(json: bool, dot: bool) -> Format {
    if json {
        Format::Json
    } else if dot {
        Format::Dot
    } else {
        Format::Text
    }
}

/// Write `view` to standard output; returns the exit code (1 if it found nothing).
pub fn emit(view: &dyn View, format: Format) -> Result<u8> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    render(view, format, &mut out)?;
    out.flush()?;
    Ok(if view.found() {
        exit::OK
    } else {
        exit::NOTHING_OR_USER_ERROR
    })
}
