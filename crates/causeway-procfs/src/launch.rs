//! Starting a command so that its very first instruction is already observed: the
//! recorder's and the live probes' `-- CMD`.
//!
//! The child is forked and waits on a pipe before it execs; the caller attaches what it
//! needs (BPF programs keyed by the child's PID, uprobes), then releases it.
//! `std::process::Command` cannot do this: its spawn returns only after the exec.

use crate::process as procfs;
use std::ffi::CString;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Why a command could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// The command cannot be run (not found, not executable, a NUL byte in it).
    #[error("cannot run `{program}`: {why}")]
    Spawn {
        /// The program as given.
        program: String,
        /// Why.
        why: String,
    },
    /// A system call failed (`pipe`, `fork`).
    #[error("{what}: {source}")]
    Io {
        /// The call.
        what: &'static str,
        /// Its error.
        #[source]
        source: std::io::Error,
    },
}

fn spawn_err(program: &str, why: &str) -> LaunchError {
    LaunchError::Spawn {
        program: program.to_string(),
        why: why.to_string(),
    }
}

/// Exit status of a child that could not ask to be traced (`fork_with`).
pub const EXIT_NO_TRACE: i32 = 125;

/// A forked command waiting to be released.
pub struct Launched {
    /// Its PID (also its process id after exec).
    pub pid: u32,
    /// The program it execs (found in `PATH` like a shell would).
    pub program: std::path::PathBuf,
    release: libc::c_int,
    done: Option<i32>,
    /// Leave it running when this handle goes (`--no-kill`).
    keep: bool,
}

/// Could exec run this file? A regular file with an execute bit (root may run any
/// file with one; the kernel then still checks the format, which fails in the child
/// as exit status 126/127).
fn executable(p: &Path) -> bool {
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The program `cmd` names, as the shell finds it, or why it cannot be run: refused
/// here, before anything is recorded, rather than as the command's exit status.
fn find_in_path(cmd: &str) -> Result<String, &'static str> {
    if cmd.contains('/') {
        let p = Path::new(cmd);
        return if !p.exists() {
            Err("no such file")
        } else if !p.is_file() {
            Err("not a regular file")
        } else if !executable(p) {
            Err("not executable (no execute permission)")
        } else {
            Ok(cmd.to_string())
        };
    }
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    path.split(':')
        .map(|d| Path::new(d).join(cmd))
        .find(|p| executable(p))
        .map(|p| p.to_string_lossy().into_owned())
        .ok_or("command not found")
}

impl Launched {
    /// Fork `argv`; the child execs only after [`Launched::release`].
    pub fn fork(argv: &[String]) -> Result<Launched, LaunchError> {
        Launched::fork_with(argv, false, false, false)
    }

    /// [`Launched::fork`], and if `stop_at_exec` the child also stops at its exec
    /// (it asks to be traced first), before running one instruction of the program:
    /// [`Launched::wait_exec_stop`] waits for that, [`Launched::detach`] lets it go.
    /// A data-flag watch attaches there, so that no access goes unseen. If
    /// `stdout_to_stderr`, the program's standard output is its standard error: the
    /// caller's own standard output then carries only what it prints (`--json`). If
    /// `end_with_parent`, the command gets SIGTERM when this process dies (the
    /// parent-death signal; SIGTERM as at the end of a recording): killed, the recorder
    /// would otherwise leave it running unrecorded, unnoticed. Only the command gets it,
    /// not the processes it starts.
    pub fn fork_with(
        argv: &[String],
        stop_at_exec: bool,
        stdout_to_stderr: bool,
        end_with_parent: bool,
    ) -> Result<Launched, LaunchError> {
        let Some(first) = argv.first() else {
            return Err(spawn_err("", "no command given"));
        };
        let prog = find_in_path(first).map_err(|why| spawn_err(first, why))?;
        let program = std::path::PathBuf::from(&prog);
        let cprog = CString::new(prog).map_err(|_| spawn_err(first, "NUL in path"))?;
        let cargs: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| spawn_err(first, "NUL in an argument"))?;
        let mut ptrs: Vec<*const libc::c_char> = cargs.iter().map(|c| c.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 writes two descriptors into fds.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(LaunchError::Io {
                what: "pipe",
                source: std::io::Error::last_os_error(),
            });
        }
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the child only calls async-signal-safe functions (read, close,
        // dup2, prctl, getppid, execv, _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(LaunchError::Io {
                what: "fork",
                source: std::io::Error::last_os_error(),
            });
        }
        if pid == 0 {
            unsafe {
                libc::close(fds[1]);
                if end_with_parent {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong);
                    // The parent may have died before the prctl: nobody would tell.
                    if libc::getppid() != parent {
                        libc::_exit(126);
                    }
                }
                let mut b = 0u8;
                let n = libc::read(fds[0], (&mut b as *mut u8).cast(), 1);
                if n != 1 {
                    libc::_exit(126);
                }
                if stdout_to_stderr {
                    libc::dup2(2, 1);
                }
                if stop_at_exec
                    && libc::ptrace(
                        libc::PTRACE_TRACEME,
                        0,
                        std::ptr::null_mut::<libc::c_void>(),
                        std::ptr::null_mut::<libc::c_void>(),
                    ) != 0
                {
                    libc::_exit(EXIT_NO_TRACE);
                }
                libc::execv(cprog.as_ptr(), ptrs.as_ptr());
                libc::_exit(127);
            }
        }
        // SAFETY: closing our copy of the read end.
        unsafe { libc::close(fds[0]) };
        Ok(Launched {
            pid: pid as u32,
            program,
            release: fds[1],
            done: None,
            keep: false,
        })
    }

    /// After [`Launched::release`] of a child forked to stop at its exec: wait until
    /// it has stopped there. False if it did not (its exec failed and it exited, or
    /// it could not ask to be traced): then it is not stopped and was not traced.
    pub fn wait_exec_stop(&mut self) -> bool {
        let mut st = 0;
        // SAFETY: waiting for our own child; a traced child's stop is reported to us.
        let r = unsafe { libc::waitpid(self.pid as i32, &mut st, 0) };
        if r != self.pid as i32 {
            return false;
        }
        if libc::WIFSTOPPED(st) {
            return true;
        }
        self.done = Some(st);
        false
    }

    /// Let a child stopped at its exec run on, no longer traced (the stop's SIGTRAP
    /// is not delivered).
    pub fn detach(&mut self) {
        // SAFETY: detaching our own stopped tracee; signal 0 suppresses the SIGTRAP.
        unsafe {
            libc::ptrace(
                libc::PTRACE_DETACH,
                self.pid as libc::pid_t,
                std::ptr::null_mut::<libc::c_void>(),
                std::ptr::null_mut::<libc::c_void>(),
            );
        }
    }

    /// Let the child exec.
    pub fn release(&mut self) {
        if self.release >= 0 {
            let b = 1u8;
            // SAFETY: writing one byte to our pipe end, then closing it.
            unsafe {
                libc::write(self.release, (&b as *const u8).cast(), 1);
                libc::close(self.release);
            }
            self.release = -1;
        }
    }

    /// The exit status once the child has ended (raw wait status), without blocking.
    pub fn poll_exit(&mut self) -> Option<i32> {
        if self.done.is_none() {
            let mut st = 0;
            // SAFETY: waitpid on our own child.
            let r = unsafe { libc::waitpid(self.pid as i32, &mut st, libc::WNOHANG) };
            if r == self.pid as i32 {
                self.done = Some(st);
            }
        }
        self.done
    }

    /// Kill the child (recording could not start).
    pub fn kill(&mut self) {
        // SAFETY: signalling and reaping our own child.
        unsafe {
            libc::kill(self.pid as i32, libc::SIGKILL);
        }
        self.release();
        let mut st = 0;
        unsafe { libc::waitpid(self.pid as i32, &mut st, 0) };
        self.done = Some(st);
    }
}

/// How the recorder ended a command that outlived its recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// SIGTERM sufficed.
    Term,
    /// Something was still running after the grace period: SIGKILL.
    Kill,
}

/// Time a command has after SIGTERM before SIGKILL: long enough for a server to close
/// its files, short enough that a stuck one does not hold the terminal.
pub const KILL_GRACE: Duration = Duration::from_secs(3);

impl Launched {
    /// End the command and every process below it when the recording ended first (the
    /// duration passed, Ctrl-C, SIGTERM), as `perf record` does with its workload:
    /// SIGTERM to all of them, SIGKILL to whatever is left after `grace`, then reap the
    /// command. All of them, not only the command, because a shell or a supervisor that
    /// dies on SIGTERM leaves its children running. Returns `None` if the command had
    /// already ended.
    pub fn terminate(&mut self, grace: Duration) -> Option<Stopped> {
        if self.poll_exit().is_some() {
            return None;
        }
        let mut procs = procfs::descendants(self.pid);
        procs.push(self.pid);
        signal_all(&procs, libc::SIGTERM);
        let deadline = Instant::now() + grace;
        loop {
            let child_done = self.poll_exit().is_some();
            let left: Vec<u32> = procs
                .iter()
                .copied()
                .filter(|&p| p != self.pid && procfs::alive(p))
                .collect();
            if child_done && left.is_empty() {
                return Some(Stopped::Term);
            }
            if Instant::now() >= deadline {
                if !child_done {
                    signal_all(&[self.pid], libc::SIGKILL);
                }
                signal_all(&left, libc::SIGKILL);
                let mut st = 0;
                // SAFETY: reaping our own child (blocks only until SIGKILL lands).
                if !child_done && unsafe { libc::waitpid(self.pid as i32, &mut st, 0) } > 0 {
                    self.done = Some(st);
                }
                return Some(Stopped::Kill);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Launched {
    /// Let the command run on after this handle is dropped.
    pub fn keep_running(&mut self) {
        self.keep = true;
    }
}

/// A recording that fails half way (a full disk) must not leave the command it
/// launched running unrecorded: dropping the handle ends it as the end of a recording
/// would, unless [`Launched::keep_running`] was called.
impl Drop for Launched {
    fn drop(&mut self) {
        if self.release >= 0 {
            // Never let exec: it has not run a single instruction of the command.
            if self.done.is_none() {
                self.kill();
            }
        } else if !self.keep {
            self.terminate(KILL_GRACE);
        }
    }
}

fn signal_all(pids: &[u32], sig: libc::c_int) {
    for &p in pids {
        // SAFETY: sending a signal; a process that is gone gives ESRCH, ignored.
        unsafe { libc::kill(p as i32, sig) };
    }
}

/// Exit code of a raw wait status, the shell's way (128 + signal).
pub fn exit_code(status: i32) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_that_cannot_run_are_refused_before_the_fork() {
        assert!(find_in_path("sh").is_ok());
        assert_eq!(
            find_in_path("/etc/passwd"),
            Err("not executable (no execute permission)")
        );
        assert_eq!(find_in_path("/etc"), Err("not a regular file"));
        assert_eq!(find_in_path("/no/such/prog"), Err("no such file"));
        assert_eq!(
            find_in_path("no-such-command-here"),
            Err("command not found")
        );
    }

    #[test]
    fn terminate_ends_the_command_and_what_it_started() {
        // A shell that starts a background child and waits: SIGTERM to the shell alone
        // would leave the `sleep` running.
        let argv: Vec<String> = ["sh", "-c", "sleep 30 & sleep 30; wait"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut l = Launched::fork(&argv).unwrap();
        l.release();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut kids = Vec::new();
        while kids.len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            kids = procfs::descendants(l.pid);
        }
        assert_eq!(kids.len(), 2, "the shell's two sleeps: {kids:?}");
        assert_eq!(l.terminate(KILL_GRACE), Some(Stopped::Term));
        assert!(l.poll_exit().is_some());
        for k in kids {
            assert!(!procfs::alive(k), "{k} still runs");
        }
        // Already ended: nothing to do.
        assert_eq!(l.terminate(KILL_GRACE), None);
    }

    #[test]
    fn a_command_that_ignores_sigterm_is_killed_after_the_grace() {
        let argv: Vec<String> = ["sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut l = Launched::fork(&argv).unwrap();
        l.release();
        std::thread::sleep(Duration::from_millis(200));
        let t = Instant::now();
        assert_eq!(l.terminate(Duration::from_millis(300)), Some(Stopped::Kill));
        assert!(t.elapsed() >= Duration::from_millis(300));
        let st = l.poll_exit().expect("reaped");
        assert_eq!(exit_code(st), 128 + libc::SIGKILL);
    }
}
