//! The sentences that say how a trace joined from several hosts was put together: one
//! per host after the first (its clock against the first host's, and how sure that
//! is) and one for what the join could not tie.

use causeway_join::HostJoin;

/// The lines for a joined trace's caveats (nothing for a single host).
pub fn lines(hosts: &[HostJoin]) -> Vec<String> {
    let Some(first) = hosts.first() else {
        return Vec::new();
    };
    if hosts.len() < 2 {
        return Vec::new();
    }
    let mut out = vec![format!(
        "joined {} hosts' recordings on {}'s clock; threads are named `name@host`, and host k's thread ids are `tid + k × 4194304`",
        hosts.len(),
        first.name
    )];
    for h in &hosts[1..] {
        out.push(clock_line(h, hosts));
    }
    let alone: usize = hosts.iter().map(|h| h.flows_alone).sum();
    if alone > 0 {
        out.push(format!(
            "{alone} remote TCP flow{} had data arriving from an address no joined recording has (an unrecorded peer, or addresses rewritten by NAT or a proxy): their waits end at the network, not at a sender",
            if alone == 1 { "" } else { "s" }
        ));
    }
    let short: u64 = hosts.iter().map(|h| h.short_waits_unlinked).sum();
    if short > 0 {
        out.push(format!(
            "{short} wait{} woken by another host's data {} shorter than the clocks' uncertainty: their order against the send is unknown, so they keep the waker the recorder saw",
            if short == 1 { "" } else { "s" },
            if short == 1 { "was" } else { "were" }
        ));
    }
    out
}

fn clock_line(h: &HostJoin, hosts: &[HostJoin]) -> String {
    let c = &h.clock;
    match (c.uncertainty_ns, c.via) {
        (Some(u), Some(via)) => {
            let via = hosts.get(via as usize).map_or("?", |v| v.name.as_str());
            // The offset is against the first host's clock, whichever host measured it.
            let first = hosts.first().map_or("?", |v| v.name.as_str());
            let (dir, abs) = if c.offset_ns >= 0 {
                ("ahead of", c.offset_ns)
            } else {
                ("behind", -c.offset_ns)
            };
            format!(
                "{}: clock {} {dir} {first}'s beyond what the recordings' wall clocks said, ± {} (from {} messages exchanged with {via}); {} wake-up{} tied to a sender on another host",
                h.name,
                duration(abs as u64),
                duration(u),
                c.messages,
                h.crossings,
                if h.crossings == 1 { "" } else { "s" }
            )
        }
        _ => format!(
            "{}: no data exchanged both ways with another joined host, so its clock is placed by the recordings' wall clocks only (NTP-accurate at best): waits it shares with other hosts may be misordered",
            h.name
        ),
    }
}

fn duration(ns: u64) -> String {
    if ns >= 1_000_000 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else {
        format!("{:.1} µs", ns as f64 / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_join::clock::Offset;

    fn host(name: &str, offset_ns: i64, via: Option<u32>, alone: usize) -> HostJoin {
        HostJoin {
            name: name.into(),
            events: 10,
            wall_clock_ns: 0,
            clock: Offset {
                offset_ns,
                uncertainty_ns: via.map(|_| 20_000),
                via,
                messages: 7,
            },
            flows_joined: 1,
            flows_alone: alone,
            arrivals_unmatched: 0,
            crossings: 3,
            short_waits_unlinked: 0,
            tid_base: 0,
        }
    }

    #[test]
    fn each_host_after_the_first_says_its_clock_against_the_first() {
        let hosts = [
            host("a", 0, None, 0),
            host("b", 37_000_000, Some(0), 0),
            host("c", -1_500, Some(1), 2),
            host("d", 0, None, 0),
        ];
        let l = lines(&hosts);
        assert!(
            l[0].starts_with("joined 4 hosts' recordings on a's clock"),
            "{l:?}"
        );
        assert!(
            l[1].starts_with("b: clock 37.000 ms ahead of a's"),
            "{}",
            l[1]
        );
        assert!(
            l[1].contains("± 20.0 µs (from 7 messages exchanged with a)"),
            "{}",
            l[1]
        );
        assert!(l[2].starts_with("c: clock 1.5 µs behind a's"), "{}", l[2]);
        assert!(l[2].contains("exchanged with b"), "{}", l[2]);
        assert!(
            l[3].starts_with("d: no data exchanged both ways"),
            "{}",
            l[3]
        );
        assert!(l[4].starts_with("2 remote TCP flows"), "{}", l[4]);
        assert!(lines(&hosts[..1]).is_empty());
    }
}
