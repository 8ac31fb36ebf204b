//! Errors reading a binary.

use std::path::PathBuf;

/// Why a file could not be read as a Go program.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be read.
    #[error("reading {0}: {1}")]
    Read(PathBuf, #[source] std::io::Error),
    /// Not an ELF file, or a damaged one.
    #[error("not a readable ELF file: {0}")]
    Elf(#[from] object::Error),
    /// The DWARF is damaged.
    #[error("damaged DWARF: {0}")]
    Dwarf(#[from] gimli::Error),
    /// The `.gopclntab` function table is damaged.
    #[error("damaged .gopclntab: {0}")]
    Pclntab(&'static str),
}
