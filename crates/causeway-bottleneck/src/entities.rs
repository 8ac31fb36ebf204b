//! Timeline entities: the threads whose waits the cascade walks, with short-term
//! threads merged into virtual long-running threads (wPerf §3.3).
//!
//! A short-term thread was created and exited during the recording and lived less than
//! a fraction of it. Short-term threads of one process with the same name once digits
//! are stripped form one virtual thread that is running whenever any member is running
//! or runnable, and waiting otherwise. Each of its waits ends when some member becomes
//! active again: by that member's waker, or by the member's creator when the member is
//! new (the virtual thread waited for new work from the thread that spawns them).

use crate::stacks::PackedStack;
use crate::waits::{OUTSIDE, Resolver, Wait, WaitStats, thread_waits};
use crate::waker::WakerKey;
use causeway_model::{Model, Thread};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// What a timeline entity stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EntityKind {
    /// One model thread (index into the model's threads).
    Thread(usize),
    /// Short-term threads merged (model thread indices, in order).
    ShortTerm(Vec<usize>),
}

/// A timeline entity and its waits.
#[derive(Clone, Debug)]
pub(crate) struct Entity {
    pub(crate) kind: EntityKind,
    /// Time-ordered, non-overlapping.
    pub(crate) waits: Vec<Wait>,
    /// Time blocked in shutdown hand-offs and idle polls (`WaitStats::exit_ns`,
    /// `idle_poll_ns`): on no edge, but part of the time the entity spent off a CPU.
    pub(crate) exit_ns: u64,
}

pub(crate) use causeway_model::strip_digits;

/// Decide which model threads become one entity. Returns the entity kinds and, per
/// model thread, its entity index ([`OUTSIDE`] for threads `inside` rejects).
pub(crate) fn assign(
    model: &Model,
    merge_short_term: bool,
    short_term_fraction: f64,
    inside: &dyn Fn(usize, &Thread) -> bool,
) -> (Vec<EntityKind>, Vec<u32>) {
    let threads = model.threads().as_slice();
    let duration = model.span().map_or(0, |s| s.duration().0);
    let limit = (duration as f64 * short_term_fraction) as u64;
    let mut groups: BTreeMap<(u32, String), Vec<usize>> = BTreeMap::new();
    if merge_short_term {
        for (i, t) in threads.iter().enumerate() {
            if !inside(i, t) {
                continue;
            }
            let lived = t.span().map_or(0, |s| s.duration().0);
            if t.created.is_some() && t.exited.is_some() && lived < limit {
                let key = (t.tgid.map_or(0, |g| g.0), strip_digits(&t.comm));
                groups.entry(key).or_default().push(i);
            }
        }
        groups.retain(|_, v| v.len() >= 2);
    }
    let mut entity_of = vec![OUTSIDE; threads.len()];
    let mut assigned = vec![false; threads.len()];
    let mut kinds: Vec<EntityKind> = Vec::new();
    // Entities in model-thread order (a group where its first member is), so numbering
    // is deterministic.
    let mut group_of: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for members in groups.into_values() {
        group_of.insert(members[0], members);
    }
    for i in 0..threads.len() {
        if assigned[i] || !inside(i, &threads[i]) {
            continue;
        }
        let e = kinds.len() as u32;
        match group_of.remove(&i) {
            Some(members) => {
                for &m in &members {
                    entity_of[m] = e;
                    assigned[m] = true;
                }
                kinds.push(EntityKind::ShortTerm(members));
            }
            None => {
                entity_of[i] = e;
                kinds.push(EntityKind::Thread(i));
            }
        }
    }
    (kinds, entity_of)
}

/// Build every entity's waits, threads in parallel. Output order and content do not
/// depend on the number of worker threads.
pub(crate) fn build(kinds: Vec<EntityKind>, r: &Resolver<'_>) -> (Vec<Entity>, WaitStats) {
    let per: Vec<(Entity, WaitStats)> = kinds
        .into_par_iter()
        .map(|kind| {
            let (waits, stats) = match kind {
                EntityKind::Thread(i) => thread_waits(i, r),
                EntityKind::ShortTerm(ref members) => {
                    let mut stats = WaitStats::default();
                    let mut parts = Vec::with_capacity(members.len());
                    for &m in members {
                        let (w, s) = thread_waits(m, r);
                        stats.add(&s);
                        parts.push((&r.threads[m], w));
                    }
                    (virtual_waits(&parts, r), stats)
                }
            };
            let exit_ns = stats.exit_ns + stats.idle_poll_ns;
            (
                Entity {
                    kind,
                    waits,
                    exit_ns,
                },
                stats,
            )
        })
        .collect();
    let mut total = WaitStats::default();
    let mut entities = Vec::with_capacity(per.len());
    for (e, s) in per {
        total.add(&s);
        entities.push(e);
    }
    (entities, total)
}

/// What made a member active at the start of one of its active pieces.
#[derive(Clone, Copy)]
struct Piece {
    start: u64,
    end: u64,
    waker: WakerKey,
    waker_stack: PackedStack,
    waker_weight: u32,
    wait_stack: PackedStack,
}

/// Waits of a virtual thread: the times no member is active (running, runnable or in
/// a state not known to be waiting), between the first member's start and the last
/// member's end.
fn virtual_waits(members: &[(&Thread, Vec<Wait>)], r: &Resolver<'_>) -> Vec<Wait> {
    let mut pieces: Vec<Piece> = Vec::new();
    for (th, waits) in members {
        let Some(span) = th.span() else { continue };
        let creator = th
            .parent_tid
            .map_or(WakerKey::None, |p| r.entity(p, span.start));
        let mut at = span.start.0;
        let mut cause = (creator, PackedStack::EMPTY, PackedStack::EMPTY, 1);
        for w in waits {
            if w.start > at {
                pieces.push(Piece {
                    start: at,
                    end: w.start,
                    waker: cause.0,
                    waker_stack: cause.1,
                    waker_weight: cause.3,
                    wait_stack: cause.2,
                });
            }
            at = w.end;
            cause = (w.waker, w.waker_stack, w.wait_stack, w.waker_weight);
        }
        if span.end.0 > at {
            pieces.push(Piece {
                start: at,
                end: span.end.0,
                waker: cause.0,
                waker_stack: cause.1,
                waker_weight: cause.3,
                wait_stack: cause.2,
            });
        }
    }
    pieces.sort_by_key(|p| (p.start, p.end));
    let mut out = Vec::new();
    let mut covered: Option<u64> = None;
    for p in pieces {
        match covered {
            Some(c) if p.start > c => {
                if p.waker != WakerKey::None {
                    out.push(Wait {
                        start: c,
                        end: p.start,
                        waker: p.waker,
                        wait_stack: p.wait_stack,
                        waker_stack: p.waker_stack,
                        waker_weight: p.waker_weight,
                    });
                }
                covered = Some(p.end);
            }
            Some(c) => covered = Some(c.max(p.end)),
            None => covered = Some(p.end),
        }
    }
    out
}
