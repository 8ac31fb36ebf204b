//! The walk on a JVM laid out by hand, and the reader on a live JVM.

use crate::codecache::{self, BlobKind};
use crate::hotspot::{HotSpot, Process};
use crate::jvm::Jvm;
use crate::layout::Layout;
use crate::mem::fake::FakeMem;
use crate::names;
use causeway_unwind::{CodeMapping, DwarfUnwinder, FrameNames, StackCopy, StackMode, UnwindEnd};
use causeway_unwind::{FrameRegs, RuntimeFrames, RuntimeStep};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// Offsets of a made-up JVM build (shared by the modules' tests).
pub(crate) fn layout() -> Layout {
    Layout {
        heaps: 0x1000,
        array_len: 0,
        array_data: 8,
        heap_memory: 0x10,
        heap_segmap: 0x40,
        heap_log2_segment: 0x70,
        space_low: 0,
        space_high: 8,
        block_used: 8,
        block_size: 16,
        blob_name: 0,
        blob_frame_size: 8,
        blob_frame_complete: 12,
        blob_code_begin: 16,
        blob_code_end: 24,
        compiled_method: 32,
        method_const: 8,
        const_constants: 8,
        const_name_index: 34,
        const_signature_index: 36,
        pool_holder: 24,
        pool_size: 72,
        klass_name: 16,
        symbol_length: 0,
        symbol_body: 6,
    }
}

fn symbol(m: &mut FakeMem, at: u64, s: &str) {
    m.put_u16(at, s.len() as u16);
    m.put(at + 6, s.as_bytes());
}

/// A method at `at` of class `class`, its strings at `at + 0x100...`.
fn method(m: &mut FakeMem, at: u64, class: &str, name: &str, sig: &str) {
    let (cm, pool, holder) = (at + 0x100, at + 0x200, at + 0x300);
    m.put_u64(at + 8, cm);
    m.put_u64(cm + 8, pool);
    m.put_u16(cm + 34, 1);
    m.put_u16(cm + 36, 2);
    m.put_u64(pool + 24, holder);
    m.put_u64(pool + 72 + 8, at + 0x400);
    m.put_u64(pool + 72 + 16, at + 0x500);
    m.put_u64(holder + 16, at + 0x600);
    symbol(m, at + 0x400, name);
    symbol(m, at + 0x500, sig);
    symbol(m, at + 0x600, class);
}

/// A blob at `block` (its header 16 bytes before the blob) with code `code`.
fn blob(
    m: &mut FakeMem,
    block: u64,
    name_at: u64,
    name: &str,
    code: (u64, u64),
    frame: u32,
    method: u64,
) {
    m.put(block, &[0u8; 8]);
    m.put(block + 8, &[1]);
    let b = block + 16;
    m.put_u64(b, name_at);
    m.put_str(name_at, name);
    m.put_u32(b + 8, frame);
    m.put_u32(b + 12, 0x10);
    m.put_u64(b + 16, code.0);
    m.put_u64(b + 24, code.1);
    m.put_u64(b + 32, method);
}

/// One code heap at 0x10000 (64-byte segments) holding a compiled method (frame of 4
/// words), the interpreter and the call stub; methods at 0x50000 and 0x60000.
fn jvm() -> Jvm {
    let mut m = FakeMem::default();
    m.put_u64(0x1000, 0x2000);
    m.put_u32(0x2000, 1);
    m.put_u64(0x2008, 0x3000);
    m.put_u64(0x3000, 0x4000);
    m.put_u64(0x4010, 0x10000);
    m.put_u64(0x4018, 0x20000);
    m.put_u64(0x4040, 0x9000);
    m.put_u32(0x4070, 6);
    let mut map = vec![0xFFu8; 0x400];
    map[..12].copy_from_slice(&[0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
    m.put(0x9000, &map);
    blob(
        &mut m,
        0x10000,
        0x30000,
        "nmethod",
        (0x10040, 0x10100),
        4,
        0x50000,
    );
    blob(
        &mut m,
        0x10100,
        0x30100,
        "Interpreter",
        (0x10140, 0x10200),
        0,
        0,
    );
    blob(
        &mut m,
        0x10200,
        0x30200,
        "StubRoutines (1)",
        (0x10240, 0x10300),
        0,
        0,
    );
    method(
        &mut m,
        0x50000,
        "java/util/HashMap",
        "get",
        "(Ljava/lang/Object;)Ljava/lang/Object;",
    );
    method(&mut m, 0x60000, "org/example/App", "run", "()V");
    let layout = layout();
    Jvm {
        heaps: codecache::heaps(&m, &layout),
        mem: Box::new(m),
        layout,
        blobs: BTreeMap::new(),
        blobs_since: Instant::now(),
    }
}

/// The stack of the walk below: a compiled frame at sp 0x7000 called from an
/// interpreted one (rbp 0x7100), called from the call stub (rbp 0x7200), called from
/// native code at 0x400123 whose frame-pointer frame at 0x7300 is the outermost.
fn stack() -> Vec<(u64, u64)> {
    vec![
        (0x7010, 0x7100),   // compiled frame: saved rbp
        (0x7018, 0x10180),  // compiled frame: return into the interpreter
        (0x70e8, 0x60000),  // interpreted frame: Method*
        (0x70f8, 0x7110),   // interpreted frame: caller's sp
        (0x7100, 0x7200),   // interpreted frame: caller's rbp
        (0x7108, 0x10280),  // interpreted frame: return into the call stub
        (0x7200, 0x7300),   // call stub: caller's rbp
        (0x7208, 0x400123), // call stub: return into the VM
        (0x7300, 0),
        (0x7308, 0),
    ]
}

fn hotspot() -> HotSpot {
    let mut h = HotSpot::default();
    h.jvms.insert(7, Process::Jvm(Box::new(jvm())));
    h
}

#[test]
fn compiled_interpreted_and_stub_frames_are_stepped_out_of() {
    let mut h = hotspot();
    let words: HashMap<u64, u64> = stack().into_iter().collect();
    let mut read = |a: u64| words.get(&a).copied().ok_or(());
    let at = |ip, sp, bp| FrameRegs {
        ip,
        sp,
        bp,
        leaf: false,
    };
    let caller = |report, ip, sp, bp| RuntimeStep::Caller {
        report,
        caller: FrameRegs {
            ip,
            sp,
            bp,
            leaf: false,
        },
    };
    // rbp is garbage in compiled code: the frame size alone finds the caller.
    assert_eq!(
        h.step(7, at(0x10080, 0x7000, 0xdead), &mut read),
        caller(0x10080, 0x10180, 0x7020, 0x7100)
    );
    // An interpreted frame is reported by its Method*.
    assert_eq!(
        h.step(7, at(0x10180, 0x7020, 0x7100), &mut read),
        caller(0x60000, 0x10280, 0x7110, 0x7200)
    );
    assert_eq!(
        h.step(7, at(0x10280, 0x7110, 0x7200), &mut read),
        caller(0x10280, 0x400123, 0x7210, 0x7300)
    );
    assert_eq!(
        h.step(7, at(0x400123, 0x7210, 0x7300), &mut read),
        RuntimeStep::NotMine
    );
    assert_eq!(
        h.step(8, at(0x10080, 0x7000, 0), &mut read),
        RuntimeStep::NotMine,
        "not a JVM"
    );
    // Stopped in a compiled method's prologue: its frame is not there yet.
    let leaf = FrameRegs {
        ip: 0x10045,
        sp: 0x7000,
        bp: 0,
        leaf: true,
    };
    assert_eq!(
        h.step(7, leaf, &mut read),
        RuntimeStep::Stuck { report: 0x10045 }
    );
    assert_eq!(
        RuntimeFrames::name(&h, 7, 0x100ff).as_deref(),
        Some("java.lang.Object java.util.HashMap.get(java.lang.Object)")
    );
    assert_eq!(
        RuntimeFrames::name(&h, 7, 0x60000).as_deref(),
        Some("void org.example.App.run()")
    );
    assert_eq!(
        RuntimeFrames::name(&h, 7, 0x10290).as_deref(),
        Some("StubRoutines (1)")
    );
    assert_eq!(RuntimeFrames::name(&h, 7, 0x10100), None);
}

#[test]
fn the_unwinder_walks_java_frames_through_the_walker() {
    let mut u = DwarfUnwinder::default();
    u.add_runtime(Box::new(hotspot()));
    u.set_mappings(
        7,
        vec![CodeMapping {
            start: 0x10000,
            end: 0x20000,
            offset: 0,
            path: String::new(),
            program: false,
        }],
    );
    let mut data = vec![0u8; 0x310];
    for (a, v) in stack() {
        let o = (a - 0x7000) as usize;
        data[o..o + 8].copy_from_slice(&v.to_le_bytes());
    }
    let copy = StackCopy {
        ip: 0x10080,
        sp: 0x7000,
        bp: 0xdead,
        flags: 0,
        data,
    };
    let u1 = u.unwind(7, &copy, StackMode::All, 32);
    assert_eq!(u1.frames, vec![0x10080, 0x60000, 0x10280, 0x400123]);
    assert_eq!(u1.end, UnwindEnd::Complete);
    assert_eq!(
        u.frame_name(7, 0x60000).as_deref(),
        Some("void org.example.App.run()")
    );
    // The interpreted frame's Method* word is part of what the unwind read: another
    // method there is another unwind, not the remembered one.
    let b = u.basis(7, &copy, StackMode::All, 32).expect("remembered");
    assert!(b.words.iter().any(|w| w.0 == 0x70e8), "{:?}", b.words);
}

/// A live JVM: every compiled method of the JVM's own perf map is found in the code
/// cache at the same address, with the same name. Needs `java`, `javac` and `jcmd`
/// (skipped without them) and to read the JVM's memory (as root or its parent).
#[test]
fn a_live_jvms_code_cache_agrees_with_its_perf_map() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("Spin.java");
    std::fs::write(
        &src,
        "public class Spin { static long f(long x) { return x * 31 + 7; }\n\
         public static void main(String[] a) throws Exception { long s = 0;\n\
         for (int i = 0; ; i++) { s += f(i); if (i % 100000 == 0) Thread.sleep(1); } } }\n",
    )
    .expect("write source");
    let Ok(st) = std::process::Command::new("javac").arg(&src).status() else {
        eprintln!("skipped: no javac");
        return;
    };
    assert!(st.success(), "javac failed");
    let mut child = std::process::Command::new("java")
        .args(["-cp", dir.path().to_str().unwrap(), "Spin"])
        .spawn()
        .expect("start java");
    let pid = child.id();
    std::thread::sleep(Duration::from_secs(3));
    let map = format!("/tmp/perf-{pid}.map");
    let jcmd = std::process::Command::new("jcmd")
        .args([&pid.to_string(), "Compiler.perfmap"])
        .output();
    let text = std::fs::read_to_string(&map).unwrap_or_default();
    let _ = std::fs::remove_file(&map);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert!(jcmd.is_ok() && !text.is_empty(), "no perf map from jcmd");
        let mut jvm = Jvm::open(pid).expect("read the JVM's structures");
        let (mut checked, mut same) = (0, 0);
        for line in text.lines() {
            let mut parts = line.splitn(3, ' ');
            let (Some(start), Some(size), Some(name)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let start = u64::from_str_radix(start.trim_start_matches("0x"), 16).unwrap();
            let size = u64::from_str_radix(size.trim_start_matches("0x"), 16).unwrap();
            let Some(b) = jvm.blob_at(start).cloned() else {
                continue;
            };
            let BlobKind::Compiled(m) = b.kind else {
                continue;
            };
            checked += 1;
            let ours = names::method_name(jvm.mem.as_ref(), &jvm.layout, m);
            if b.code_begin == start
                && b.code_end - b.code_begin == size
                && ours.as_deref() == Some(name)
            {
                same += 1;
            } else {
                eprintln!("differs: {line} vs {b:?} {ours:?}");
            }
        }
        assert!(
            checked >= 5,
            "only {checked} compiled methods found in the code cache"
        );
        assert_eq!(same, checked);
        assert!(
            text.contains("Spin.f(long)"),
            "the test's method was not compiled"
        );
    }));
    let _ = child.kill();
    let _ = child.wait();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
