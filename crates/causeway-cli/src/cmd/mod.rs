//! One module per subcommand. Each parses nothing (`crate::flags` did) and renders
//! through `crate::render`.

pub mod bottleneck;
pub mod check;
pub mod demo;
pub mod dump;
pub mod import;
pub mod info;
pub mod record;
pub mod trigger;
