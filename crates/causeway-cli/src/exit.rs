//! Exit codes and how errors map to them.

use causeway_format::FormatError;

/// Success.
pub const OK: u8 = 0;
/// The analysis found nothing, or the user asked for something impossible.
pub const NOTHING_OR_USER_ERROR: u8 = 1;
/// The input (trace or recording) is bad.
pub const BAD_INPUT: u8 = 2;

/// Marks an error as caused by bad input data (exit 2).
#[derive(Debug)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Exit code for an error: 2 if any cause is a format error about the data or a
/// [`BadInput`], 1 otherwise (usage, missing files, permissions).
pub fn code_for(err: &anyhow::Error) -> u8 {
    for cause in err.chain() {
        if cause.downcast_ref::<BadInput>().is_some() {
            return BAD_INPUT;
        }
        if let Some(fe) = cause.downcast_ref::<FormatError>() {
            return match fe {
                FormatError::Io(_) | FormatError::Invalid(_) => NOTHING_OR_USER_ERROR,
                _ => BAD_INPUT,
            };
        }
    }
    NOTHING_OR_USER_ERROR
}

/// The error and its causes on one line, `outer: inner: ...`, without saying a cause
/// twice: an error whose message already ends with its cause's message (a library
/// error that both prints and exposes its source) keeps only the longer one, so a full
/// disk is reported once, not three times.
pub fn describe(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let msg = cause.to_string();
        if parts.last().is_some_and(|last| last.ends_with(&msg)) {
            continue;
        }
        parts.push(msg);
    }
    parts.join(": ")
}

/// True if the error is a closed pipe (`causeway dump | head`), which is not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<FormatError>().is_some_and(
                |e| matches!(e, FormatError::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe),
            )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("writing the trace: {0}")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn a_cause_is_said_once() {
        let io = std::io::Error::from_raw_os_error(libc::ENOSPC);
        let text = io.to_string();
        let e = anyhow::Error::new(Outer(io)).context("recording");
        let d = describe(&e);
        assert_eq!(d, format!("recording: writing the trace: {text}"));
        assert_eq!(d.matches(&text).count(), 1, "{d}");
        // Causes that add something are all kept.
        let e = anyhow::anyhow!("inner").context("middle").context("outer");
        assert_eq!(describe(&e), "outer: middle: inner");
    }
}
