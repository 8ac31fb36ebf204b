//! Single events of a trace as `causeway dump` prints them: one line of text each, in
//! the spirit of `perf script`, or one JSON object each. No analysis happens here.

pub mod json;
pub mod names;
pub mod text;
