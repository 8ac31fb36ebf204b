//! Where the graph is ambiguous the diagnosis asks (Argus §3.3, InteractiveSlice):
//! an [`Oracle`] answers. [`AutoOracle`] takes the paper's heuristic (Table 4: the
//! most recent incoming edge, and always go on into a culprit); [`ReplayOracle`]
//! replays answers written in a file; the command line adds one that asks in the
//! terminal. Every answer is kept in the result with how it was made.

use crate::graph::{EdgeId, VertexId};
use serde::Serialize;

/// What is asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionKind {
    /// The slice reached a vertex with several strong incoming edges: which one led
    /// here?
    MultipleIncoming,
    /// The slice reached a vertex whose only incoming edges are weak: follow one?
    WeakEdge,
    /// A thread was stalled too while the problem vertex waited: go on into it (the
    /// culprit of the culprit)?
    Proceed,
}

/// One possible answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// The vertex the answer leads to.
    pub vertex: VertexId,
    /// The edge followed, for slicing questions.
    pub edge: Option<EdgeId>,
}

/// A question to an [`Oracle`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Question {
    /// What is asked.
    pub kind: QuestionKind,
    /// The vertex the diagnosis is at.
    pub at: VertexId,
    /// The choices (answer `stop` is always possible too).
    pub candidates: Vec<Candidate>,
    /// The choice the paper's heuristic makes (index into `candidates`).
    pub suggested: usize,
}

/// An answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Choice {
    /// Take this candidate (index into [`Question::candidates`]).
    Take {
        /// The index.
        index: usize,
    },
    /// Stop here.
    Stop,
}

/// How a decision was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// Only one strong edge: nothing to ask.
    Graph,
    /// The paper's heuristic (`--auto`, or answers that ran out).
    Heuristic,
    /// An answer replayed from a file.
    Replayed,
    /// The user, at the prompt.
    User,
}

/// Answers the diagnosis's questions.
pub trait Oracle {
    /// Answer `q`, and say how the answer was made.
    fn ask(&mut self, q: &Question) -> (Choice, DecidedBy);
}

/// The paper's heuristic: the suggested candidate, always.
#[derive(Clone, Copy, Debug, Default)]
pub struct AutoOracle;

impl Oracle for AutoOracle {
    fn ask(&mut self, q: &Question) -> (Choice, DecidedBy) {
        (Choice::Take { index: q.suggested }, DecidedBy::Heuristic)
    }
}

/// One line of an answers file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Candidate number, counted from 1 as the prompt shows them.
    Number(usize),
    /// `stop`.
    Stop,
    /// `auto`: the heuristic's choice.
    Auto,
}

/// A line of an answers file that is not an answer.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("answers line {line}: `{text}` is not a candidate number, `stop` or `auto`")]
pub struct AnswerParseError {
    /// 1-based line number.
    pub line: usize,
    /// The line.
    pub text: String,
}

/// Parse an answers file: one answer per line (a candidate number from 1, `stop`, or
/// `auto`); blank lines and everything after `#` are ignored.
pub fn parse_answers(text: &str) -> Result<Vec<Answer>, AnswerParseError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let a = match line.to_ascii_lowercase().as_str() {
            "stop" | "s" => Answer::Stop,
            "auto" | "a" => Answer::Auto,
            n => match n.parse::<usize>() {
                Ok(k) if k >= 1 => Answer::Number(k),
                _ => {
                    return Err(AnswerParseError {
                        line: i + 1,
                        text: line.to_string(),
                    });
                }
            },
        };
        out.push(a);
    }
    Ok(out)
}

/// Replays answers in order; once they run out (or one names a candidate that does
/// not exist), the heuristic answers and says so.
#[derive(Clone, Debug, Default)]
pub struct ReplayOracle {
    answers: std::collections::VecDeque<Answer>,
    /// Answers that named a candidate the question did not have.
    pub out_of_range: usize,
}

impl ReplayOracle {
    /// Replay these answers.
    pub fn new(answers: Vec<Answer>) -> ReplayOracle {
        ReplayOracle {
            answers: answers.into(),
            out_of_range: 0,
        }
    }

    /// Answers not used.
    pub fn left(&self) -> usize {
        self.answers.len()
    }
}

impl Oracle for ReplayOracle {
    fn ask(&mut self, q: &Question) -> (Choice, DecidedBy) {
        match self.answers.pop_front() {
            Some(Answer::Number(n)) if n <= q.candidates.len() => {
                (Choice::Take { index: n - 1 }, DecidedBy::Replayed)
            }
            Some(Answer::Number(_)) => {
                self.out_of_range += 1;
                AutoOracle.ask(q)
            }
            Some(Answer::Stop) => (Choice::Stop, DecidedBy::Replayed),
            Some(Answer::Auto) => (Choice::Take { index: q.suggested }, DecidedBy::Replayed),
            None => AutoOracle.ask(q),
        }
    }
}
