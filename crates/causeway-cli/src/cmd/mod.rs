//! One module per subcommand. Each parses nothing (`crate::flags` did); analysis
//! results go out through `crate::output`, events through `crate::render`.

pub mod bottleneck;
pub mod check;
pub mod demo;
pub mod dump;
pub mod import;
pub mod info;
pub mod latency;
pub mod latency_live;
pub mod record;
pub mod rootpath;
pub mod rootpath_resume;
pub mod trigger;
