//! One symbolized address, and the names of a stripped program's entry frames.

/// A symbolized address.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sym {
    pub(crate) module: String,
    pub(crate) name: String,
    pub(crate) offset: u64,
    /// Source location in `name` (of the call to the outermost inlined function when
    /// there are any), from debug information; empty and 0 if none.
    pub(crate) file: String,
    pub(crate) line: u32,
    /// Inlined functions at the address, innermost first: (name, file, line).
    pub(crate) inlined: Vec<(String, String, u32)>,
}

/// Name `main` and `_start` in a stripped program from where they sit: the C library's
/// start code (`__libc_start_main`, which calls `__libc_start_call_main` since glibc
/// 2.34) is called by the program's entry point and calls `main`, so the first frame
/// inward of it outside the C library is `main`, and the frame outward of it in the
/// program is `_start`. Only unnamed frames are named.
pub(crate) fn name_entry_frames(syms: &mut [Sym]) {
    let Some(k) = syms
        .iter()
        .position(|s| s.name.starts_with("__libc_start_main"))
    else {
        return;
    };
    let libc = syms[k].module.clone();
    if let Some(m) = syms[..k].iter().rposition(|s| s.module != libc)
        && syms[m].name.is_empty()
        && !syms[m].module.is_empty()
    {
        syms[m].name = "main".into();
    }
    if let Some(s) = syms.get_mut(k + 1)
        && s.name.is_empty()
        && !s.module.is_empty()
        && s.module != libc
    {
        s.name = "_start".into();
    }
}

/// `file:line` of a blazesym code location.
fn location(c: Option<&blazesym::symbolize::CodeInfo<'_>>) -> (String, u32) {
    match c {
        Some(c) => (c.to_path().display().to_string(), c.line.unwrap_or(0)),
        None => (String::new(), 0),
    }
}

/// A user-space symbol with its source lines and inlined calls.
pub(crate) fn user_sym(module: &str, s: &blazesym::symbolize::Sym<'_>) -> Sym {
    let (file, line) = location(s.code_info.as_deref());
    Sym {
        module: module.to_string(),
        name: s.name.to_string(),
        offset: (s.offset as u64) + 1,
        file,
        line,
        // blazesym lists them outermost first; frames go innermost first.
        inlined: s
            .inlined
            .iter()
            .rev()
            .map(|i| {
                let (file, line) = location(i.code_info.as_ref());
                (i.name.to_string(), file, line)
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(module: &str, name: &str) -> Sym {
        Sym {
            module: module.into(),
            name: name.into(),
            ..Sym::default()
        }
    }

    #[test]
    fn entry_frames_of_a_stripped_program_get_names() {
        let mut s = vec![
            sym("/usr/lib/libc.so.6", "read"),
            sym("/usr/bin/gzip", ""),
            sym("/usr/bin/gzip", ""),
            sym("/usr/lib/libc.so.6", ""), // __libc_start_call_main without debug info
            sym("/usr/lib/libc.so.6", "__libc_start_main"),
            sym("/usr/bin/gzip", ""),
        ];
        name_entry_frames(&mut s);
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["read", "", "main", "", "__libc_start_main", "_start"]
        );
        // Named frames keep their names; no start code, no guess.
        let mut named = vec![
            sym("/p", "real_main"),
            sym("/usr/lib/libc.so.6", "__libc_start_call_main"),
            sym("/usr/lib/libc.so.6", "__libc_start_main_impl"),
            sym("/p", "_start"),
        ];
        name_entry_frames(&mut named);
        assert_eq!(named[0].name, "real_main");
        let mut thread = vec![sym("/p", ""), sym("/usr/lib/libc.so.6", "start_thread")];
        name_entry_frames(&mut thread);
        assert_eq!(thread[0].name, "");
    }
}
