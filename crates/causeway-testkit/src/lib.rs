//! Test support only: builders of synthetic event streams, models and tables for the
//! tests, doctests and examples of causeway's crates.
//!
//! Not part of any crate's API. Crates take it as a dev-dependency only, never as a
//! normal one (`scripts/check-deps.sh` fails otherwise), so nothing here ships in the
//! `causeway` binary or in a library's public surface.

pub mod synth;
