//! The program's own code in a stack: which of its frames an answer should name.
//!
//! A stack where a thread waited or ran ends, innermost, in code the program only
//! called: the C library's futex wait, OpenSSL's digest loop, the kernel. Those leaves
//! are the same for every program that blocks or hashes, so an answer that names only
//! them cannot tell one program from another. The rule, for one user stack
//! (innermost first):
//!
//! 1. **Compiled by a runtime's JIT, the program's code is the JIT code.** A frame named
//!    from a perf map or jitdump file (module [`JIT_MODULE`]) is code the runtime
//!    compiled from the program's sources: JavaScript, Java, Python 3.12+ (`-X perf`).
//!    When a stack holds such a frame, the native frames around it are the runtime
//!    (the interpreter, V8, the JVM, and whatever libraries the runtime's binary links
//!    in statically, such as Node's OpenSSL): context, never the program's.
//! 2. **A runtime's own library is the runtime's, even when JIT-compiled.** Node's
//!    built-in modules (`node:` sources), Python's standard library and installed
//!    packages (sources under `lib/pythonX.Y/`), the JDK's packages (`java.`, `jdk.`,
//!    `sun.`...) and the runtime's stubs (V8's builtins, the JVM's interpreter and
//!    adapters) are called by the program as a C program calls libc: context. The
//!    same holds for Go's standard library, which a Go program links into its
//!    executable: on a goroutine's stack (it ends in `runtime.goexit`), a function of a
//!    package whose path's first element has no dot (`runtime`, `net`,
//!    `internal/poll`) is the runtime's; `main` and modules (`github.com/...`) are the
//!    program's.
//! 3. **Otherwise the program's code is its executable.** Frames in the process's own
//!    executable file are the program's; shared libraries and the kernel are context.
//!    (A library linked statically into a native program cannot be told apart from
//!    its code without its sources: it counts as the program's.)
//!
//! The program's frames an answer names are the innermost run of consecutive own
//! frames ([`OwnFrames::own`]): the function that made the call and its own callers,
//! up to the first frame that is not the program's (a framework's dispatcher calling
//! the handler). The context is the frame that run called ([`OwnFrames::entry`]: the
//! library's entry point, `pbkdf2Sync`, `pthread_cond_wait`) and the innermost user
//! frame ([`OwnFrames::leaf`]), where the time was spent.

use causeway_format::{FrameId, FrameSpace, StackId, Tables, Tgid};
use std::collections::HashMap;
use std::ops::Range;

/// The module name of frames named from a JIT table (perf map or jitdump), as the
/// recorder writes them.
pub const JIT_MODULE: &str = "[jit]";

/// What a frame is to the rule of [`OwnCode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameRole {
    /// The program's JIT-compiled code.
    ProgramJit,
    /// JIT-compiled code of the runtime's own library or stubs.
    RuntimeJit,
    /// A function of the process's executable.
    Executable,
    /// A function of the Go standard library linked into the executable, on a
    /// goroutine's stack.
    GoStd,
    /// A shared library's function, an unnamed address, or the kernel.
    Other,
}

/// Where the program's own code is in one stack: indices into its frames, innermost
/// first (index 0 is the leaf).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnFrames {
    /// The innermost run of consecutive frames of the program's own code; empty when
    /// the stack holds none.
    pub own: Range<usize>,
    /// The frame the innermost own frame called: the library's (or runtime's) entry
    /// point. `None` when the own frame is the leaf or there is no own frame.
    pub entry: Option<usize>,
    /// The innermost frame when it is not the program's: where the time was spent.
    pub leaf: Option<usize>,
    /// True when the own frames are JIT-compiled code (rule 1), false when they are
    /// the executable's.
    pub jit: bool,
}

impl OwnFrames {
    /// True if the stack holds no frame of the program's own code.
    pub fn is_empty(&self) -> bool {
        self.own.is_empty()
    }
}

/// The rule of the module over a trace's tables, with each process's executable
/// looked up once.
pub struct OwnCode<'t> {
    tables: &'t Tables,
    exes: HashMap<Tgid, Vec<&'t str>>,
}

impl<'t> OwnCode<'t> {
    /// The rule over these tables.
    pub fn new(tables: &'t Tables) -> OwnCode<'t> {
        let mut exes: HashMap<Tgid, Vec<&'t str>> = HashMap::new();
        for p in &tables.processes {
            let exe = tables.string(p.exe);
            if !exe.is_empty() {
                let v = exes.entry(p.tgid).or_default();
                if !v.contains(&exe) {
                    v.push(exe);
                }
            }
        }
        OwnCode { tables, exes }
    }

    /// The tables it reads.
    pub fn tables(&self) -> &'t Tables {
        self.tables
    }

    /// The program's own frames of a stack of the tables; `None` for an unknown id.
    pub fn of_stack(&self, id: StackId) -> Option<OwnFrames> {
        self.tables.stack(id).map(|s| self.own_frames(&s.frames))
    }

    /// The program's own frames of a user stack's frames, innermost first.
    pub fn own_frames(&self, frames: &[FrameId]) -> OwnFrames {
        let go = is_goroutine_stack(self.tables, frames);
        let roles: Vec<FrameRole> = frames.iter().map(|&f| self.role(f, go)).collect();
        let jit = roles.contains(&FrameRole::ProgramJit);
        let own_role = if jit {
            FrameRole::ProgramJit
        } else {
            FrameRole::Executable
        };
        let Some(first) = roles.iter().position(|&r| r == own_role) else {
            return OwnFrames {
                leaf: (!frames.is_empty()).then_some(0),
                ..OwnFrames::default()
            };
        };
        let len = roles[first..]
            .iter()
            .take_while(|&&r| r == own_role)
            .count();
        OwnFrames {
            own: first..first + len,
            entry: first.checked_sub(1),
            leaf: (first > 0).then_some(0),
            jit,
        }
    }

    /// What one frame is (see the module's rule); `goroutine` says the stack is a
    /// goroutine's.
    pub fn role(&self, f: FrameId, goroutine: bool) -> FrameRole {
        let t = self.tables;
        let Some(frame) = t.frame(f) else {
            return FrameRole::Other;
        };
        let FrameSpace::User { tgid } = frame.space else {
            return FrameRole::Other;
        };
        let module = t.string(frame.module);
        if module == JIT_MODULE {
            return if jit_is_runtime(t.string(frame.symbol)) {
                FrameRole::RuntimeJit
            } else {
                FrameRole::ProgramJit
            };
        }
        let in_exe =
            !module.is_empty() && self.exes.get(&tgid).is_some_and(|e| e.contains(&module));
        if !in_exe {
            FrameRole::Other
        } else if goroutine && go_std_symbol(t.string(frame.symbol)) {
            FrameRole::GoStd
        } else {
            FrameRole::Executable
        }
    }
}

/// The program's own frames of a user stack (see the module's rule). For many stacks
/// of one trace, make one [`OwnCode`] and ask it.
pub fn own_frames(tables: &Tables, frames: &[FrameId]) -> OwnFrames {
    OwnCode::new(tables).own_frames(frames)
}

/// A goroutine's stack: it ends in the Go runtime's `runtime.goexit`.
fn is_goroutine_stack(tables: &Tables, frames: &[FrameId]) -> bool {
    frames.iter().rev().take(3).any(|&f| {
        tables
            .frame(f)
            .is_some_and(|fr| tables.string(fr.symbol) == "runtime.goexit")
    })
}

/// A function of Go's runtime or standard library: its package path's first element
/// has no dot (`runtime`, `syscall`, `internal/poll`, `net`), unlike `main` and
/// modules (`github.com/...`).
fn go_std_symbol(sym: &str) -> bool {
    let last_slash = sym.rfind('/').map_or(0, |i| i + 1);
    let Some(pkg_end) = sym[last_slash..].find('.').map(|i| last_slash + i) else {
        return false;
    };
    let path = &sym[..pkg_end];
    let first = path.split('/').next().unwrap_or(path);
    path != "main" && !first.contains('.')
}

/// The runtimes whose perf-map names [`jit_name`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JitRuntime {
    /// V8 (Node.js, Chromium): `JS:*name file:line:col`, `LazyCompile:~name file`.
    V8,
    /// CPython 3.12+ `-X perf`: `py::name:file`.
    Python,
    /// Anything else (the JVM's `Class::method` or `Class.method`).
    Other,
}

/// A JIT-compiled function's name as a runtime wrote it, split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JitName<'a> {
    /// The runtime whose convention it follows.
    pub runtime: JitRuntime,
    /// The function's name; empty for an anonymous function.
    pub function: &'a str,
    /// Its source (file, module or URL, with line and column when given), if named.
    pub source: Option<&'a str>,
    /// True for the runtime's own code: stubs and builtins, which have no source.
    pub stub: bool,
}

/// V8's kinds of code in its perf map that come from JavaScript sources.
const V8_JS_KINDS: [&str; 5] = ["JS:", "LazyCompile:", "Function:", "Script:", "Eval:"];

/// V8's kinds of its own code (builtins, handlers, stubs) in its perf map.
const V8_OWN_KINDS: [&str; 6] = [
    "Builtin:",
    "BytecodeHandler:",
    "Stub:",
    "RegExp:",
    "Handler:",
    "Callback:",
];

/// Split a JIT-compiled function's name as V8, CPython or another runtime wrote it.
pub fn jit_name(name: &str) -> JitName<'_> {
    if let Some(rest) = V8_JS_KINDS.iter().find_map(|k| name.strip_prefix(k)) {
        // Tier marks: ~ interpreted, ^ baseline, + mid-tier, * optimized.
        let rest = rest.trim_start_matches(['~', '^', '+', '*']);
        let (function, source) = match rest.split_once(' ') {
            Some((f, s)) => (f, Some(s.trim()).filter(|s| !s.is_empty())),
            None => (rest, None),
        };
        return JitName {
            runtime: JitRuntime::V8,
            function,
            source,
            stub: false,
        };
    }
    if V8_OWN_KINDS.iter().any(|k| name.starts_with(k)) {
        return JitName {
            runtime: JitRuntime::V8,
            function: name.split_once(':').map_or(name, |(_, f)| f),
            source: None,
            stub: true,
        };
    }
    if let Some(rest) = name.strip_prefix("py::") {
        let (function, source) = match rest.split_once(':') {
            Some((f, s)) => (f, Some(s).filter(|s| !s.is_empty())),
            None => (rest, None),
        };
        return JitName {
            runtime: JitRuntime::Python,
            function,
            source,
            stub: false,
        };
    }
    // The JVM: `Class::method`, `Class.method(args)`, sometimes after a return type;
    // its own stubs (`Interpreter`, `StubRoutines (1)`, `I2C/C2I adapters`) name no
    // class.
    let function = name
        .split_whitespace()
        .find(|t| t.contains("::") || t.contains('.'))
        .map(|t| t.split('(').next().unwrap_or(t));
    JitName {
        runtime: JitRuntime::Other,
        function: function.unwrap_or(name),
        source: None,
        stub: function.is_none(),
    }
}

/// The JDK's package prefixes: its classes are the runtime's library.
const JDK_PACKAGES: [&str; 7] = [
    "java.", "javax.", "jdk.", "sun.", "com.sun.", "java/", "jdk/",
];

/// True if a JIT-compiled function belongs to the runtime (rule 2 of the module).
fn jit_is_runtime(name: &str) -> bool {
    let n = jit_name(name);
    if n.stub {
        return true;
    }
    match n.runtime {
        JitRuntime::V8 => n.source.is_some_and(|s| s.starts_with("node:")),
        JitRuntime::Python => n
            .source
            .is_some_and(|s| s.contains("/lib/python3") || s.starts_with('<')),
        JitRuntime::Other => {
            let f = n.function.trim_start_matches('L');
            JDK_PACKAGES.iter().any(|p| f.starts_with(p))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_format::{Frame, ProcessInfo, Stack, StringId, Timestamp};

    /// Tables with one process (`/usr/bin/node`, tgid 7) and the given frames, each
    /// `(module, symbol)`, as one stack, innermost first.
    fn tables(frames: &[(&str, &str)]) -> Tables {
        let mut t = Tables {
            strings: vec![String::new()],
            ..Tables::default()
        };
        let intern = |t: &mut Tables, s: &str| {
            if let Some(i) = t.strings.iter().position(|x| x == s) {
                return StringId(i as u32);
            }
            t.strings.push(s.to_string());
            StringId(t.strings.len() as u32 - 1)
        };
        let exe = intern(&mut t, "/usr/bin/node");
        t.processes.push(ProcessInfo {
            tgid: Tgid(7),
            parent: None,
            since: Timestamp(0),
            exe,
            cmdline: exe,
        });
        let mut ids = Vec::new();
        for (i, (m, s)) in frames.iter().enumerate() {
            let space = if *m == "[kernel]" {
                FrameSpace::Kernel
            } else {
                FrameSpace::User { tgid: Tgid(7) }
            };
            let (m, s) = (intern(&mut t, m), intern(&mut t, s));
            t.frames.push(Frame::new(space, 0x1000 + i as u64, m, s, 0));
            ids.push(FrameId(i as u32));
        }
        t.stacks.push(Stack {
            frames: ids,
            truncated: false,
        });
        t
    }

    const NODE: &str = "/usr/bin/node";

    #[test]
    fn node_names_the_handler_not_the_hash_statically_linked_into_node() {
        let t = tables(&[
            (NODE, "kdf_pbkdf2_derive"),
            (NODE, "PKCS5_PBKDF2_HMAC"),
            (NODE, "Builtins_CEntry_Return1_ArgvOnStack_BuiltinExit"),
            ("[jit]", "JS:^pbkdf2Sync node:internal/crypto/pbkdf2:62:20"),
            ("[jit]", "JS:^slowHandler /srv/server.js:69:21"),
            ("[jit]", "JS:^ /srv/server.js:83:36"),
            ("[jit]", "JS:^emit node:events:471:44"),
            ("[jit]", "JS:~handle /srv/server.js:10:1"),
            (NODE, "uv_run"),
        ]);
        let o = OwnCode::new(&t).of_stack(StackId(0)).unwrap();
        assert_eq!(o.own, 4..6, "{o:?}");
        assert_eq!(o.entry, Some(3));
        assert_eq!(o.leaf, Some(0));
        assert!(o.jit);
    }

    #[test]
    fn without_jit_code_the_executable_is_the_program() {
        let t = tables(&[
            (
                "/usr/lib/x86_64-linux-gnu/libc.so.6",
                "__futex_abstimed_wait_common64",
            ),
            (
                "/usr/lib/x86_64-linux-gnu/libc.so.6",
                "___pthread_cond_wait",
            ),
            (NODE, "uv_cond_wait"),
            (NODE, "worker"),
            ("/usr/lib/x86_64-linux-gnu/libc.so.6", "start_thread"),
        ]);
        let o = own_frames(&t, &t.stacks[0].frames);
        assert_eq!(o.own, 2..4);
        assert_eq!(o.entry, Some(1));
        assert_eq!(o.leaf, Some(0));
        assert!(!o.jit);
    }

    #[test]
    fn a_stack_with_only_library_code_has_no_own_frame_but_a_leaf() {
        let t = tables(&[
            ("/usr/lib/libc.so.6", "epoll_wait"),
            (
                "[jit]",
                "JS:~processTicks node:internal/process/task_queues:1:1",
            ),
            ("", ""),
        ]);
        let o = own_frames(&t, &t.stacks[0].frames);
        assert!(o.is_empty());
        assert_eq!(o.leaf, Some(0));
        assert_eq!(o.entry, None);
    }

    #[test]
    fn go_standard_library_frames_are_context_on_a_goroutine_stack() {
        let exe = "/srv/app";
        let mut t = tables(&[
            (exe, "internal/poll.(*FD).Fsync"),
            (exe, "os.(*File).Sync"),
            (exe, "main.syncLog"),
            (exe, "github.com/x/y.Run"),
            (exe, "runtime.goexit"),
        ]);
        t.strings[t.processes[0].exe.0 as usize] = exe.to_string();
        let o = own_frames(&t, &t.stacks[0].frames);
        assert_eq!(o.own, 2..4);
        assert_eq!(o.entry, Some(1));
    }

    #[test]
    fn runtime_names_are_split_and_their_libraries_known() {
        let n = jit_name("JS:*slowHandler /srv/a.js:3:1");
        assert_eq!(
            (n.function, n.source),
            ("slowHandler", Some("/srv/a.js:3:1"))
        );
        assert_eq!(jit_name("LazyCompile:~ /srv/a.js:9").function, "");
        assert!(jit_name("Builtin:ArrayPrototypePush").stub);
        let p = jit_name("py::handle:/srv/app.py");
        assert_eq!((p.function, p.source), ("handle", Some("/srv/app.py")));
        assert_eq!(jit_name("void Hot.hotLoop(int)").function, "Hot.hotLoop");
        assert!(jit_is_runtime("JS:^emit node:events:471:44"));
        assert!(jit_is_runtime(
            "py::run:/usr/lib/python3.12/asyncio/events.py"
        ));
        assert!(jit_is_runtime("java.util.HashMap::get"));
        assert!(jit_is_runtime("Interpreter"));
        assert!(!jit_is_runtime("py::handle:/srv/app.py"));
        assert!(!jit_is_runtime("LHot;::hotLoop"));
        assert!(!jit_is_runtime("Hot::hotLoop"));
    }
}
