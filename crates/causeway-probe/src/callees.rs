//! A function's call sites, found by disassembling it (DARC §4 disassembles f0 for its
//! callees), and where each callee's code is: in the same binary, or behind a PLT entry
//! in one of the process's libraries.
//!
//! Disassembly is binutils' `objdump --disassemble=SYMBOL`: direct `call`s name their
//! target; a `jmp` to the start of another function is a tail call (the callee returns
//! for the caller) and counts too. Indirect calls (`call *%rax`) and targets known only
//! as `symbol+offset` (a function without a symbol of its own) cannot be probed by name
//! and are counted, not followed.

use crate::error::ProbeError;
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
    /// Indirect calls and calls to unnamed code.
    pub unresolved: u32,
}

/// Parse `objdump -d` output of one function into its callees.
pub fn parse_objdump(text: &str, own: &str) -> Callees {
    let mut out = Callees::default();
    for line in text.lines() {
        let Some((_, insn)) = line.split_once(":\t") else {
            continue;
        };
        let insn = insn.trim();
        let (op, rest) = insn.split_once(char::is_whitespace).unwrap_or((insn, ""));
        let is_call = op.starts_with("call");
        let is_jmp = op == "jmp";
        if !is_call && !is_jmp {
            continue;
        }
        let rest = rest.trim();
        if rest.starts_with('*') {
            if is_call {
                out.unresolved += 1;
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
        let maps = std::fs::read_to_string(format!("/proc/{tgid}/maps"))
            .map_err(|source| ProbeError::Executable { tgid, source })?;
        let exe = crate::launch::executable_of(tgid)?;
        let mut paths: Vec<PathBuf> = vec![exe];
        for line in maps.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() >= 6 && f[1].contains('x') && f[5].starts_with('/') {
                let p = PathBuf::from(f[5]);
                if !paths.contains(&p) {
                    paths.push(p);
                }
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
        assert_eq!(c.unresolved, 2);
    }

    #[test]
    fn recursion_is_not_its_own_callee() {
        let text = "    10:\tcall   0 <fib>\n    20:\tcall   40 <leaf>\n";
        let c = parse_objdump(text, "fib");
        assert_eq!(c.named, vec![("leaf".to_string(), false)]);
    }
}
