//! Which process title names a thread in the report.
//!
//! Servers retitle their processes (`server: walwriter`, `server: user db idle`), and
//! that title says what each process does where the thread name (`server`) does not.
//! A title is shown only for the only thread of a process (a title names the process,
//! not one of its threads: `VM Thread` says more than the JVM's command line) and only
//! when the program set it itself: a plain command line (`/usr/bin/prog --port 80`)
//! only repeats the executable's name, which the thread name already gives, and would
//! make every label long.

use causeway_model::Model;
use causeway_model::{Facts, Thread};

/// Longest title shown, in characters: longer ones are cut with `…`.
const MAX_CHARS: usize = 60;

/// The title to show for thread `t`, if any (see the module doc).
pub(crate) fn of_thread(t: &Thread, model: &Model, facts: &Facts) -> Option<String> {
    let g = t.tgid?;
    let p = model.process(g)?;
    if p.threads.len() != 1 || t.tid.0 != g.0 {
        return None;
    }
    shown(facts.title(g)?, p.exe(), &t.comm)
}

/// `title` if the program set it itself: not empty, not the thread name, and not a
/// command line whose first word is the executable (by its file name, or by the
/// thread name, which the kernel sets from the executable's first 15 bytes).
pub(crate) fn shown(title: &str, exe: &str, comm: &str) -> Option<String> {
    let title = title.trim();
    let first = title.split_whitespace().next()?;
    let base = first.rsplit('/').next().unwrap_or(first);
    let exe_base = exe.rsplit('/').next().unwrap_or(exe);
    let plain = (!exe_base.is_empty() && base == exe_base)
        || base == comm
        || (comm.len() == 15 && base.starts_with(comm));
    if title == comm || plain {
        return None;
    }
    Some(cut(title))
}

fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_CHARS - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn a_title_the_program_set_is_shown() {
        let s = |t| shown(t, "/usr/lib/server/bin/server", "server");
        assert_eq!(s("server: walwriter").as_deref(), Some("server: walwriter"));
        assert_eq!(
            s("server: user db 127.0.0.1(4242) idle").as_deref(),
            Some("server: user db 127.0.0.1(4242) idle")
        );
    }

    #[test]
    fn a_plain_command_line_or_the_thread_name_is_not() {
        assert_eq!(
            shown("/usr/bin/prog --port 80", "/usr/bin/prog", "prog"),
            None
        );
        assert_eq!(shown("./prog -v", "/home/u/prog", "worker"), None);
        // An interpreter: the executable is python3.11, argv[0] the name it was run by.
        assert_eq!(
            shown("python3 app.py", "/usr/bin/python3.11", "python3"),
            None
        );
        // The thread name is the executable's name cut to 15 bytes.
        assert_eq!(
            shown("/opt/a-very-long-program-name x", "", "a-very-long-pro"),
            None
        );
        assert_eq!(shown("worker", "/bin/x", "worker"), None);
        assert_eq!(shown("   ", "/bin/x", "x"), None);
    }

    #[test]
    fn long_titles_are_cut() {
        let t = format!("server: {}", "x".repeat(80));
        let s = shown(&t, "/bin/server", "server").unwrap();
        assert_eq!(s.chars().count(), 60);
        assert!(s.ends_with('…'));
    }
}
