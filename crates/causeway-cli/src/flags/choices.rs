//! The closed sets of choices a flag takes, as clap `ValueEnum`s, so a wrong value is
//! refused with the list of real ones and `--help` documents each.
//!
//! The libraries keep their own types free of clap; each choice here maps onto its
//! library type with `From`, so the names users type live in one place.

use causeway_format::EventKindTag;
use causeway_record::stacks::JitSymbols;
use causeway_record::{KernelStacks, StackMode, Unwind};
use clap::ValueEnum;
use clap::builder::PossibleValue;

/// `--stack-mode`: which user frames a stack keeps (Uscope's modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StackModeArg {
    /// The program's last call site.
    App,
    /// Every call site in the program.
    AppAll,
    /// The last call site in each library and the program.
    Libs,
    /// Every frame.
    All,
    /// No user stacks.
    None,
}

impl From<StackModeArg> for StackMode {
    fn from(a: StackModeArg) -> StackMode {
        match a {
            StackModeArg::App => StackMode::App,
            StackModeArg::AppAll => StackMode::AppAll,
            StackModeArg::Libs => StackMode::Libs,
            StackModeArg::All => StackMode::All,
            StackModeArg::None => StackMode::None,
        }
    }
}

/// `--unwind`: how user stacks are unwound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UnwindArg {
    /// Copy a window of the stack and unwind it with the binaries' DWARF call frame
    /// information (complete through code built without frame pointers, such as the C
    /// library).
    Dwarf,
    /// Walk frame pointers in the kernel (cheaper, but stops at the first function
    /// built without them).
    Fp,
}

impl From<UnwindArg> for Unwind {
    fn from(a: UnwindArg) -> Unwind {
        match a {
            UnwindArg::Dwarf => Unwind::Dwarf,
            UnwindArg::Fp => Unwind::FramePointers,
        }
    }
}

/// `--kernel-stacks`: which stacks get kernel frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KernelStacksArg {
    /// Where they explain a wait: uninterruptible sleeps such as disk waits, and
    /// wakers in interrupt context or kernel threads such as I/O completion (not
    /// timer and network softirqs: their context already names the cause).
    Auto,
    /// On every stack.
    All,
    /// No kernel frames.
    None,
}

impl From<KernelStacksArg> for KernelStacks {
    fn from(a: KernelStacksArg) -> KernelStacks {
        match a {
            KernelStacksArg::Auto => KernelStacks::Auto,
            KernelStacksArg::All => KernelStacks::All,
            KernelStacksArg::None => KernelStacks::None,
        }
    }
}

/// `--stacks-on`: where stacks are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StackPlace {
    /// Blocking switch-out.
    Switch,
    /// The waker of a wake-up.
    Waker,
    /// Entry of every recorded syscall.
    Syscall,
    /// Nowhere (alone, or to say nothing in a list).
    None,
}

/// `--kind`: one event kind, named as `causeway_format` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventKindArg(pub EventKindTag);

/// Every kind, in the format's display order (what `--kind` lists).
static EVENT_KINDS: [EventKindArg; EventKindTag::ALL.len()] = {
    let mut out = [EventKindArg(EventKindTag::Lost); EventKindTag::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = EventKindArg(EventKindTag::ALL[i]);
        i += 1;
    }
    out
};

impl ValueEnum for EventKindArg {
    fn value_variants<'a>() -> &'a [Self] {
        &EVENT_KINDS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_kind_is_a_choice_under_its_format_name() {
        for tag in EventKindTag::ALL {
            let arg = EventKindArg::from_str(tag.name(), false).unwrap();
            assert_eq!(arg.0, tag);
        }
        assert!(EventKindArg::from_str("bogus", false).is_err());
    }

    #[test]
    fn choices_keep_their_names() {
        let names = |vs: &[PossibleValue]| -> Vec<String> {
            vs.iter().map(|v| v.get_name().to_string()).collect()
        };
        let modes: Vec<PossibleValue> = StackModeArg::value_variants()
            .iter()
            .filter_map(ValueEnum::to_possible_value)
            .collect();
        assert_eq!(names(&modes), ["app", "app-all", "libs", "all", "none"]);
        assert_eq!(
            StackMode::from(StackModeArg::from_str("app-all", false).unwrap()),
            StackMode::AppAll
        );
        assert_eq!(
            Unwind::from(UnwindArg::from_str("fp", false).unwrap()),
            Unwind::FramePointers
        );
        assert_eq!(
            KernelStacks::from(KernelStacksArg::from_str("auto", false).unwrap()),
            KernelStacks::Auto
        );
    }
}

/// `--jit-symbols`: where JIT-compiled frames get their names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum JitArg {
    /// Perf maps and jitdump files; running JVMs asked for theirs.
    Auto,
    /// Only the perf maps and jitdump files that exist.
    Read,
    /// JIT frames stay addresses.
    Off,
}

impl From<JitArg> for JitSymbols {
    fn from(a: JitArg) -> JitSymbols {
        match a {
            JitArg::Auto => JitSymbols::Auto,
            JitArg::Read => JitSymbols::Read,
            JitArg::Off => JitSymbols::Off,
        }
    }
}
