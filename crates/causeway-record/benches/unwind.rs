//! DWARF unwinding throughput of `DwarfUnwinder` on real stacks of this process.
//!
//! The setup captures this process's own registers (`rip`, `rsp`, `rbp`, read with
//! inline assembly) and a window of its stack from `rsp` up (`UNWIND_BENCH_WINDOW`
//! bytes, default 8192 like `causeway record --stack-window`, cut at the end of the
//! `[stack]` mapping as the BPF program cuts it at the end of the stack's VMA) from
//! inside nested `#[inline(never)]` functions, loads `/proc/self/maps` into a
//! `DwarfUnwinder` and checks that the unwind is complete with at least 5 frames, so
//! the bench cannot silently time an unwind that stops at once. Two stacks:
//!
//! - `nested`: main → criterion → this bench → 4 nested Rust functions → capture;
//! - `qsort`: the same with glibc's `qsort` in between (its merge sort recursion, in a
//!   C library built without frame pointers: only its `.eh_frame` gets through it),
//!   the capture made in the comparison callback.
//!
//! Timed: `unwind(tgid, copy, StackMode::All, 32)`, one stack per iteration, with the
//! unwinder's rule cache warm (as in a recording, where the same call sites recur).
//! Criterion's throughput is stacks/s; its time is ns/stack.
//!
//! Run: `cargo bench -p causeway-record --bench unwind`.

use causeway_record::StackMode;
use causeway_record::procfs;
use causeway_record::records::StackCopy;
use causeway_record::unwind::{CodeMapping, DwarfUnwinder, UnwindEnd};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::arch::asm;
use std::cell::RefCell;
use std::hint::black_box;
use std::time::Duration;

/// End of the `[stack]` mapping that holds `addr` (the main thread's stack).
fn stack_end(addr: u64) -> u64 {
    causeway_procfs::maps::read_self()
        .expect("read /proc/self/maps")
        .into_iter()
        .find(|m| m.path == "[stack]" && m.start <= addr && addr < m.end)
        .map(|m| m.end)
        .unwrap_or_else(|| {
            panic!("no [stack] mapping holds {addr:#x}: capture from the main thread")
        })
}

/// Registers and stack window of the caller of this function's inline assembly.
/// `buf` is allocated beforehand so that nothing but the copy runs between reading
/// the registers and copying the stack (calls only write below `rsp`).
#[inline(never)]
fn capture(window: usize, end: u64, mut buf: Vec<u8>) -> StackCopy {
    let (ip, sp, bp): (u64, u64, u64);
    // SAFETY: reads three registers, touches no memory.
    unsafe {
        asm!(
            "lea {ip}, [rip]",
            "mov {sp}, rsp",
            "mov {bp}, rbp",
            ip = out(reg) ip,
            sp = out(reg) sp,
            bp = out(reg) bp,
            options(nomem, nostack, preserves_flags),
        );
    }
    let len = window.min((end - sp) as usize);
    buf.clear();
    buf.reserve(len);
    // SAFETY: [sp, sp + len) lies inside this thread's stack mapping (len is cut at its
    // end), which is mapped and readable; the bytes are copied, not referenced.
    unsafe {
        std::ptr::copy_nonoverlapping(sp as *const u8, buf.as_mut_ptr(), len);
        buf.set_len(len);
    }
    let flags = if sp + (len as u64) < end {
        causeway_record::records::copy_flags::CUT
    } else {
        0
    };
    StackCopy {
        ip,
        sp,
        bp,
        flags,
        data: buf,
    }
}

// Nested frames. Each one changes the result after its call returns, so that no call
// becomes a tail call (which would leave no frame).
#[inline(never)]
fn level4(window: usize, end: u64) -> StackCopy {
    let buf = Vec::with_capacity(window);
    let mut c = capture(black_box(window), end, buf);
    c.flags |= black_box(0);
    c
}

#[inline(never)]
fn level3(window: usize, end: u64) -> StackCopy {
    let mut c = level4(black_box(window), end);
    c.flags |= black_box(0);
    c
}

#[inline(never)]
fn level2(window: usize, end: u64) -> StackCopy {
    let mut c = level3(black_box(window), end);
    c.flags |= black_box(0);
    c
}

#[inline(never)]
fn level1(window: usize, end: u64) -> StackCopy {
    let mut c = level2(black_box(window), end);
    c.flags |= black_box(0);
    c
}

thread_local! {
    /// (window, stack end, the copy taken by the first comparison).
    static QSORT: RefCell<(usize, u64, Option<StackCopy>)> = const { RefCell::new((0, 0, None)) };
}

extern "C" fn compare(a: *const libc::c_void, b: *const libc::c_void) -> libc::c_int {
    QSORT.with(|q| {
        let mut q = q.borrow_mut();
        if q.2.is_none() {
            let (window, end) = (q.0, q.1);
            q.2 = Some(level1(window, end));
        }
    });
    // SAFETY: qsort passes pointers to two elements of the u32 array below.
    let (a, b) = unsafe { (*(a as *const u32), *(b as *const u32)) };
    a.cmp(&b) as libc::c_int
}

#[inline(never)]
fn through_qsort(window: usize, end: u64) -> StackCopy {
    QSORT.with(|q| *q.borrow_mut() = (window, end, None));
    let mut v: Vec<u32> = (0..64u32).rev().collect();
    // SAFETY: v holds v.len() elements of size 4; compare reads two of them.
    unsafe {
        libc::qsort(
            v.as_mut_ptr().cast(),
            v.len(),
            std::mem::size_of::<u32>(),
            Some(compare),
        );
    }
    black_box(&v);
    QSORT
        .with(|q| q.borrow_mut().2.take())
        .expect("qsort called compare")
}

/// This process's executable mappings as the recorder hands them to the unwinder
/// (`Converter::refresh_mappings`).
fn mappings() -> Vec<CodeMapping> {
    let exe = std::fs::read_link("/proc/self/exe")
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    procfs::exec_mappings(std::process::id())
        .into_iter()
        .map(|m| CodeMapping {
            program: exe.as_deref() == Some(m.path.as_str()),
            start: m.start,
            end: m.end,
            offset: m.offset,
            path: m.path,
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let window: usize = std::env::var("UNWIND_BENCH_WINDOW")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8192);
    let here = black_box(0u8);
    let end = stack_end(&here as *const u8 as u64);
    let tgid = std::process::id();
    let stacks = [
        ("nested", level1(window, end)),
        ("qsort", through_qsort(window, end)),
    ];

    // As the recorder sees this process: /proc/self/maps as read (this binary is
    // linked by LLD, whose executable segment shares a page with the one before it).
    let mut unwinder = DwarfUnwinder::default();
    unwinder.set_mappings(tgid, mappings());
    let mut g = c.benchmark_group("unwind");
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(1));
    for (name, copy) in &stacks {
        let u = unwinder.unwind(tgid, copy, StackMode::All, 32);
        eprintln!(
            "unwind/{name}: {} bytes copied (window {window}, {} bytes to the stack's end), \
             {} frames, {:?}, unmapped {}",
            copy.data.len(),
            end - copy.sp,
            u.frames.len(),
            u.end,
            u.unmapped
        );
        if std::env::var_os("UNWIND_BENCH_DEBUG").is_some() {
            eprintln!(
                "ip {:#x} sp {:#x} bp {:#x} frames {:x?}",
                copy.ip, copy.sp, copy.bp, u.frames
            );
            eprintln!(
                "{}",
                std::fs::read_to_string("/proc/self/maps").unwrap_or_default()
            );
        }
        assert_eq!(u.end, UnwindEnd::Complete, "{name}: unwind not complete");
        assert!(
            u.frames.len() >= 5,
            "{name}: only {} frames",
            u.frames.len()
        );
        assert!(!u.unmapped, "{name}: a frame outside every mapping");
        g.bench_function(format!("{name}_{}_frames", u.frames.len()), |b| {
            b.iter(|| unwinder.unwind(tgid, black_box(copy), StackMode::All, 32))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
