//! Renderers: turn typed trace data into text or JSON. No analysis happens here.

pub mod bottleneck_dot;
pub mod bottleneck_text;
pub mod event_json;
pub mod event_text;
pub mod info_text;
pub mod names;
