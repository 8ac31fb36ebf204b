//! Running `perf script` on a perf.data file.
//!
//! perf parses perf.data and resolves symbols; this module starts it as a child process
//! with a fixed field list, streams its stdout into [`import_perf_script`], and
//! turns a missing binary or a failed run into a typed error carrying perf's stderr.

use crate::error::ImportError;
use crate::options::{ImportOptions, SCRIPT_FIELDS, SCRIPT_FIELDS_NO_CALLCHAIN};
use crate::perf_header::PerfHeader;
use crate::script::import_perf_script;
use crate::summary::ImportSummary;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;

/// Most stderr bytes kept from perf.
const MAX_STDERR: usize = 64 * 1024;

/// Read the header of a perf.data file (`perf script --header-only`).
pub fn read_perf_header(
    path: impl AsRef<Path>,
    opts: &ImportOptions,
) -> Result<PerfHeader, ImportError> {
    let path = path.as_ref();
    check_input(path)?;
    let mut cmd = Command::new(&opts.perf);
    cmd.arg("script").arg("-i").arg(path).arg("--header-only");
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| spawn_error(&cmd, opts, e))?;
    if !out.status.success() {
        return Err(failed(&cmd, out.status, &out.stderr));
    }
    Ok(PerfHeader::parse(&String::from_utf8_lossy(&out.stdout)))
}

/// Convert a perf.data file into a trace written to `out`.
///
/// Runs `perf script -i <path> --ns -F <fields> --show-task-events --show-mmap-events
/// --show-lost-events` (fields: [`SCRIPT_FIELDS`], or [`SCRIPT_FIELDS_NO_CALLCHAIN`] if
/// no event was recorded with `-g`) and converts its output as
/// [`import_perf_script`] does. The header comes from `perf script --header-only`:
/// perf's clock, host name, kernel release, architecture, CPU count and the `perf
/// record` command line.
///
/// Fails with [`ImportError::PerfNotFound`] if perf cannot be started and
/// [`ImportError::PerfFailed`] (with perf's stderr) if it exits with an error.
pub fn import_perf_data<W: Write>(
    path: impl AsRef<Path>,
    out: W,
    opts: &ImportOptions,
) -> Result<(W, ImportSummary), ImportError> {
    let path = path.as_ref();
    let perf_header = read_perf_header(path, opts)?;
    let header = perf_header.to_header();
    let fields = if perf_header.any_callchain() && opts.stacks {
        SCRIPT_FIELDS
    } else {
        SCRIPT_FIELDS_NO_CALLCHAIN
    };
    let mut cmd = Command::new(&opts.perf);
    cmd.arg("script").arg("-i").arg(path).args([
        "--ns",
        "-F",
        fields,
        "--show-task-events",
        "--show-lost-events",
    ]);
    if opts.mappings {
        cmd.arg("--show-mmap-events");
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| spawn_error(&cmd, opts, e))?;
    let stderr = child.stderr.take().map(spawn_stderr_reader);
    let Some(stdout) = child.stdout.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(ImportError::Io {
            what: format!("`{}` has no stdout", show(&cmd)),
            source: io::Error::other("stdout not captured"),
        });
    };
    let result = import_perf_script(BufReader::with_capacity(1 << 20, stdout), header, out, opts);
    let (status, stderr) = finish_child(&mut child, stderr, result.is_err());
    match (result, status) {
        (Ok((out, mut summary)), Ok(status)) if status.success() => {
            summary.perf_warnings = warnings(&stderr);
            Ok((out, summary))
        }
        // We killed perf after our own failure (no exit code): ours is the real error.
        (Err(e), Ok(status)) if status.code().is_none() => Err(e),
        // perf's own failure explains an empty or cut output better than we can.
        (_, Ok(status)) if !status.success() => Err(failed(&cmd, status, &stderr)),
        (Err(e), _) => Err(e),
        (Ok(_), Err(source)) => Err(ImportError::Io {
            what: format!("waiting for `{}`", show(&cmd)),
            source,
        }),
        (Ok(_), Ok(status)) => Err(failed(&cmd, status, &stderr)),
    }
}

fn check_input(path: &Path) -> Result<(), ImportError> {
    std::fs::File::open(path)
        .map(drop)
        .map_err(|source| ImportError::Io {
            what: format!("cannot open perf data {}", path.display()),
            source,
        })
}

fn spawn_stderr_reader(mut err: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match err.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = MAX_STDERR.saturating_sub(kept.len());
                    kept.extend_from_slice(chunk.get(..n.min(room)).unwrap_or(&[]));
                }
            }
        }
        kept
    })
}

/// Wait for perf (killing it first if the import stopped early) and collect stderr.
fn finish_child(
    child: &mut Child,
    stderr: Option<JoinHandle<Vec<u8>>>,
    kill: bool,
) -> (io::Result<ExitStatus>, Vec<u8>) {
    if kill {
        let _ = child.kill();
    }
    let status = child.wait();
    let stderr = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    (status, stderr)
}

fn spawn_error(cmd: &Command, opts: &ImportOptions, e: io::Error) -> ImportError {
    if e.kind() == io::ErrorKind::NotFound {
        ImportError::PerfNotFound {
            perf: opts.perf.clone(),
        }
    } else {
        ImportError::Io {
            what: format!("starting `{}`", show(cmd)),
            source: e,
        }
    }
}

fn failed(cmd: &Command, status: ExitStatus, stderr: &[u8]) -> ImportError {
    ImportError::PerfFailed {
        command: show(cmd),
        status: status.to_string(),
        stderr: String::from_utf8_lossy(stderr).trim().to_string(),
    }
}

/// perf's stderr lines worth showing (not its per-event-type field notices).
fn warnings(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("not valid for") && !l.contains("Ignoring."))
        .map(str::to_string)
        .collect()
}

fn show(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_perf_binary_is_a_clear_error() {
        let opts = ImportOptions {
            perf: "/nonexistent/perf-binary".into(),
            ..ImportOptions::default()
        };
        // Any existing file will do: perf is never started.
        let err = read_perf_header("Cargo.toml", &opts).unwrap_err();
        assert!(matches!(err, ImportError::PerfNotFound { .. }), "{err}");
        assert!(err.to_string().contains("apt install linux-perf"), "{err}");
    }

    #[test]
    fn missing_input_names_the_file() {
        let err =
            read_perf_header("/nonexistent/perf.data", &ImportOptions::default()).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/perf.data"), "{err}");
    }

    #[test]
    fn warnings_drop_field_notices() {
        let w = warnings(
            b"'trace' not valid for hardware events. Ignoring.\n\nWarning: lost 3 chunks\n",
        );
        assert_eq!(w, vec!["Warning: lost 3 chunks".to_string()]);
    }
}
