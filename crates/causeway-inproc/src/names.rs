//! Names for the ids in a buffer, resolved in the traced process at the dump.
//!
//! An id is a `CW_SPAN` site (a static `struct cw_site` whose first word is
//! `CW_SITE_MAGIC` and whose second points at the span's name), a code address (from
//! `-finstrument-functions`), or a number a program chose. Memory is read with
//! `process_vm_readv` on the process itself, which fails cleanly on an unmapped
//! address instead of faulting, so a number that is not an address is harmless.
//! Addresses are symbolized with blazesym from the process's own mappings, the ones the
//! addresses came from; the trace also keeps those mappings with build IDs.

use blazesym::symbolize::source::{Process, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer};
use std::collections::HashMap;

thread_local! {
    /// One symbolizer per dumping thread (it is not `Send`) for the life of the
    /// process: it caches the files it has parsed, so later dumps do not parse them again.
    static SYMBOLIZER: Symbolizer = Symbolizer::new();
}

/// `CW_SITE_MAGIC` of `causeway.h`.
pub const SITE_MAGIC: u64 = 0x4e41_5053_5743_5753;

/// Read `buf.len()` bytes at `addr` of this process, or fail without faulting.
fn read_self(addr: u64, buf: &mut [u8]) -> bool {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: process_vm_readv writes at most buf.len() bytes into buf and reports an
    // unreadable remote range as an error instead of faulting.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    n == buf.len() as isize
}

/// The span name at `id` if it is a `CW_SPAN` site.
pub fn site_name(id: u64) -> Option<String> {
    let mut head = [0u8; 16];
    if !read_self(id, &mut head) {
        return None;
    }
    let (magic, ptr) = head.split_at(8);
    if u64::from_ne_bytes(magic.try_into().ok()?) != SITE_MAGIC {
        return None;
    }
    let ptr = u64::from_ne_bytes(ptr.try_into().ok()?);
    let mut name = Vec::new();
    let mut chunk = [0u8; 64];
    // Names are read in small pieces so one near the end of a mapping still reads.
    for k in 0..8u64 {
        let ok = read_self(ptr + k * 64, &mut chunk)
            || (0..64).all(|j| read_self(ptr + k * 64 + j, &mut chunk[j as usize..j as usize + 1]));
        if !ok {
            break;
        }
        if let Some(end) = chunk.iter().position(|&b| b == 0) {
            name.extend_from_slice(&chunk[..end]);
            return Some(String::from_utf8_lossy(&name).into_owned());
        }
        name.extend_from_slice(&chunk);
    }
    (!name.is_empty()).then(|| String::from_utf8_lossy(&name).into_owned())
}

/// Names for every id in `ids`: span names, then symbols, then the number in hex.
pub fn resolve(ids: &[u64]) -> HashMap<u64, String> {
    let mut out = HashMap::with_capacity(ids.len());
    let mut addrs = Vec::new();
    for &id in ids {
        match site_name(id) {
            Some(n) => {
                out.insert(id, n);
            }
            None => addrs.push(id),
        }
    }
    if addrs.is_empty() {
        return out;
    }
    let src = Source::Process(Process::new(std::process::id().into()));
    SYMBOLIZER.with(|sym| {
        let syms = sym
            .symbolize(&src, Input::AbsAddr(&addrs))
            .unwrap_or_default();
        for (i, &a) in addrs.iter().enumerate() {
            let name = match syms.get(i) {
                Some(Symbolized::Sym(s)) if s.offset == 0 => s.name.to_string(),
                Some(Symbolized::Sym(s)) => format!("{}+{:#x}", s.name, s.offset),
                _ => format!("{a:#x}"),
            };
            out.insert(a, name);
        }
    });
    out
}
