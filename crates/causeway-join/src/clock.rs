//! Each host's clock offset, estimated from the data its threads exchanged.
//!
//! A TCP message is seen twice: its send on one host and, on the other, the wake-up
//! its bytes caused (tied to the send by sequence number, whatever the clocks say). On
//! a common clock a wake-up cannot come before its send, so with `e` the error of each
//! host's clock, a message from `i` to `j` with delay `d` on the hosts' own clocks says
//! `e_j - e_i <= d`, and one from `j` to `i` says `e_j - e_i >= -d'`: the two directions
//! bound the offset from both sides, as NTP's four timestamps do. The estimate is the
//! middle of the bounds and the uncertainty half their width.
//!
//! Bounds come from a low quantile ([`QUANTILE`]) of each direction's delays rather
//! than the minimum: a send's record is taken when the send call ends, and on a fast
//! path (veth, loopback) the peer is often woken inside the call, so a send preempted
//! just after delivering its data looks like a message that arrived before it left.
//! The quantile keeps a few such sends from deciding the offset; queueing, which only
//! adds delay, stays out of it as long as a quarter of the messages meet none.

/// One direction's delays are summarized by this quantile (see the module docs).
pub const QUANTILE: f64 = 0.25;

/// A message seen at both ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// The sending host.
    pub from: u32,
    /// The receiving host.
    pub to: u32,
    /// Its arrival minus its send, each on its host's clock as first aligned (by the
    /// recordings' wall clocks).
    pub delay_ns: i64,
}

/// One host's clock against the first host's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Offset {
    /// How far the host's clock runs ahead of the first host's (subtract it).
    pub offset_ns: i64,
    /// Half the width of the bounds its messages put on the offset, summed along the
    /// hosts that tie it to the first; `None` when no host exchanged data with it in
    /// both directions (the offset then stays as the wall clocks say).
    pub uncertainty_ns: Option<u64>,
    /// The host its offset was measured against (`None` for the first host and for a
    /// host with no estimate).
    pub via: Option<u32>,
    /// Messages between it and `via`, both directions.
    pub messages: usize,
}

/// The offset of every host (`hosts` of them) from the messages between them. The
/// first host is the reference: its offset is 0 with no uncertainty.
pub fn estimate(hosts: usize, messages: &[Message]) -> Vec<Offset> {
    let mut out = vec![
        Offset {
            offset_ns: 0,
            uncertainty_ns: None,
            via: None,
            messages: 0,
        };
        hosts
    ];
    if hosts == 0 {
        return out;
    }
    out[0].uncertainty_ns = Some(0);
    let pairs = pair_estimates(hosts, messages);
    // Tie hosts to the first along the pairs with the most messages (a maximum
    // spanning tree grown from the first host).
    let mut known = vec![false; hosts];
    known[0] = true;
    loop {
        let next = pairs
            .iter()
            .filter(|p| known[p.a as usize] != known[p.b as usize])
            .max_by_key(|p| p.messages);
        let Some(p) = next else { break };
        let (from, to, diff) = if known[p.a as usize] {
            (p.a, p.b, p.diff_ns)
        } else {
            (p.b, p.a, -p.diff_ns)
        };
        let base = out[from as usize];
        out[to as usize] = Offset {
            offset_ns: base.offset_ns + diff,
            uncertainty_ns: base.uncertainty_ns.map(|u| u + p.uncertainty_ns),
            via: Some(from),
            messages: p.messages,
        };
        known[to as usize] = true;
    }
    out
}

/// Two hosts that exchanged data both ways: `e_b - e_a` and its uncertainty.
#[derive(Clone, Copy, Debug)]
struct PairEstimate {
    a: u32,
    b: u32,
    diff_ns: i64,
    uncertainty_ns: u64,
    messages: usize,
}

fn pair_estimates(hosts: usize, messages: &[Message]) -> Vec<PairEstimate> {
    let mut delays: Vec<Vec<i64>> = vec![Vec::new(); hosts * hosts];
    for m in messages {
        let (f, t) = (m.from as usize, m.to as usize);
        if f < hosts && t < hosts && f != t {
            delays[f * hosts + t].push(m.delay_ns);
        }
    }
    let mut out = Vec::new();
    for a in 0..hosts {
        for b in a + 1..hosts {
            let (ab, ba) = (&delays[a * hosts + b], &delays[b * hosts + a]);
            let (Some(qab), Some(qba)) = (quantile(ab), quantile(ba)) else {
                continue;
            };
            // e_b - e_a <= qab and e_b - e_a >= -qba.
            out.push(PairEstimate {
                a: a as u32,
                b: b as u32,
                diff_ns: (qab - qba) / 2,
                uncertainty_ns: (qab + qba).unsigned_abs() / 2,
                messages: ab.len() + ba.len(),
            });
        }
    }
    out
}

fn quantile(v: &[i64]) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    let k = ((s.len() - 1) as f64 * QUANTILE).round() as usize;
    let (_, q, _) = s.select_nth_unstable(k);
    Some(*q)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages between two hosts whose second clock runs `skew` ahead, with one-way
    /// delays of `base..base + spread`, `n` each way.
    fn exchange(skew: i64, base: i64, spread: i64, n: i64) -> Vec<Message> {
        (0..n)
            .flat_map(|k| {
                let d = base + (k * 7919) % spread;
                [
                    Message {
                        from: 0,
                        to: 1,
                        delay_ns: d + skew,
                    },
                    Message {
                        from: 1,
                        to: 0,
                        delay_ns: d - skew,
                    },
                ]
            })
            .collect()
    }

    #[test]
    fn symmetric_delays_give_the_skew_within_the_uncertainty() {
        for skew in [37_000_000, -120_000_000, 0, 5_000] {
            let est = estimate(2, &exchange(skew, 20_000, 30_000, 200));
            let o = est[1];
            assert!((o.offset_ns - skew).abs() <= 1_000, "{skew}: {o:?}");
            let u = o.uncertainty_ns.unwrap();
            assert!((20_000..=50_000).contains(&u), "{u}");
            assert_eq!(o.via, Some(0));
            assert_eq!(est[0].offset_ns, 0);
        }
    }

    #[test]
    fn a_few_sends_recorded_late_do_not_move_the_estimate() {
        let mut m = exchange(1_000_000, 20_000, 10_000, 100);
        // Ten sends whose record came long after their data was delivered.
        m.extend((0..10).map(|_| Message {
            from: 0,
            to: 1,
            delay_ns: 1_000_000 - 3_000_000,
        }));
        let o = estimate(2, &m)[1];
        assert!((o.offset_ns - 1_000_000).abs() <= 5_000, "{o:?}");
    }

    #[test]
    fn one_way_traffic_gives_no_estimate_and_hosts_chain_through_others() {
        let one_way: Vec<Message> = exchange(9_000, 10_000, 1_000, 20)
            .into_iter()
            .filter(|m| m.from == 0)
            .collect();
        let o = estimate(2, &one_way)[1];
        assert_eq!(o.uncertainty_ns, None);
        assert_eq!(o.offset_ns, 0);
        // Host 2 talks only to host 1, which talks to host 0.
        let mut m = exchange(1_000, 10_000, 1_000, 20);
        m.extend(
            exchange(2_000, 10_000, 1_000, 20)
                .into_iter()
                .map(|x| Message {
                    from: x.from + 1,
                    to: x.to + 1,
                    ..x
                }),
        );
        let est = estimate(3, &m);
        assert_eq!(est[2].via, Some(1));
        assert!((est[2].offset_ns - 3_000).abs() <= 100, "{:?}", est[2]);
    }
}
