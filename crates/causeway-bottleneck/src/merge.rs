//! Merging similar threads into one vertex (wPerf §4.2).
//!
//! Two threads are similar when they belong to the same process, have the same name
//! once digits are removed (`worker-1`, `worker-2`), and spend their waiting time at
//! similar places: the histogram intersection of their wait-time distributions over
//! switch-out stacks is at least the similarity option. A thread with no stacks at all
//! gives no evidence either way and merges by name. Each thread is compared with the
//! first member of each candidate group, in vertex order, so the grouping is
//! deterministic. Edges between members become a self-loop on the merged vertex, which
//! is kept: it is how contention among the members shows.

use crate::stacks::{PackedStack, StackWeights};

/// Histogram intersection of two weight distributions, in `0..=1`; `None` if either
/// has no weight.
pub(crate) fn overlap(a: &StackWeights, b: &StackWeights) -> Option<f64> {
    let ta: u64 = a.values().sum();
    let tb: u64 = b.values().sum();
    if ta == 0 || tb == 0 {
        return None;
    }
    let mut s = 0.0;
    for (k, &va) in a {
        if let Some(&vb) = b.get::<PackedStack>(k) {
            s += (va as f64 / ta as f64).min(vb as f64 / tb as f64);
        }
    }
    Some(s)
}

/// Group vertices. `keys[v]` is `Some((process, name without digits))` for thread
/// vertices that may merge, `None` for vertices that stay alone. Returns the new vertex
/// number of each old vertex; new numbers follow the first member's old number.
pub(crate) fn group(
    keys: &[Option<(u32, String)>],
    dists: &[StackWeights],
    similarity: f64,
) -> Vec<u32> {
    let mut reps: Vec<(usize, u32)> = Vec::new(); // (representative old vertex, new id)
    let mut out = vec![0u32; keys.len()];
    let mut next = 0u32;
    for v in 0..keys.len() {
        let found = keys[v].as_ref().and_then(|k| {
            reps.iter().find(|(r, _)| {
                keys[*r].as_ref() == Some(k)
                    && overlap(&dists[*r], &dists[v]).is_none_or(|o| o >= similarity)
            })
        });
        match found {
            Some(&(_, id)) => out[v] = id,
            None => {
                out[v] = next;
                if keys[v].is_some() {
                    reps.push((v, next));
                }
                next += 1;
            }
        }
    }
    out
}
