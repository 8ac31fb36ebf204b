//! Programs started through the dynamic loader (`/lib64/ld-linux-x86-64.so.2 PROG`,
//! as container images and relocated installs do): the kernel names such a process
//! after the file it executed, the loader, so every one of them would read
//! `ld-linux-x86-64`. Its threads are named after the program the loader ran instead,
//! as the kernel would have named them had the program been executed directly (its
//! file name, cut to the kernel's 15 bytes); a thread that renamed itself keeps its
//! own name.

/// The loader's options that take a value (glibc's `ld.so --help`).
const WITH_VALUE: &[&str] = &[
    "--library-path",
    "--preload",
    "--audit",
    "--argv0",
    "--inhibit-rpath",
    "--glibc-hwcaps-prepend",
    "--glibc-hwcaps-mask",
];

/// Whether `comm` is the name the kernel gives a process that executed a dynamic
/// loader (glibc's `ld-linux-*.so.N`, `ld.so`, musl's `ld-musl-*`, `ld64.so.N`).
pub(crate) fn is_loader(comm: &str) -> bool {
    comm.starts_with("ld-linux")
        || comm.starts_with("ld-musl")
        || comm.starts_with("ld64.so")
        || comm == "ld.so"
}

/// The name a thread called `comm` goes by when its process's command line is
/// `cmdline` (arguments separated by spaces): the program's file name if `comm` is
/// a loader's and the command line names the program the loader ran, else `None`.
pub(crate) fn program_name(comm: &str, cmdline: &str) -> Option<String> {
    if !is_loader(comm) {
        return None;
    }
    let mut args = cmdline.split_whitespace();
    let first = args.next()?;
    // The command line must be the loader's own (its file name starts like `comm`).
    let base = first.rsplit('/').next().unwrap_or(first);
    if !base.starts_with(comm) && !comm.starts_with(base) {
        return None;
    }
    while let Some(a) = args.next() {
        if WITH_VALUE.contains(&a) {
            args.next();
        } else if a.starts_with("--") {
            // A flag (--inhibit-cache) or --opt=value.
        } else {
            let name = a.rsplit('/').next().unwrap_or(a);
            return (!name.is_empty()).then(|| cut(name, 15));
        }
    }
    None
}

/// `s` cut to at most `n` bytes on a character boundary (the kernel keeps 15).
fn cut(s: &str, n: usize) -> String {
    let mut end = s.len().min(n);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loader_started_program_is_named_after_the_program() {
        let cmd = "/opt/app/lib/ld-linux-x86-64.so.2 --library-path /opt/app/lib \
                   /opt/app/bin/beanstalkd -b /var/lib/beanstalkd -f0";
        assert_eq!(
            program_name("ld-linux-x86-64", cmd).as_deref(),
            Some("beanstalkd")
        );
        assert_eq!(
            program_name(
                "ld-linux-x86-64",
                "/lib64/ld-linux-x86-64.so.2 --inhibit-cache --argv0 x /usr/sbin/a-long-server-name"
            )
            .as_deref(),
            Some("a-long-server-n"),
            "cut to 15 bytes as the kernel does"
        );
        assert_eq!(
            program_name("ld-musl-x86_64.", "/lib/ld-musl-x86_64.so.1 /app/srv").as_deref(),
            Some("srv")
        );
    }

    #[test]
    fn other_names_and_lines_are_left_alone() {
        // Not a loader's name: a thread that renamed itself keeps it.
        assert_eq!(
            program_name("server-0", "/lib64/ld-linux-x86-64.so.2 /x/srv"),
            None
        );
        // The loader run with no program (`--list`, `--help`) or a command line
        // rewritten by the program (a title without the loader).
        assert_eq!(
            program_name("ld-linux-x86-64", "/lib64/ld-linux-x86-64.so.2 --help"),
            None
        );
        assert_eq!(
            program_name("ld-linux-x86-64", "postgres: checkpointer"),
            None
        );
        assert_eq!(program_name("ld-linux-x86-64", ""), None);
    }
}
