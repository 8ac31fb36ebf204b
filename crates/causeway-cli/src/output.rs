//! Where a command's result goes: the report layer writes its view to standard output
//! in the chosen form, and whether it found anything becomes the exit code. Every
//! analysis command ends here, so none picks its output with its own `if`.

use crate::exit;
use anyhow::Result;
use causeway_report::{Caveats, Format, View, render};
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

/// [`emit`], with what the reader must know first at the top: in text, a `warning:`
/// line per caveat before the report; in JSON, a `caveats` object (`caveats` per input,
/// keyed by its label, when there are several); in DOT, `//` comment lines.
pub fn emit_with(view: &dyn View, format: Format, caveats: &[(&str, &Caveats)]) -> Result<u8> {
    if caveats.iter().all(|(_, c)| c.is_empty()) {
        return emit(view, format);
    }
    let mut body = Vec::new();
    render(view, format, &mut body)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match format {
        Format::Json => out.write_all(&with_json_caveats(&body, caveats)?)?,
        Format::Text | Format::Dot => {
            let lead = if format == Format::Dot { "// " } else { "" };
            for (label, c) in caveats {
                for l in &c.lines {
                    let who = if label.is_empty() {
                        String::new()
                    } else {
                        format!("{label}: ")
                    };
                    writeln!(out, "{lead}warning: {who}{l}")?;
                }
            }
            writeln!(out)?;
            out.write_all(&body)?;
        }
    }
    out.flush()?;
    Ok(if view.found() {
        exit::OK
    } else {
        exit::NOTHING_OR_USER_ERROR
    })
}

/// Add the caveats to a JSON document's top-level object (kept as it is otherwise).
fn with_json_caveats(body: &[u8], caveats: &[(&str, &Caveats)]) -> Result<Vec<u8>> {
    let mut doc: serde_json::Value = serde_json::from_slice(body)?;
    if let Some(obj) = doc.as_object_mut() {
        let value = match caveats {
            [(_, one)] => serde_json::to_value(one)?,
            many => serde_json::Value::Object(
                many.iter()
                    .map(|(label, c)| Ok((label.to_string(), serde_json::to_value(c)?)))
                    .collect::<Result<_>>()?,
            ),
        };
        obj.insert("caveats".to_string(), value);
    }
    let mut out = serde_json::to_vec_pretty(&doc)?;
    out.push(b'\n');
    Ok(out)
}
