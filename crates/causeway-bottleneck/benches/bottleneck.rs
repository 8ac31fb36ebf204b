//! Placeholder replaced by the large-trace benchmark.
fn main() {}
