//! A function's call sites, found by disassembling it (DARC §4 disassembles f0 for its
//! callees), and where each callee's code is: in the same binary, or behind a PLT entry
//! in one of the process's libraries.
//!
//! Disassembly is binutils' `objdump --disassemble=SYMBOL`: direct `call`s name their
//! target; a `jmp` to the start of another function is a tail call (the callee returns
//! for the caller) and counts too. Indirect calls (`call *%rax`, `call *8(%rbx)`) are
//! listed as sites with their operand ([`crate::indirect`]), for their targets to be read
//! at run time; targets known only as `symbol+offset` (a function without a symbol of
//! its own) cannot be probed by name and are counted, not followed.

use crate::error::ProbeError;
use crate::indirect::{IndirectSite, parse_operand};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A function in a file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Site {
    /// The executable or library.
    pub binary: PathBuf,
    /// The symbol.
    pub symbol: String,
}

/// The callees of one function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Callees {
    /// Callees found by name, in the order of their first call site; PLT names without
    /// their `@plt`.
    pub named: Vec<(String, bool)>,
    /// Indirect call sites whose target can be read at run time.
    pub indirect: Vec<IndirectSite>,
    /// Calls to unnamed code and indirect calls whose operand cannot be read (a
    /// thread-local or otherwise unusual one).
    pub unresolved: u32,
}

/// The instructions of `objdump -d` output: (address, instruction text), and the
/// address of the function's first byte (its `<name>:` header line).
fn instructions(text: &str) -> (Option<u64>, Vec<(u64, &str)>) {
    let mut start = None;
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some((addr, rest)) = line.split_once(' ')
            && rest.starts_with('<')
            && rest.ends_with(">:")
        {
            start = start.or_else(|| u64::from_str_radix(addr, 16).ok());
            continue;
        }
        let Some((addr, insn)) = line.split_once(":\t") else {
            continue;
        };
        if let Ok(a) = u64::from_str_radix(addr.trim(), 16) {
            out.push((a, insn.trim()));
        }
    }
    (start, out)
}

/// The mnemonic and the operands, past the prefixes objdump may print first
/// (`notrack call *%rax` under CET, `bnd jmp` under MPX).
fn mnemonic(insn: &str) -> (&str, &str) {
    let mut rest = insn;
    loop {
        let (op, r) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        if matches!(op, "notrack" | "bnd") {
            rest = r.trim_start();
            continue;
        }
        return (op, r.trim());
    }
}

/// Parse `objdump -d` output of one function into its callees.
pub fn parse_objdump(text: &str, own: &str) -> Callees {
    let mut out = Callees::default();
    let (start, insns) = instructions(text);
    for (k, &(addr, insn)) in insns.iter().enumerate() {
        let (op, rest) = mnemonic(insn);
        let is_call = op.starts_with("call");
        let is_jmp = op == "jmp";
        if !is_call && !is_jmp {
            continue;
        }
        if let Some(operand) = rest.strip_prefix('*') {
            // An indirect jmp is mostly a switch's jump table, not a tail call: only
            // calls are followed.
            if is_call {
                let operand = operand.split('#').next().unwrap_or("");
                let len = insns.get(k + 1).map(|&(next, _)| next.wrapping_sub(addr));
                match (start, parse_operand(operand, len)) {
                    (Some(s), Some(operand)) if addr >= s => out.indirect.push(IndirectSite {
                        offset: addr - s,
                        operand,
                    }),
                    _ => out.unresolved += 1,
                }
            }
            continue;
        }
        let Some(name) = rest.split_once('<').and_then(|(_, r)| r.strip_suffix('>')) else {
            continue;
        };
        if name.contains('+') {
            // A jump inside a function (or to unnamed code): a branch for a jmp, an
            // unnamed callee for a call.
            if is_call {
                out.unresolved += 1;
            }
            continue;
        }
        let (name, plt) = match name.strip_suffix("@plt") {
            Some(n) => (n, true),
            None => (name, false),
        };
        if name == own || out.named.iter().any(|(n, _)| n == name) {
            continue;
        }
        out.named.push((name.to_string(), plt));
    }
    out
}

/// Disassemble `site` and list its callees.
pub fn callees_of(site: &Site) -> Result<Callees, ProbeError> {
    let o = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(format!("--disassemble={}", site.symbol))
        .arg(&site.binary)
        .output()
        .map_err(|source| ProbeError::Launch {
            command: "objdump (binutils)".into(),
            source,
        })?;
    Ok(parse_objdump(
        &String::from_utf8_lossy(&o.stdout),
        &site.symbol,
    ))
}

/// Finds which file defines a symbol, among a process's executable and libraries.
#[derive(Debug)]
pub struct SymbolFinder {
    /// Each mapped file with its defined dynamic and static function symbols.
    files: Vec<(PathBuf, Vec<String>)>,
}

fn defined_functions(path: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for dynamic in [false, true] {
        let mut c = Command::new("nm");
        c.arg("--defined-only");
        if dynamic {
            c.arg("-D");
        }
        let Ok(o) = c.arg(path).output() else {
            continue;
        };
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if let [_, t, name] = f.as_slice()
                && matches!(*t, "T" | "t" | "W" | "i")
            {
                // Versioned names (`pthread_mutex_lock@@GLIBC_2.2.5`) are found by the
                // plain name.
                let plain = name.split('@').next().unwrap_or(name);
                names.push(plain.to_string());
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

impl SymbolFinder {
    /// The files mapped executable by process `tgid` (its binary first).
    pub fn for_process(tgid: u32) -> Result<SymbolFinder, ProbeError> {
        let maps = causeway_procfs::maps::read(tgid)
            .map_err(|source| ProbeError::Executable { tgid, source })?;
        let exe = crate::launch::executable_of(tgid)?;
        let mut paths: Vec<PathBuf> = vec![exe];
        for m in maps.iter().filter(|m| m.is_exec_file()) {
            let p = PathBuf::from(&m.path);
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
        let files = paths
            .into_iter()
            .map(|p| {
                let names = defined_functions(&p);
                (p, names)
            })
            .collect();
        Ok(SymbolFinder { files })
    }

    /// The file defining `symbol`: `prefer` first (the caller's own file), then the
    /// others in map order.
    pub fn find(&self, symbol: &str, prefer: &Path) -> Option<Site> {
        let hit = |p: &PathBuf, names: &Vec<String>| {
            names.binary_search_by(|n| n.as_str().cmp(symbol)).is_ok() && p.exists()
        };
        let order: BTreeMap<bool, Vec<&(PathBuf, Vec<String>)>> =
            self.files.iter().fold(BTreeMap::new(), |mut m, f| {
                m.entry(f.0 != prefer).or_default().push(f);
                m
            });
        order
            .values()
            .flatten()
            .find(|(p, names)| hit(p, names))
            .map(|(p, _)| Site {
                binary: p.clone(),
                symbol: symbol.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indirect::{Operand, Reg};

    #[test]
    fn calls_tail_calls_and_what_cannot_be_followed() {
        let text = "\
0000000000001dd0 <slow_path>:
    1df9:\tcall   1190 <pthread_mutex_lock@plt>
    1e10:\tjne    1e40 <slow_path+0x70>
    1e20:\tjmp    1e30 <slow_path+0x60>
    1e4d:\tcall   1160 <clock_nanosleep@plt>
    1e55:\tcall   *%rax
    1e60:\tcall   2000 <helper+0x10>
    1e62:\tcall   1160 <clock_nanosleep@plt>
    1e6a:\tjmp    10f0 <pthread_mutex_unlock@plt>
";
        let c = parse_objdump(text, "slow_path");
        assert_eq!(
            c.named,
            vec![
                ("pthread_mutex_lock".to_string(), true),
                ("clock_nanosleep".to_string(), true),
                ("pthread_mutex_unlock".to_string(), true),
            ]
        );
        // The unnamed callee; the indirect call is a site, 0x85 bytes in.
        assert_eq!(c.unresolved, 1);
        assert_eq!(
            c.indirect,
            vec![IndirectSite {
                offset: 0x85,
                operand: Operand::Reg(Reg(0))
            }]
        );
        // Without the `<slow_path>:` header where the function starts is unknown: the
        // indirect call cannot be placed, and is counted.
        let body = text.split_once('\n').unwrap().1;
        let c = parse_objdump(body, "slow_path");
        assert_eq!((c.unresolved, c.indirect.len()), (2, 0));
    }

    #[test]
    fn indirect_calls_are_sites_with_their_operands() {
        let text = "\
0000000000001200 <do_operation>:
    1200:\tpush   %rbx
    1204:\tcall   1180 <pick@plt>
    1209:\tcall   *0x8(%rax)
    120c:\tnotrack call *%rdx
    120f:\tcall   *0x2e0b(%rip)        # 4020 <handler_ptr>
    1215:\tcall   *%fs:0x28
    121d:\tjmp    *%rax
    121f:\tret
";
        let c = parse_objdump(text, "do_operation");
        assert_eq!(c.named, vec![("pick".to_string(), true)]);
        assert_eq!(
            c.indirect,
            vec![
                IndirectSite {
                    offset: 9,
                    operand: Operand::Mem {
                        base: Some(Reg(0)),
                        index: None,
                        disp: 8
                    }
                },
                IndirectSite {
                    offset: 0xc,
                    operand: Operand::Reg(Reg(2))
                },
                // 0x2e0b + 6 bytes of instruction: 0x4020 - 0x120f.
                IndirectSite {
                    offset: 0xf,
                    operand: Operand::IpRel {
                        rel: 0x4020 - 0x120f
                    }
                },
            ]
        );
        // The thread-local call; the indirect jmp (a jump table) is not a call.
        assert_eq!(c.unresolved, 1);
    }

    #[test]
    fn recursion_is_not_its_own_callee() {
        let text = "    10:\tcall   0 <fib>\n    20:\tcall   40 <leaf>\n";
        let c = parse_objdump(text, "fib");
        assert_eq!(c.named, vec![("leaf".to_string(), false)]);
    }
}
