//! The report layer: every renderer and every English sentence causeway prints about
//! an analysis result.
//!
//! Analyses (`causeway-bottleneck`, and the ones to come) return typed results: ids,
//! integer nanoseconds, data from the trace, no prose. This crate turns each result
//! into what people read: labels, seconds and percentages, advice and summaries, in
//! text, JSON and graphviz DOT.
//!
//! # The shape every result follows
//!
//! Each result gets one type here that implements [`View`]:
//!
//! - [`View::write_text`], [`View::write_json`] and, for graphs, [`View::write_dot`]
//!   (the default refuses with [`ReportError::Unsupported`]) each write the whole output
//!   in that form;
//! - [`View::found`] says whether the result holds what its command looks for, which is
//!   the exit status rule (0 found, 1 nothing);
//! - [`View::name`] names it in messages and, later, in the sections of an HTML report.
//!
//! [`render`] writes any view in a chosen [`Format`], so a command picks its output in
//! one place, and a report that gathers several results (the HTML report) can include
//! any analysis through `&dyn View` without knowing its type. A view is built once
//! from the result ([`BottleneckView::new`], [`InfoReport::new`]) and holds everything
//! worded, so the forms agree with each other.
//!
//! Adding an analysis's report: a module here with its view type, its sentences and its
//! renderers, a `View` implementation, and golden output tests for each form.
//!
//! # What it does not do
//!
//! It reads no trace, runs no analysis and knows no command line: the caller passes
//! the result (and, for `info`, what its trace reader counted) and an output writer.
//! The one program it runs is graphviz's `dot`, for [`BottleneckView::write_svg`].
//! Event-by-event output (`causeway dump`) is in [`events`].

mod bottleneck;
mod calls;
mod caveats;
pub mod chrome;
mod compare;
mod diagnose;
mod error;
pub mod events;
mod flame;
mod format;
mod html;
mod info;
pub mod joined;
mod latency;
pub mod notes;
pub mod perfetto;
pub mod site;
pub mod timeline;
mod view;
pub mod wallclock;
mod whatif;

pub use bottleneck::vertex_labels;
pub use bottleneck::{
    BottleneckRows, BottleneckView, EdgeRow, GraphEdge, KnotEdge, KnotRow, SinkRow, VertexRow,
    WaitGraph,
};
pub use calls::{CallsSections, CallsView};
pub use caveats::Caveats;
pub use compare::{CompareView, RunLabel};
pub use diagnose::{ChainRow, DiagnosisDoc, DiagnosisView, VertexDoc, question_text};
pub use error::ReportError;
pub use flame::FlameView;
pub use format::Format;
pub use html::HtmlReport;
pub use info::{
    CgroupSummary, FrameNames, InfoReport, MemorySummary, QuotaSummary, Selection, ThreadRow,
    TraceFacts,
};
pub use latency::{
    DiffInput, LatencyDiffView, LatencyView, ProfileInput, RootPathStatus, RootPathView,
    rootpath_status_text, subject_label,
};
pub use notes::{recording_notes, trace_notes};
pub use view::{View, render};
pub use whatif::WhatIfView;
