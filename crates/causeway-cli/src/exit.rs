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
