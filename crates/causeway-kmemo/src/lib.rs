//! The kernel's half of the unwind memo: stacks the BPF side may recognize by itself.
//!
//! After user space unwinds a copied stack, it knows what that unwind depended on: its
//! start (ip, sp), the copy's extent and the stack words it read (the unwinder's
//! [`Basis`]). Written to the `ustack_memo` map, that lets the BPF side check those
//! words itself the next time a thread stops at the same place and, when they hold the
//! same values, send a memo id in place of the copy: no stack bytes through the ring,
//! no parse, no unwind. A thread blocks at the same few places again and again, so
//! after the first round almost every stack is recognized this way.
//!
//! An entry is exact, not a guess: an unwind is a function of its start registers, the
//! words it reads and, only when it ran into the end of the copy, the copy's extent
//! (which the entry then checks too). Entries of a process are deleted when its
//! code mappings change (its unwinds may differ then) and when it exits (its tgid may
//! be reused); ids are never reused, so a record still in the ring names the result it
//! was made for.
//!
//! This crate makes the decisions: which unwinds get an entry, what each checks, which
//! id stands for which result, when an entry is replaced or kept, which entries go when
//! a process changes; they come out as [`MemoOp`]s. It knows no BPF: the recorder
//! writes each [`Entry`] into its `ustack_memo` map in the layout its BPF side reads.
//! A job of its own, as the flight recorder's decisions are (`causeway-flight`): what
//! the memo may promise is a question about unwinds, answered and tested without a
//! kernel, and the recorder only applies the answer.

use causeway_format::StackId;
use causeway_unwind::{Basis, StackCopy, UnwindEnd, copy_flags};
use rustc_hash::FxHashMap;

/// Stack words one entry can check: the BPF side's `MEMO_WORDS` (the recorder checks
/// at build time that the two agree).
pub const MEMO_WORDS: usize = 64;

/// Entries the map holds: the `max_entries` of the BPF side's `ustack_memo` map.
pub const MAP_ENTRIES: usize = 16384;

/// How often one start may get a new entry because its words changed: a place reached
/// along two call paths that alternate would otherwise rewrite its entry every time;
/// past this the place keeps its last entry and the other path is copied as before.
const MAX_REPLACED: u8 = 4;

/// Most ids handed out in one recording (16 bytes each in user space).
const MAX_IDS: usize = 1 << 22;

/// A change to the BPF map, applied by the session after each batch.
#[derive(Clone, Debug)]
pub enum MemoOp {
    /// Add or replace the entry of this start.
    Put(Key, Entry),
    /// Remove the entry of this start.
    Delete(Key),
}

/// The key fields of an entry: tgid, ip, sp.
pub type Key = (u32, u64, u64);

/// What an entry checks besides its start: rbp, the copy's length and flags (only
/// when the unwind depended on them), the words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checks {
    /// rbp, when the unwind read through it.
    pub bp: Option<u64>,
    /// The copy's length and its `CUT | TOP` flags, when the unwind ran into its end.
    pub extent: Option<(u32, u16)>,
    /// (byte offset from sp, value) of each word the unwind read, by offset.
    pub words: Vec<(u16, u64)>,
}

/// One entry for the BPF side: the memo id a matching stack is sent as, and what it
/// checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The memo id ([`KernelMemo::result`]).
    pub id: u32,
    /// What a stack must hold for the id to stand for it.
    pub checks: Checks,
}

struct Installed {
    checks: Checks,
    replaced: u8,
}

/// Ids handed to the BPF side, what each stands for, and the changes not yet applied.
#[derive(Default)]
pub struct KernelMemo {
    /// By id: the user stack and how its unwind ended.
    results: Vec<(Option<StackId>, UnwindEnd)>,
    installed: FxHashMap<Key, Installed>,
    /// Starts whose unwind read more words than an entry holds: not offered again.
    refused: rustc_hash::FxHashSet<Key>,
    by_tgid: FxHashMap<u32, Vec<Key>>,
    ops: Vec<MemoOp>,
}

impl std::fmt::Debug for KernelMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelMemo")
            .field("ids", &self.results.len())
            .field("entries", &self.installed.len())
            .finish()
    }
}

impl KernelMemo {
    /// Is an unwind of this copy worth offering? Not when its start was refused before
    /// or keeps its last entry: asking the unwinder for the basis costs a copy of it.
    pub fn wants(&self, tgid: u32, copy: &StackCopy) -> bool {
        let key = (tgid, copy.ip, copy.sp);
        !self.refused.contains(&key)
            && self
                .installed
                .get(&key)
                .is_none_or(|e| e.replaced < MAX_REPLACED)
    }

    /// What memo id `id` stands for.
    pub fn result(&self, id: u32) -> Option<(Option<StackId>, UnwindEnd)> {
        self.results.get(id as usize).copied()
    }

    /// Offer the BPF side an unwound copy: `basis` is what its unwind read, `result`
    /// the user stack it gave. Unwinds that depended on a copy's extent the BPF side
    /// cannot reproduce before reading (no stack mapping found, a failed read) and
    /// unwinds that read more words than an entry holds are left out.
    pub fn install(
        &mut self,
        tgid: u32,
        copy: &StackCopy,
        basis: Basis,
        result: (Option<StackId>, UnwindEnd),
    ) {
        let unsure = copy.flags & (copy_flags::NO_VMA | copy_flags::RANGE_STALE) != 0;
        if (unsure && !basis.extent_free) || self.results.len() >= MAX_IDS {
            return;
        }
        let key: Key = (tgid, copy.ip, copy.sp);
        let len = copy.data.len() as u64;
        let mut words: Vec<(u16, u64)> = Vec::with_capacity(basis.words.len());
        for (addr, val) in basis.words {
            let Some(off) = addr.checked_sub(copy.sp).filter(|o| o + 8 <= len) else {
                return;
            };
            words.push((off as u16, val));
        }
        words.sort_unstable();
        words.dedup();
        if words.len() > MEMO_WORDS {
            self.refused.insert(key);
            return;
        }
        let checks = Checks {
            bp: basis.bp,
            extent: (!basis.extent_free).then_some({
                (
                    len as u32,
                    (copy.flags & (copy_flags::CUT | copy_flags::TOP)) as u16,
                )
            }),
            words,
        };
        let replaced = match self.installed.get(&key) {
            // Already given (the map is written after the batch): nothing new.
            Some(e) if e.checks == checks => return,
            Some(e) if e.replaced >= MAX_REPLACED => return,
            Some(e) => e.replaced + 1,
            None if self.installed.len() >= MAP_ENTRIES => return,
            None => {
                self.by_tgid.entry(tgid).or_default().push(key);
                0
            }
        };
        let id = self.results.len() as u32;
        self.results.push(result);
        let entry = Entry {
            id,
            checks: checks.clone(),
        };
        self.ops.push(MemoOp::Put(key, entry));
        self.installed.insert(key, Installed { checks, replaced });
    }

    /// Drop a process's entries: its mappings changed, it exec'd or it exited.
    pub fn forget(&mut self, tgid: u32) {
        for key in self.by_tgid.remove(&tgid).unwrap_or_default() {
            self.installed.remove(&key);
            self.ops.push(MemoOp::Delete(key));
        }
    }

    /// The changes to apply to the map, oldest first.
    pub fn take_ops(&mut self) -> Vec<MemoOp> {
        std::mem::take(&mut self.ops)
    }

    /// Entries given to the BPF side and not deleted.
    pub fn entries(&self) -> usize {
        self.installed.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(flags: u32) -> StackCopy {
        StackCopy {
            ip: 0x401000,
            sp: 0x7ff0_0000,
            bp: 0,
            flags,
            data: vec![0; 256],
        }
    }

    fn basis(words: &[(u64, u64)]) -> Basis {
        Basis {
            bp: None,
            words: words.to_vec(),
            extent_free: false,
        }
    }

    const RESULT: (Option<StackId>, UnwindEnd) = (Some(StackId(3)), UnwindEnd::Complete);

    #[test]
    fn an_entry_names_its_words_by_offset_and_its_id_by_result() {
        let mut m = KernelMemo::default();
        let sp = 0x7ff0_0000;
        let words = [(sp + 8, 0x401234), (sp + 40, 0x401500), (sp + 8, 0x401234)];
        let c = copy(copy_flags::TOP | copy_flags::RANGE_LOOKUP);
        m.install(7, &c, basis(&words), RESULT);
        let ops = m.take_ops();
        let [MemoOp::Put(k, v)] = ops.as_slice() else {
            panic!("one entry expected: {ops:?}");
        };
        assert_eq!(*k, (7, 0x401000, sp));
        // The unwind ran into the copy's end: its length and flags are checked too.
        assert_eq!(
            v.checks,
            Checks {
                bp: None,
                extent: Some((256, copy_flags::TOP as u16)),
                words: vec![(8, 0x401234), (40, 0x401500)],
            }
        );
        assert_eq!(m.result(v.id), Some(RESULT));
        // The same again before the map is written: nothing new.
        m.install(7, &copy(copy_flags::TOP), basis(&words[..2]), RESULT);
        assert!(m.take_ops().is_empty());
    }

    #[test]
    fn an_unwind_that_never_reached_the_copys_end_checks_only_words_and_rbp() {
        let mut m = KernelMemo::default();
        let sp = 0x7ff0_0000;
        let b = Basis {
            bp: Some(0x7ff0_0100),
            words: vec![(sp + 16, 5)],
            extent_free: true,
        };
        // Even from a copy whose range was not found: its length did not matter.
        m.install(7, &copy(copy_flags::NO_VMA), b, RESULT);
        let ops = m.take_ops();
        let [MemoOp::Put(_, v)] = ops.as_slice() else {
            panic!("one entry expected: {ops:?}");
        };
        assert_eq!(
            v.checks,
            Checks {
                bp: Some(0x7ff0_0100),
                extent: None,
                words: vec![(16, 5)],
            }
        );
    }

    #[test]
    fn copies_the_kernel_cannot_reproduce_get_no_entry() {
        let mut m = KernelMemo::default();
        let sp = 0x7ff0_0000;
        m.install(7, &copy(copy_flags::NO_VMA), basis(&[(sp, 1)]), RESULT);
        m.install(7, &copy(copy_flags::RANGE_STALE), basis(&[(sp, 1)]), RESULT);
        // A word outside the copy, and more words than an entry holds.
        m.install(7, &copy(0), basis(&[(sp + 256, 1)]), RESULT);
        let many: Vec<(u64, u64)> = (0..=MEMO_WORDS as u64).map(|i| (sp + 8 * i, i)).collect();
        let big = StackCopy {
            data: vec![0; 1024],
            ..copy(0)
        };
        m.install(7, &big, basis(&many), RESULT);
        assert!(!m.wants(7, &big), "refused once, not asked again");
        assert!(m.take_ops().is_empty());
        assert_eq!(m.entries(), 0);
    }

    #[test]
    fn a_place_reached_two_ways_is_rewritten_a_few_times_then_kept() {
        let mut m = KernelMemo::default();
        let sp = 0x7ff0_0000;
        for i in 0..10u64 {
            m.install(7, &copy(0), basis(&[(sp + 8, i % 2)]), RESULT);
        }
        assert_eq!(m.take_ops().len(), 1 + MAX_REPLACED as usize);
    }

    #[test]
    fn forgetting_a_process_deletes_its_entries_only() {
        let mut m = KernelMemo::default();
        let sp = 0x7ff0_0000;
        m.install(7, &copy(0), basis(&[(sp, 1)]), RESULT);
        m.install(8, &copy(0), basis(&[(sp, 1)]), RESULT);
        m.take_ops();
        m.forget(7);
        let ops = m.take_ops();
        assert!(matches!(ops.as_slice(), [MemoOp::Delete(k)] if k.0 == 7));
        assert_eq!(m.entries(), 1);
        // Ids stay valid for records still in the ring.
        assert_eq!(m.result(0), Some(RESULT));
    }
}
