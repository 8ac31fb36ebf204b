//! An ELF file's symbols (the static table, then the dynamic one) and the lookups the
//! kernel side makes: a variable by name, the function holding an address, the
//! function starting at an address.

/// What a symbol names, as far as its callers care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// Code (`STT_FUNC`, `STT_GNU_IFUNC`).
    Function,
    /// A variable (`STT_OBJECT`, `STT_COMMON`).
    Data,
    /// Anything else (sections, files, thread-local data, untyped symbols).
    Other,
}

/// One symbol of an ELF file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Its name as the table spells it (not demangled; a dynamic name carries no
    /// version, a static one may: `memcpy@GLIBC_2.2.5`). A name that is not UTF-8 is
    /// kept lossily.
    pub name: String,
    /// Its address in the file (0 for most undefined symbols).
    pub address: u64,
    /// Its size in bytes (0 when the table does not say).
    pub size: u64,
    /// What it names.
    pub kind: SymbolKind,
    /// Visible outside its file (global or weak binding).
    pub global: bool,
    /// Defined elsewhere (an import).
    pub undefined: bool,
}

/// A file's symbols with the indexes its lookups need, built once.
#[derive(Clone, Debug, Default)]
pub struct Symbols {
    /// Static table first, then the dynamic one, each in file order.
    all: Vec<Symbol>,
    /// Functions with a size, sorted by (address, size, name): indexes into `all`.
    sized_functions: Vec<usize>,
    /// The preferred name of each defined function start, sorted by address:
    /// (address, index into `all`, length of the name's unversioned part).
    starts: Vec<(u64, usize, usize)>,
}

/// Of two names of one address, whether `a` is the one to use: a global name over a
/// local one, then the one with the fewest leading underscores (`write` over
/// `__libc_write`), then the shortest, then the first in byte order.
pub fn better_name(a: (bool, &str), b: (bool, &str)) -> bool {
    let under = |s: &str| s.len() - s.trim_start_matches('_').len();
    (!a.0, under(a.1), a.1.len(), a.1) < (!b.0, under(b.1), b.1.len(), b.1)
}

impl Symbols {
    /// Index the symbols `all` (static table first, then the dynamic one).
    pub fn new(all: Vec<Symbol>) -> Symbols {
        let mut sized_functions: Vec<usize> = (0..all.len())
            .filter(|&i| all[i].kind == SymbolKind::Function && all[i].size > 0)
            .collect();
        sized_functions.sort_by(|&a, &b| {
            let key = |i: usize| (all[i].address, all[i].size, all[i].name.as_str());
            key(a).cmp(&key(b))
        });
        let starts = preferred_starts(&all);
        Symbols {
            all,
            sized_functions,
            starts,
        }
    }

    /// Every symbol: the static table first, then the dynamic one.
    pub fn iter(&self) -> impl Iterator<Item = &Symbol> {
        self.all.iter()
    }

    /// The first symbol named `name` that has an address (defined, or an import with a
    /// canonical address), the static table searched before the dynamic one.
    pub fn by_name(&self, name: &str) -> Option<&Symbol> {
        self.all.iter().find(|s| s.name == name && s.address != 0)
    }

    /// The function whose code holds `addr`: of the functions with a size, the last
    /// starting at or before it in (address, size, name) order, if it reaches `addr`.
    pub fn function_containing(&self, addr: u64) -> Option<&Symbol> {
        let upto = self
            .sized_functions
            .partition_point(|&i| self.all[i].address <= addr);
        let f = &self.all[*self.sized_functions.get(upto.checked_sub(1)?)?];
        (addr < f.address + f.size).then_some(f)
    }

    /// The start addresses of the functions with a size, sorted, each once.
    pub fn function_starts(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .sized_functions
            .iter()
            .map(|&i| self.all[i].address)
            .collect();
        v.dedup();
        v
    }

    /// The name of the defined function starting exactly at `addr`, without its
    /// version (`memcpy@@GLIBC_2.14` is `memcpy`); of several, the one
    /// [`better_name`] prefers.
    pub fn function_starting_at(&self, addr: u64) -> Option<&str> {
        let i = self.starts.binary_search_by_key(&addr, |s| s.0).ok()?;
        let (_, at, len) = self.starts[i];
        Some(&self.all[at].name[..len])
    }
}

/// For each address where a defined function starts, the symbol with the preferred
/// name (see [`better_name`]) and its unversioned length, sorted by address.
fn preferred_starts(all: &[Symbol]) -> Vec<(u64, usize, usize)> {
    let mut best: std::collections::HashMap<u64, (usize, usize)> = Default::default();
    for (i, s) in all.iter().enumerate() {
        if s.kind != SymbolKind::Function || s.undefined || s.address == 0 {
            continue;
        }
        let name = s.name.split('@').next().unwrap_or(&s.name);
        if name.is_empty() {
            continue;
        }
        let keep = best.get(&s.address).is_some_and(|&(j, len)| {
            !better_name((s.global, name), (all[j].global, &all[j].name[..len]))
        });
        if !keep {
            best.insert(s.address, (i, name.len()));
        }
    }
    let mut v: Vec<(u64, usize, usize)> = best.into_iter().map(|(a, (i, l))| (a, i, l)).collect();
    v.sort_unstable();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, address: u64, size: u64, kind: SymbolKind, global: bool) -> Symbol {
        Symbol {
            name: name.to_string(),
            address,
            size,
            kind,
            global,
            undefined: false,
        }
    }

    #[test]
    fn global_plain_names_win() {
        assert!(better_name((true, "write"), (false, "write")));
        assert!(better_name((true, "write"), (true, "__libc_write")));
        assert!(!better_name((false, "a"), (true, "__b")));
    }

    #[test]
    fn lookups_by_name_and_by_address() {
        use SymbolKind::{Data, Function};
        let s = Symbols::new(vec![
            sym("flag", 0, 4, Data, true),
            sym("__libc_write", 0x1000, 0x20, Function, false),
            sym("f", 0x2000, 0x10, Function, true),
            sym("f_long", 0x2000, 0x40, Function, true),
            sym("g", 0x3000, 0, Function, true),
            sym("flag", 0x5000, 4, Data, true),
            sym("write@@GLIBC_2.2.5", 0x1000, 0x20, Function, true),
        ]);
        // The first with an address; the static table came first.
        assert_eq!(s.by_name("flag").map(|v| v.address), Some(0x5000));
        assert_eq!(s.by_name("none"), None);
        // Ties on the start: the larger, then the later name.
        assert_eq!(s.function_containing(0x2008).unwrap().name, "f_long");
        assert_eq!(s.function_containing(0x2030).unwrap().name, "f_long");
        assert_eq!(s.function_containing(0x2040), None);
        assert_eq!(s.function_containing(0x0fff), None);
        assert_eq!(s.function_starts(), vec![0x1000, 0x2000]);
        // Starts: unsized functions count; versions are dropped; global plain wins.
        assert_eq!(s.function_starting_at(0x1000), Some("write"));
        assert_eq!(s.function_starting_at(0x2000), Some("f"));
        assert_eq!(s.function_starting_at(0x3000), Some("g"));
        assert_eq!(s.function_starting_at(0x1001), None);
    }
}
