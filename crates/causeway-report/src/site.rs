//! A place in the program's own code in words: `causeway-model`'s wording, which the
//! bottleneck's profiles share, re-exported where the renderers look for it.

pub use causeway_model::sitename::{OWN_FRAMES, SiteNames, function_name, text};
