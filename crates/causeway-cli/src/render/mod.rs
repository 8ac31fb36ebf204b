//! Renderers of single events for `causeway dump`: typed trace data into text or JSON.
//! No analysis happens here; analysis results are rendered by `causeway-report`.

pub mod event_json;
pub mod event_text;
pub mod names;
