//! The callees of the function under study, for one level of the root-cause path:
//! direct ones from its disassembly, and the targets of its indirect calls read at run
//! time (DARC §3: "indirect calls resolved at run time").
//!
//! Indirect calls take a pass of their own before the level is measured: a probe on
//! each `call *...` instruction reads the target as the call is made (only inside F0's
//! call and below the path's functions, as for every probe of the level) and counts
//! it per site in the kernel; the targets become functions (`AddressResolver`) and join
//! the direct callees, marked as found through a pointer. A target is timed like any
//! other callee from then on, so a function reached both directly and through a
//! pointer is one candidate.
//!
//! Decisions: the pass lasts until F0 made enough calls to hold about
//! [`DISCOVERY_PEAK_CALLS`] calls of the peak by its share of calls (at least
//! [`DISCOVERY_MIN_CALLS`], at most the calls profiled before the peak is chosen), or
//! a quarter of the phase timeout:
//! its targets need not come from in-peak calls only, since the measurement that
//! follows ranks the calls anyway and a target used only outside the peak gets no
//! maxcount. At most `MAX_SITES` (16) sites of a function are probed, and the targets
//! join the direct callees, most called first, up to `MAX_CALLEES` (32) in all; sites
//! and targets past these bounds, and targets that are not the start of a named
//! function (code without a symbol, JIT code), count as call sites not probed.
//! Indirect jumps are not followed: a `jmp *` is mostly a switch's jump table.

use crate::control::{Control, Probed};
use crate::error::LiveError;
use causeway_probe::ProbeError;
use causeway_probe::callees::{Site, SymbolFinder, callees_of};
use causeway_probe::indirect::IndirectSite;
use causeway_probe::resolve::AddressResolver;
use causeway_probe::rootpath::{MAX_CALLEES, MAX_SITES, PathProbe, SiteTarget, Step};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// In-peak calls of F0 the discovery pass should hold, by the peak's share of calls.
pub const DISCOVERY_PEAK_CALLS: f64 = 20.0;
/// Calls of F0 the discovery pass waits for at least.
pub const DISCOVERY_MIN_CALLS: u64 = 200;

const TICK: Duration = Duration::from_millis(100);

/// The callees of one level.
#[derive(Clone, Debug, Default)]
pub struct LevelCallees {
    /// The functions to time.
    pub sites: Vec<Site>,
    /// For each, whether it was found only as the target of an indirect call.
    pub indirect: Vec<bool>,
    /// Call sites that cannot be probed.
    pub unresolved: u32,
    /// Indirect call sites whose targets were read.
    pub indirect_sites: u32,
}

/// The direct callees of `f` that can be probed, and its indirect call sites.
pub fn direct_callees(
    f: &Site,
    finder: &SymbolFinder,
) -> Result<(LevelCallees, Vec<IndirectSite>), LiveError> {
    let c = callees_of(f)?;
    let mut out = LevelCallees {
        unresolved: c.unresolved,
        ..LevelCallees::default()
    };
    for (name, _plt) in &c.named {
        match finder.find(name, &f.binary) {
            Some(s) if out.sites.len() < MAX_CALLEES => {
                out.sites.push(s);
                out.indirect.push(false);
            }
            _ => out.unresolved += 1,
        }
    }
    Ok((out, c.indirect))
}

/// Calls of F0 to wait for in the discovery pass, for a peak holding `share` of the
/// calls.
pub fn discovery_calls(share: f64, start_ops: u64) -> u64 {
    let want = if share > 0.0 {
        (DISCOVERY_PEAK_CALLS / share).ceil() as u64
    } else {
        u64::MAX
    };
    want.clamp(DISCOVERY_MIN_CALLS, start_ops.max(DISCOVERY_MIN_CALLS))
}

/// Add the targets seen (resolved to functions by `resolve`) to `lc`: most called
/// first, skipping `own` (recursion through a pointer) and the direct callees.
pub fn add_targets(
    lc: &mut LevelCallees,
    own: &Site,
    seen: &[SiteTarget],
    mut resolve: impl FnMut(u64) -> Option<Site>,
) {
    let mut calls: BTreeMap<Site, u64> = BTreeMap::new();
    let mut by_addr: BTreeMap<u64, Option<Site>> = BTreeMap::new();
    for t in seen {
        let site = by_addr.entry(t.addr).or_insert_with(|| resolve(t.addr));
        match site {
            Some(s) => *calls.entry(s.clone()).or_default() += t.calls,
            None => lc.unresolved += 1,
        }
    }
    let mut found: Vec<(Site, u64)> = calls.into_iter().collect();
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    for (site, _) in found {
        if site == *own || lc.sites.contains(&site) {
            continue;
        }
        if lc.sites.len() >= MAX_CALLEES {
            lc.unresolved += 1;
            continue;
        }
        lc.sites.push(site);
        lc.indirect.push(true);
    }
}

/// What the indirect pass reports.
#[derive(Debug)]
pub enum Notice<'a> {
    /// The pass begins.
    Reading {
        /// Sites probed.
        sites: usize,
        /// The function under study.
        function: &'a str,
        /// Calls of F0 to wait for.
        calls: u64,
        /// F0.
        f0: &'a str,
    },
    /// The kernel would not probe the sites: they count as not probed.
    Unprobed {
        /// The function under study.
        function: &'a str,
        /// Why.
        error: &'a ProbeError,
    },
    /// A status was asked for.
    Status {
        /// Sites probed.
        sites: usize,
        /// The function under study.
        function: &'a str,
        /// Calls of F0 made so far.
        made: u64,
        /// Calls of F0 to wait for.
        calls: u64,
        /// F0.
        f0: &'a str,
        /// Since the pass began.
        elapsed: Duration,
    },
    /// Indirect calls whose target could not be read or kept.
    Lost(u64),
    /// The pass ended: targets seen, and the functions they added.
    Seen {
        /// Distinct (site, target) pairs seen.
        targets: usize,
        /// Functions new to the level.
        added: Vec<&'a str>,
    },
}

/// One pass over the indirect call sites of a level.
pub struct Pass<'a> {
    /// Calls of F0 to wait for.
    pub calls: u64,
    /// The longest the pass may take.
    pub limit: Duration,
    /// Stop and status requests.
    pub ctl: &'a dyn Control,
    /// The process.
    pub probed: &'a mut Probed,
}

impl Pass<'_> {
    /// Read the targets of `sites` (the indirect call sites of the function under
    /// study of `base`) for a while, and add them to `lc`. `None` if interrupted.
    pub fn discover(
        self,
        base: &Step,
        sites: &[IndirectSite],
        lc: &mut LevelCallees,
        notify: &mut dyn FnMut(Notice<'_>),
    ) -> Result<Option<()>, LiveError> {
        let probed_sites = &sites[..sites.len().min(MAX_SITES)];
        lc.unresolved += (sites.len() - probed_sites.len()) as u32;
        lc.indirect_sites = probed_sites.len() as u32;
        let own = base.path.last().unwrap_or(&base.f0).clone();
        notify(Notice::Reading {
            sites: probed_sites.len(),
            function: &own.symbol,
            calls: self.calls,
            f0: &base.f0.symbol,
        });
        let step = Step {
            sites: probed_sites.to_vec(),
            callees: Vec::new(),
            peak_ns: (0, 0),
            ..base.clone()
        };
        // A site the kernel will not probe costs the level its indirect callees, not
        // the run: the direct callees are still measured.
        let probe = match PathProbe::attach(&step) {
            Ok(p) => p,
            Err(error) => {
                notify(Notice::Unprobed {
                    function: &own.symbol,
                    error: &error,
                });
                lc.unresolved += lc.indirect_sites;
                lc.indirect_sites = 0;
                return Ok(Some(()));
            }
        };
        let start = Instant::now();
        loop {
            std::thread::sleep(TICK);
            let made: u64 = probe.f0_slots()?.iter().sum();
            if self.ctl.take_status_request() {
                notify(Notice::Status {
                    sites: probed_sites.len(),
                    function: &own.symbol,
                    made,
                    calls: self.calls,
                    f0: &base.f0.symbol,
                    elapsed: start.elapsed(),
                });
            }
            if self.ctl.stop_requested() || !self.probed.alive() {
                return Ok(None);
            }
            if made >= self.calls || start.elapsed() >= self.limit {
                break;
            }
        }
        let (seen, lost) = probe.targets()?;
        drop(probe);
        if lost > 0 {
            notify(Notice::Lost(lost));
        }
        let mut resolver = AddressResolver::for_process(base.tgid)?;
        let before = lc.sites.len();
        add_targets(lc, &own, &seen, |a| resolver.function_at(a));
        notify(Notice::Seen {
            targets: seen.len(),
            added: lc.sites[before..]
                .iter()
                .map(|s| s.symbol.as_str())
                .collect(),
        });
        Ok(Some(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn site(name: &str) -> Site {
        Site {
            binary: PathBuf::from("/bin/prog"),
            symbol: name.to_string(),
        }
    }

    #[test]
    fn targets_join_the_direct_callees_most_called_first() {
        let mut lc = LevelCallees {
            sites: vec![site("log_op")],
            indirect: vec![false],
            unresolved: 0,
            indirect_sites: 2,
        };
        let seen = [
            SiteTarget {
                site: 0,
                addr: 0x10,
                calls: 5,
            },
            SiteTarget {
                site: 0,
                addr: 0x20,
                calls: 40,
            },
            // The same function from a second site: one candidate, calls summed.
            SiteTarget {
                site: 1,
                addr: 0x10,
                calls: 50,
            },
            // Already a direct callee.
            SiteTarget {
                site: 1,
                addr: 0x30,
                calls: 9,
            },
            // Recursion through a pointer.
            SiteTarget {
                site: 1,
                addr: 0x40,
                calls: 1,
            },
            // JIT code, or a function without a symbol.
            SiteTarget {
                site: 1,
                addr: 0x99,
                calls: 3,
            },
        ];
        let names = [
            (0x10, "slow_handler"),
            (0x20, "fast_handler"),
            (0x30, "log_op"),
            (0x40, "do_operation"),
        ];
        let own = site("do_operation");
        add_targets(&mut lc, &own, &seen, |a| {
            names.iter().find(|n| n.0 == a).map(|n| site(n.1))
        });
        let got: Vec<&str> = lc.sites.iter().map(|s| s.symbol.as_str()).collect();
        assert_eq!(got, ["log_op", "slow_handler", "fast_handler"]);
        assert_eq!(lc.indirect, [false, true, true]);
        assert_eq!(lc.unresolved, 1);
    }

    #[test]
    fn targets_past_the_bound_are_counted() {
        let mut lc = LevelCallees::default();
        let seen: Vec<SiteTarget> = (0..MAX_CALLEES as u64 + 3)
            .map(|i| SiteTarget {
                site: 0,
                addr: i + 1,
                calls: 100 - i,
            })
            .collect();
        add_targets(&mut lc, &site("f"), &seen, |a| Some(site(&format!("t{a}"))));
        assert_eq!(lc.sites.len(), MAX_CALLEES);
        // The most called were kept.
        assert_eq!(lc.sites[0].symbol, "t1");
        assert_eq!(lc.unresolved, 3);
    }

    #[test]
    fn the_pass_waits_longer_for_a_rare_peak() {
        // A peak of half the calls: the minimum.
        assert_eq!(discovery_calls(0.5, 2000), DISCOVERY_MIN_CALLS);
        // 1 %: 2000 calls for 20 in the peak.
        assert_eq!(discovery_calls(0.01, 5000), 2000);
        // Never more than --start-ops.
        assert_eq!(discovery_calls(0.001, 5000), 5000);
        assert_eq!(discovery_calls(0.0, 300), 300);
    }
}
