//! `causeway diagnose`: why is it stuck (Argus).
//!
//! Reads the trace into the model and facts, and its events once more for the system
//! calls (the model keeps only the call a wait blocked in); builds the event graph and
//! runs Algorithm 1 with the oracle the flags ask for: the terminal, an answers file
//! or the heuristic. `causeway-report` renders the result.

use crate::cmd::loaded;
use crate::exit::BadInput;
use crate::flags::diagnose::DiagnoseArgs;
use crate::output;
use anyhow::{Context, Result};
use causeway_diagnose::{
    AutoOracle, Choice, DecidedBy, DiagnoseError, EventGraph, Oracle, Question, ReplayOracle,
    parse_answers,
};
use causeway_model::Trace;
use causeway_report::{Caveats, DiagnosisView, question_text};
use std::io::{BufRead, IsTerminal, Write};
use std::time::Instant;

/// Asks at the terminal: the question on standard error, the answer from standard
/// input (a number, `s` to stop, empty for the suggestion).
struct TerminalOracle<'a> {
    trace: &'a Trace,
    graph: &'a EventGraph,
}

impl Oracle for TerminalOracle<'_> {
    fn ask(&mut self, q: &Question) -> (Choice, DecidedBy) {
        let stdin = std::io::stdin();
        loop {
            eprint!("{}", question_text(q, self.trace, self.graph));
            eprint!("choice [{}]: ", q.suggested + 1);
            let _ = std::io::stderr().flush();
            let mut line = String::new();
            match stdin.lock().read_line(&mut line) {
                Ok(0) | Err(_) => return AutoOracle.ask(q),
                Ok(_) => {}
            }
            let a = line.trim().to_ascii_lowercase();
            if a.is_empty() {
                return (Choice::Take { index: q.suggested }, DecidedBy::User);
            }
            if a == "s" || a == "stop" {
                return (Choice::Stop, DecidedBy::User);
            }
            match a.parse::<usize>() {
                Ok(n) if (1..=q.candidates.len()).contains(&n) => {
                    return (Choice::Take { index: n - 1 }, DecidedBy::User);
                }
                _ => eprintln!("answer a number from 1 to {}, or s", q.candidates.len()),
            }
        }
    }
}

/// The oracle the flags ask for.
fn oracle<'a>(
    args: &DiagnoseArgs,
    trace: &'a Trace,
    graph: &'a EventGraph,
) -> Result<Box<dyn Oracle + 'a>> {
    if let Some(path) = &args.answers {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading answers {}", path.display()))?;
        let answers = parse_answers(&text).with_context(|| path.display().to_string())?;
        return Ok(Box::new(ReplayOracle::new(answers)));
    }
    // Without a terminal nobody could answer, unless `--prompt` says the answers come
    // down a pipe.
    if args.auto || (!args.prompt && !std::io::stdin().is_terminal()) {
        return Ok(Box::new(AutoOracle));
    }
    Ok(Box::new(TerminalOracle { trace, graph }))
}

/// Run the command; returns the exit code (1 if no stall was found).
pub fn run(args: &DiagnoseArgs) -> Result<u8> {
    let t0 = Instant::now();
    let l = loaded::load_joined_view(&args.traces, args.os_threads)?;
    let t_read = t0.elapsed();
    let origin = l
        .trace
        .model()
        .span()
        .map_or(causeway_format::Timestamp(0), |s| s.start);
    let opts = args.options(origin);
    let t1 = Instant::now();
    let graph = causeway_diagnose::build(&l.trace, &l.extras.syscalls, &opts);
    let t_build = t1.elapsed();
    let problem = causeway_diagnose::problem_vertex(&l.trace, &graph, &opts.problem, opts.stall)
        .map_err(|e| match e {
            DiagnoseError::NoStall => {
                anyhow::Error::new(BadInput(format!("{}: {e}", shown(&args.traces))))
            }
            other => anyhow::Error::new(other),
        })?;
    let mut o = oracle(args, &l.trace, &graph)?;
    let t2 = Instant::now();
    let d = causeway_diagnose::diagnose(&graph, problem, &opts, o.as_mut());
    let t_diag = t2.elapsed();
    drop(o);
    if args.timing {
        let c = graph.counts();
        eprintln!(
            "causeway: graph of {} vertices, {} edges ({} strong, {} weak); read {:.3} s, \
             graph built in {:.3} s, diagnosed in {:.3} s",
            c.vertices,
            c.edges,
            c.strong,
            c.weak,
            t_read.as_secs_f64(),
            t_build.as_secs_f64(),
            t_diag.as_secs_f64()
        );
    }
    let view = DiagnosisView::new(&d, &l.trace, &graph)
        .context("the diagnosis names a vertex the graph does not have")?
        .verbose(args.verbose);
    // Lost events are said before the diagnosis (a missing wake-up can hide a link).
    output::emit_with(
        &view,
        output::format(args.json, args.dot),
        &[("", &Caveats::of(&l.trace).with_hosts(&l.hosts))],
    )
}

/// The traces as a message names them.
fn shown(paths: &[std::path::PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" + ")
}
