//! One module per subcommand. Each parses nothing (`crate::flags` did); analysis
//! results go out through `crate::output`, events through `crate::render`.

pub mod bottleneck;
pub mod calls;
pub mod check;
#[cfg(feature = "cluster")]
pub mod cluster;
#[cfg(not(feature = "cluster"))]
pub use without_cluster as cluster;
pub mod compare;
pub mod demo;
pub mod diagnose;
pub mod dump;
pub mod export;
pub mod flamegraph;
pub mod import;
pub mod info;
pub mod latency;
pub mod latency_live;
pub mod loaded;
pub mod meta;
pub mod record;
pub mod report;
pub mod rootpath;
pub mod rootpath_offline;
pub mod run;
#[cfg(feature = "sql")]
pub mod sql;
#[cfg(feature = "sql")]
pub mod tables;
#[cfg(not(feature = "sql"))]
pub mod without_sql;
#[cfg(not(feature = "sql"))]
pub use without_sql as sql;
#[cfg(not(feature = "sql"))]
pub use without_sql as tables;
pub mod trigger;
pub mod watch;
pub mod whatif;
#[cfg(not(feature = "cluster"))]
pub mod without_cluster;
