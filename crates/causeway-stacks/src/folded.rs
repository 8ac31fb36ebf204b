//! Folded stacks: one line per distinct stack, `root;...;leaf weight`, the input of
//! FlameGraph, inferno and speedscope.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Stacks and their weights. Frames are joined root first with `;`; a frame name never
/// holds `;` or a line break (they are replaced when added).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Folded {
    stacks: BTreeMap<String, u64>,
}

/// A folded line that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("folded stacks line {line}: {reason}")]
pub struct FoldedParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl Folded {
    /// No stacks.
    pub fn new() -> Folded {
        Folded::default()
    }

    /// Add `weight` to the stack of `frames`, root first. Empty stacks and zero weights
    /// are ignored.
    pub fn add<S: AsRef<str>>(&mut self, frames: &[S], weight: u64) {
        if frames.is_empty() || weight == 0 {
            return;
        }
        let mut key = String::new();
        for (i, f) in frames.iter().enumerate() {
            if i > 0 {
                key.push(';');
            }
            push_clean(&mut key, f.as_ref());
        }
        *self.stacks.entry(key).or_insert(0) += weight;
    }

    /// Sum of all weights.
    pub fn total(&self) -> u64 {
        self.stacks.values().sum()
    }

    /// Number of distinct stacks.
    pub fn len(&self) -> usize {
        self.stacks.len()
    }

    /// True if there is no stack.
    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty()
    }

    /// Each stack (frames joined with `;`, root first) and its weight, sorted.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.stacks.iter().map(|(k, &v)| (k.as_str(), v))
    }

    /// Weight of the stacks in which a frame named `frame` appears.
    pub fn weight_with_frame(&self, frame: &str) -> u64 {
        self.stacks
            .iter()
            .filter(|(k, _)| k.split(';').any(|f| f == frame))
            .map(|(_, &v)| v)
            .sum()
    }

    /// The folded text: one `stack weight` line per stack, sorted.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.stacks {
            let _ = writeln!(out, "{k} {v}");
        }
        out
    }

    /// Parse folded text (what [`Folded::to_text`], FlameGraph's `stackcollapse-*` or
    /// inferno's `collapse-*` write). The weight is after the last space; blank lines
    /// are skipped; repeated stacks add up.
    pub fn parse(text: &str) -> Result<Folded, FoldedParseError> {
        let mut f = Folded::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() {
                continue;
            }
            let err = |reason| FoldedParseError {
                line: i + 1,
                reason,
            };
            let (stack, weight) = line.rsplit_once(' ').ok_or(err("no weight"))?;
            let weight: u64 = weight.parse().map_err(|_| err("weight is not a number"))?;
            if stack.is_empty() {
                return Err(err("empty stack"));
            }
            *f.stacks.entry(stack.to_string()).or_insert(0) += weight;
        }
        Ok(f)
    }

    /// Per stack, this weight minus `other`'s (a differential view: positive where
    /// `self` has more).
    pub fn diff(&self, other: &Folded) -> BTreeMap<String, (u64, u64)> {
        let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for (k, &v) in &other.stacks {
            out.entry(k.clone()).or_default().0 = v;
        }
        for (k, &v) in &self.stacks {
            out.entry(k.clone()).or_default().1 = v;
        }
        out
    }
}

/// Append a frame name with the separator and line breaks replaced.
fn push_clean(key: &mut String, frame: &str) {
    for c in frame.chars() {
        key.push(match c {
            ';' => ':',
            '\n' | '\r' => ' ',
            c => c,
        });
    }
}
