//! The wait-for graph as SVG, drawn by graphviz's `dot` program from the DOT form.

use crate::error::ReportError;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Run `dot -Tsvg -o path` on the graph `dot`.
pub(crate) fn write_svg(dot: &str, path: &Path) -> Result<(), ReportError> {
    let graphviz = |action| move |source| ReportError::Graphviz { action, source };
    let mut child = match Command::new("dot")
        .arg("-Tsvg")
        .arg("-o")
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ReportError::GraphvizMissing);
        }
        Err(e) => return Err(graphviz("running")(e)),
    };
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(dot.as_bytes())
            .map_err(graphviz("writing the graph to"))?;
    }
    let status = child.wait().map_err(graphviz("waiting for"))?;
    if !status.success() {
        return Err(ReportError::GraphvizFailed {
            status,
            path: path.to_path_buf(),
        });
    }
    Ok(())
}
