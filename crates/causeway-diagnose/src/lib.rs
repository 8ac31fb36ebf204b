//! Why is it stuck: Argus's interactive causal tracing over causeway's model.
//!
//! [`build`] turns a trace into an [`EventGraph`] of execution segments and waits
//! with strong and weak edges (§3.1, §4.2); [`diagnose`] runs Algorithm 1 (§3.3) from
//! a problem vertex ([`problem_vertex`]): LongRunning slices back to the input that
//! caused the work, RepeatedYield asks for a data flag when none is traced, LongWait
//! finds the most similar earlier wait whose wake-up arrived, slices its normal
//! wake-up path, compares the threads on it and recurses into the one that was
//! stalled too ("the culprit of the culprit"), and reports circular waits. Where the
//! graph is ambiguous it asks an [`Oracle`]; every answer is kept in the
//! [`Diagnosis`].
//!
//! The result holds ids and nanoseconds; `causeway-report` writes the sentences. This
//! crate does not read files, print, or know the command line.

mod adjacency;
mod algo;
mod batching;
mod build;
mod chain;
mod classify;
mod error;
mod graph;
mod objects;
mod options;
mod oracle;
mod problem;
mod result;
mod signals;
mod signature;
mod site;
mod waitkind;

#[cfg(test)]
mod data_tests;
#[cfg(test)]
mod tests;

pub use algo::{case_of, diagnose, find_similar, peers, stop_edge};
pub use build::build;
pub use error::DiagnoseError;
pub use graph::{
    BlockType, Call, Edge, EdgeId, EdgeKind, EventGraph, GraphCounts, Strength, Vertex, VertexId,
    VertexKind, WokenBy,
};
pub use options::{Options, Problem, StallKind, ThreadSelector};
pub use oracle::{
    Answer, AnswerParseError, AutoOracle, Candidate, Choice, DecidedBy, Oracle, Question,
    QuestionKind, ReplayOracle, parse_answers,
};
pub use problem::problem_vertex;
pub use result::{
    Case, CircularWait, Compared, Decision, Diagnosis, Finding, Hop, HopRule, Slice, SliceEnd,
    SliceStep,
};
pub use signals::stop_signal;
pub use signature::Signature;
pub use site::{ProgramSite, program_site};
pub use waitkind::WaitKind;

use causeway_model::Trace;
use causeway_stacks::SyscallSpan;

/// Build the graph, pick the problem vertex and diagnose it: the whole analysis.
pub fn run(
    trace: &Trace,
    syscalls: &[SyscallSpan],
    opts: &Options,
    oracle: &mut dyn Oracle,
) -> Result<(EventGraph, Diagnosis), DiagnoseError> {
    let g = build(trace, syscalls, opts);
    let p = problem_vertex(trace, &g, &opts.problem, opts.stall)?;
    let d = diagnose(&g, p, opts, oracle);
    Ok((g, d))
}
