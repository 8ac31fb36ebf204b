//! Names of JIT-compiled code, which lives in anonymous memory that no ELF file
//! describes. Runtimes publish them in two conventions perf reads too:
//!
//! - the perf map, `/tmp/perf-PID.map`: one `START SIZE NAME` line (hex) per function,
//!   written by the JVM (`-XX:+DumpPerfMapAtExit`, `jcmd PID Compiler.perfmap`), Node
//!   (`--perf-basic-prof`) and Python 3.12+ (`-X perf`);
//! - jitdump, `jit-PID.dump`: binary code-load records, found because the runtime maps
//!   the file executable (its path is among the process's mappings).
//!
//! The recorder reads a table once per process: when the process exits (the file may
//! be reused by a later process with the same id) or when stacks are symbolized at the
//! end of the recording. A running HotSpot JVM without a perf map can be asked to write
//! one (`jcmd`, [`ask_jvm`]).

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// One JIT-compiled function.
#[derive(Clone, Debug, PartialEq, Eq)]
struct JitSym {
    start: u64,
    end: u64,
    /// Order of appearance: where code was freed and reused, the later entry names it.
    seq: u32,
    name: String,
}

/// The JIT functions of one process.
#[derive(Clone, Debug, Default)]
pub struct JitTable {
    /// Sorted by start.
    syms: Vec<JitSym>,
    /// The longest function: how far back a lookup must look.
    longest: u64,
}

impl JitTable {
    fn from_entries(entries: Vec<(u64, u64, String)>) -> JitTable {
        let mut syms: Vec<JitSym> = entries
            .into_iter()
            .enumerate()
            .filter(|(_, (_, size, _))| *size > 0)
            .map(|(i, (start, size, name))| JitSym {
                start,
                end: start.saturating_add(size),
                seq: i as u32,
                name,
            })
            .collect();
        syms.sort_by_key(|s| (s.start, s.seq));
        let longest = syms.iter().map(|s| s.end - s.start).max().unwrap_or(0);
        JitTable { syms, longest }
    }

    /// Add another source's entries (a jitdump after the perf map: later wins).
    fn extend(&mut self, more: JitTable) {
        let base = self.syms.len() as u32;
        let mut all = std::mem::take(&mut self.syms);
        all.extend(more.syms.into_iter().map(|mut s| {
            s.seq += base;
            s
        }));
        all.sort_by_key(|s| (s.start, s.seq));
        self.longest = self.longest.max(more.longest);
        self.syms = all;
    }

    /// Number of functions.
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// No functions.
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// The function holding `addr`: of several (code freed and reused), the latest.
    pub fn lookup(&self, addr: u64) -> Option<&str> {
        let upto = self.syms.partition_point(|s| s.start <= addr);
        let from = addr.saturating_sub(self.longest);
        self.syms[..upto]
            .iter()
            .rev()
            .take_while(|s| s.start >= from)
            .filter(|s| addr < s.end)
            .max_by_key(|s| s.seq)
            .map(|s| s.name.as_str())
    }
}

/// Parse a perf map: `START SIZE NAME` per line, START and SIZE in hex (with or
/// without `0x`); lines that do not parse are skipped.
pub fn parse_perf_map(text: &str) -> Vec<(u64, u64, String)> {
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
    text.lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ' ');
            let start = hex(f.next()?)?;
            let size = hex(f.next()?)?;
            let name = f.next()?.trim();
            (!name.is_empty()).then(|| (start, size, name.to_string()))
        })
        .collect()
}

/// Code-load records of a jitdump file (a moved function is named at its new place).
fn read_jitdump(path: &Path) -> Vec<(u64, u64, String)> {
    std::fs::read(path).map_or_else(|_| Vec::new(), |b| parse_jitdump(&b))
}

/// Code-load records of a jitdump file's bytes.
fn parse_jitdump(bytes: &[u8]) -> Vec<(u64, u64, String)> {
    use linux_perf_data::jitdump::{JitDumpReader, JitDumpRecord};
    let Ok(mut reader) = JitDumpReader::new(std::io::Cursor::new(bytes)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut names: HashMap<u64, String> = HashMap::new();
    while let Ok(Some(raw)) = reader.next_record() {
        match raw.parse() {
            Ok(JitDumpRecord::CodeLoad(r)) => {
                let name = String::from_utf8_lossy(&r.function_name.as_slice()).into_owned();
                names.insert(r.code_index, name.clone());
                out.push((r.code_addr, r.code_bytes.len() as u64, name));
            }
            Ok(JitDumpRecord::CodeMove(r)) => {
                if let Some(name) = names.get(&r.code_index) {
                    out.push((r.new_code_addr, r.code_size, name.clone()));
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    out
}

/// Whether a mapped path is a jitdump file (`…/jit-PID.dump`).
pub fn is_jitdump(path: &str) -> bool {
    Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("jit-") && n.ends_with(".dump"))
}

/// Where a process's perf map may be, first found first: the runtime writes
/// `/tmp/perf-PID.map` with the PID it has in its own PID namespace, under its own
/// root (a container's `/tmp`), so that file is looked for through the process
/// (`/proc/PID/root`, while it lives) before the host's `/tmp/perf-PID.map`.
fn perf_map_paths(tgid: u32) -> Vec<PathBuf> {
    let mut paths = Vec::with_capacity(2);
    if let Some(ns) = crate::process::ns_pid(tgid) {
        paths.push(PathBuf::from(format!(
            "/proc/{tgid}/root/tmp/perf-{ns}.map"
        )));
    }
    paths.push(PathBuf::from(format!("/tmp/perf-{tgid}.map")));
    paths
}

/// The first of a process's perf map paths that exists.
fn perf_map_path(tgid: u32) -> Option<PathBuf> {
    perf_map_paths(tgid).into_iter().find(|p| p.exists())
}

/// JIT files of processes in other namespaces, opened while the processes lived: by
/// process, the perf map (`None` key) and the jitdump files by mapped path. A
/// container's `/tmp` is gone with it, often before the recorder reads the tables (at
/// the process's exit, or at the end), while a host process's files stay at their
/// paths. Shared because two owners read tables in the recorder's process: the
/// converter at an exit and the symbolizer at the end.
static KEPT: Mutex<Option<KeptFiles>> = Mutex::new(None);

/// Kept files by (process, `None` for the perf map or a jitdump file's mapped path).
type KeptFiles = HashMap<(u32, Option<String>), File>;

/// Most files kept (each is one open descriptor).
const MAX_KEPT: usize = 1024;

/// Whether process `tgid` sees the host's root.
fn host_root(tgid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let id = |p: &str| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    id(&format!("/proc/{tgid}/root")).is_some_and(|r| Some(r) == id("/"))
}

/// Open and keep the JIT files of a process in other namespaces while it lives (see
/// [`KEPT`]): its perf map, and the jitdump files among `maps`. Files of a process on
/// the host's root are read at their paths later.
pub fn keep_files(tgid: u32, maps: &[crate::Mapping]) {
    let ns = crate::process::ns_pid(tgid);
    if ns == Some(tgid) && host_root(tgid) {
        return;
    }
    let mut wanted: Vec<(Option<String>, PathBuf)> = Vec::new();
    if let Some(ns) = ns {
        let p = PathBuf::from(format!("/proc/{tgid}/root/tmp/perf-{ns}.map"));
        wanted.push((None, p));
    }
    for m in maps.iter().filter(|m| is_jitdump(&m.path)) {
        if let Some(p) = crate::files::path_now(tgid, m) {
            wanted.push((Some(m.path.clone()), p));
        }
    }
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let kept = kept.get_or_insert_with(HashMap::new);
    for (key, path) in wanted {
        let key = (tgid, key);
        if kept.len() >= MAX_KEPT || kept.contains_key(&key) {
            continue;
        }
        if let Ok(f) = File::open(&path) {
            kept.insert(key, f);
        }
    }
}

/// The whole content of a kept file of `tgid` (`None` key: the perf map).
fn kept_bytes(tgid: u32, key: Option<&str>) -> Option<Vec<u8>> {
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let f = kept.as_mut()?.get_mut(&(tgid, key.map(str::to_string)))?;
    let mut b = Vec::new();
    f.rewind().ok()?;
    f.read_to_end(&mut b).ok()?;
    Some(b)
}

/// Read a process's JIT tables: its perf map and the jitdump files among `mapped`
/// (paths as the process maps them), from the files kept while it lived if it ran in
/// other namespaces, else from their paths.
pub fn read_tables(tgid: u32, mapped: &[&str]) -> JitTable {
    let text = kept_bytes(tgid, None)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .or_else(|| std::fs::read_to_string(perf_map_path(tgid)?).ok());
    let mut t = text.map_or_else(JitTable::default, |text| {
        JitTable::from_entries(parse_perf_map(&text))
    });
    for p in mapped.iter().filter(|p| is_jitdump(p)) {
        let entries = match kept_bytes(tgid, Some(p)) {
            Some(b) => parse_jitdump(&b),
            None => read_jitdump(Path::new(p)),
        };
        t.extend(JitTable::from_entries(entries));
    }
    t
}

/// Processes running JIT code whose jitdump file may have been mapped after their
/// mappings were read. Mappings are read when a process execs and when a stack holds
/// an address outside them, so a runtime that maps its dump file right after it
/// maps its code memory can be read in between and its dump never seen. Runtimes map
/// the dump when the JIT starts, before any code it emits runs, so the first stack
/// with a frame in anonymous executable memory is the moment to read them once more.
#[derive(Debug, Default)]
pub struct JitRecheck {
    /// Anonymous executable ranges of processes with no jitdump mapped yet.
    anon: HashMap<u32, Vec<(u64, u64)>>,
    /// Processes read again for this reason (once each).
    done: std::collections::HashSet<u32>,
}

impl JitRecheck {
    /// A process's executable mappings were read: watch it if it has anonymous code
    /// and no jitdump file.
    pub fn note_maps(&mut self, tgid: u32, maps: &[crate::Mapping]) {
        let dump = maps.iter().any(|m| is_jitdump(&m.path));
        if dump || maps.iter().any(|m| m.path.is_empty()) {
            keep_files(tgid, maps);
        }
        let anon: Vec<(u64, u64)> = maps
            .iter()
            .filter(|m| m.path.is_empty())
            .map(|m| (m.start, m.end))
            .collect();
        if dump || anon.is_empty() || self.done.contains(&tgid) {
            self.anon.remove(&tgid);
        } else {
            self.anon.insert(tgid, anon);
        }
    }

    /// Whether a stack of `tgid` with these user frames runs JIT code whose dump may
    /// be unseen: true once per process.
    pub fn wants_reread(&mut self, tgid: u32, frames: &[u64]) -> bool {
        let Some(ranges) = self.anon.get(&tgid) else {
            return false;
        };
        let hit = frames
            .iter()
            .any(|&a| ranges.iter().any(|&(s, e)| s <= a && a < e));
        if hit {
            self.anon.remove(&tgid);
            self.done.insert(tgid);
        }
        hit
    }
}

/// Ask a running HotSpot JVM to write its perf map (`jcmd PID Compiler.perfmap`, the
/// JDK's own tool, found beside its `java` or on PATH). Returns whether a map exists
/// afterwards. Bounded: a JVM that does not answer within 10 s is left alone.
pub fn ask_jvm(tgid: u32, exe: &str) -> bool {
    if perf_map_path(tgid).is_some() {
        return true;
    }
    let beside = Path::new(exe).with_file_name("jcmd");
    let jcmd = if beside.is_file() {
        beside
    } else {
        PathBuf::from("jcmd")
    };
    let Ok(mut child) = std::process::Command::new(jcmd)
        .arg(tgid.to_string())
        .arg("Compiler.perfmap")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    else {
        return false;
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
        }
    }
    perf_map_path(tgid).is_some()
}

/// Whether a process with these mapped paths is a HotSpot JVM.
pub fn is_hotspot(mapped: &[&str]) -> bool {
    mapped.iter().any(|p| p.ends_with("/libjvm.so"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_map_lines_are_parsed_and_the_latest_entry_wins() {
        let text = "7f0000001000 40 Interpreter\n\
                    0x7f0000002000 0x100 LFoo;::bar\n\
                    garbage line\n\
                    7f0000002000 80 LFoo;::baz (recompiled)\n\
                    7f0000003000 0 empty\n";
        let e = parse_perf_map(text);
        assert_eq!(e.len(), 4);
        assert_eq!(e[1], (0x7f0000002000, 0x100, "LFoo;::bar".to_string()));
        let t = JitTable::from_entries(e);
        assert_eq!(t.len(), 3); // the empty function is dropped
        assert_eq!(t.lookup(0x7f0000001010), Some("Interpreter"));
        assert_eq!(t.lookup(0x7f0000001040), None);
        // Both cover 0x...2010: the later line names it; past its end the older does.
        assert_eq!(t.lookup(0x7f0000002010), Some("LFoo;::baz (recompiled)"));
        assert_eq!(t.lookup(0x7f00000020f0), Some("LFoo;::bar"));
        assert_eq!(t.lookup(0x7f0000000fff), None);
    }

    fn mapping(start: u64, end: u64, path: &str) -> crate::Mapping {
        crate::Mapping {
            start,
            end,
            read: true,
            write: false,
            exec: true,
            offset: 0,
            dev: 0,
            inode: 0,
            path: path.to_string(),
        }
    }

    #[test]
    fn code_run_before_its_dump_was_seen_asks_for_one_reread() {
        let mut r = JitRecheck::default();
        r.note_maps(
            7,
            &[
                mapping(0x1000, 0x2000, "/bin/x"),
                mapping(0x9000, 0xa000, ""),
            ],
        );
        assert!(!r.wants_reread(7, &[0x1100])); // program code only
        assert!(!r.wants_reread(8, &[0x9100])); // another process
        assert!(r.wants_reread(7, &[0x1100, 0x9100]));
        assert!(!r.wants_reread(7, &[0x9100])); // once
        r.note_maps(7, &[mapping(0x9000, 0xa000, "")]);
        assert!(!r.wants_reread(7, &[0x9100])); // still once after a later read
        // A dump already mapped: nothing to wait for.
        r.note_maps(
            9,
            &[
                mapping(0x9000, 0xa000, ""),
                mapping(0xb000, 0xc000, "/t/jit-9.dump"),
            ],
        );
        assert!(!r.wants_reread(9, &[0x9100]));
    }

    #[test]
    fn jitdump_paths_are_recognized() {
        assert!(is_jitdump(
            "/root/.debug/jit/java-jit-20260101/jit-1234.dump"
        ));
        assert!(is_jitdump("jit-1.dump"));
        assert!(!is_jitdump("/usr/lib/libjit.so"));
        assert!(is_hotspot(&["/usr/lib/jvm/x/lib/server/libjvm.so"]));
    }
}
