//! Options of the calls analysis and the call-chain signature `a>b>c`.

use crate::Error;
use causeway_format::{DurationNs, Tid};

/// What to compute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// How many functions [`crate::CallsResult::top`] keeps.
    pub top: usize,
    /// How many chains [`crate::CallsResult::chains`] keeps.
    pub chains: usize,
    /// Chains count self time inside this window before the trigger (or the trace end).
    pub window: DurationNs,
    /// Only these threads (all if empty).
    pub threads: Vec<Tid>,
    /// A signature to find.
    pub pattern: Option<Pattern>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            top: 20,
            chains: 10,
            window: DurationNs(1_000_000_000),
            threads: Vec::new(),
            pattern: None,
        }
    }
}

/// One step of a signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatternStep {
    /// A function with exactly this name.
    Name(String),
    /// Any one function (`*`).
    Any,
}

/// A call-chain signature: each step is called directly by the one before
/// (`main>loop>read`); the first step may be at any depth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// The steps, outermost first.
    pub steps: Vec<PatternStep>,
}

impl Pattern {
    /// Parse `a>b>c` (`*` matches any one function; spaces around `>` are ignored).
    pub fn parse(s: &str) -> Result<Pattern, Error> {
        let steps: Vec<PatternStep> = s
            .split('>')
            .map(str::trim)
            .map(|p| match p {
                "*" => PatternStep::Any,
                n => PatternStep::Name(n.to_string()),
            })
            .collect();
        let empty = steps
            .iter()
            .any(|st| matches!(st, PatternStep::Name(n) if n.is_empty()));
        if s.trim().is_empty() || empty {
            return Err(Error::BadPattern(s.to_string()));
        }
        Ok(Pattern { steps })
    }

    /// Whether step `i` accepts a function named `name`: the whole name, or the name
    /// without a trailing ` (location)`, as Python functions are named
    /// (`handle (app.py:12)` matches the step `handle`).
    pub fn step_matches(&self, i: usize, name: &str) -> bool {
        match self.steps.get(i) {
            Some(PatternStep::Any) => true,
            Some(PatternStep::Name(n)) => {
                n == name
                    || name
                        .strip_prefix(n.as_str())
                        .is_some_and(|rest| rest.starts_with(" (") && rest.ends_with(')'))
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_parse_and_reject_empty_steps() {
        let p = Pattern::parse("main > * >read").unwrap();
        assert_eq!(p.steps.len(), 3);
        assert!(p.step_matches(1, "anything"));
        assert!(p.step_matches(2, "read"));
        assert!(!p.step_matches(2, "write"));
        assert!(Pattern::parse("a>>b").is_err());
        // Python functions carry their location; the bare qualified name matches them.
        assert!(p.step_matches(2, "read (app.py:3)"));
        assert!(!p.step_matches(2, "reader (app.py:3)"));
        assert!(!p.step_matches(2, "read(x)"));
        assert!(Pattern::parse("").is_err());
    }
}
