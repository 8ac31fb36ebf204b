//! Why a JVM could not be read.

/// Why a JVM could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JvmError {
    /// libjvm does not export a symbol the reader needs.
    #[error("libjvm exports no {0}")]
    NoSymbol(&'static str),
    /// A word the reader needs could not be read.
    #[error("cannot read {0} in the JVM's memory")]
    Unreadable(&'static str),
    /// The structure tables lack a field or type the reader needs.
    #[error("the JVM's structure tables have no {0}")]
    NoField(String),
    /// The process maps no `libjvm.so` (it is not a HotSpot JVM).
    #[error("no libjvm.so mapped")]
    NotJvm,
}
