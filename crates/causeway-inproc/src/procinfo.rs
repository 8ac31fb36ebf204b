//! Facts about the traced process a dump writes beside the calls: its threads' names,
//! command line and executable, and its executable mappings with build IDs (so a trace
//! can be symbolized again elsewhere).

use std::fs;

/// An executable file mapping of this process.
pub type MapEntry = causeway_procfs::Mapping;

/// Executable file mappings from `/proc/self/maps`.
pub fn exec_mappings() -> Vec<MapEntry> {
    causeway_procfs::maps::read_self()
        .map(|m| m.into_iter().filter(|m| m.is_exec_file()).collect())
        .unwrap_or_default()
}

/// The GNU build ID of an ELF file; empty if none.
pub fn build_id(path: &str) -> Vec<u8> {
    causeway_procfs::elf::build_id(std::path::Path::new(path)).unwrap_or_default()
}

/// A thread's name (`comm`), or empty.
pub fn thread_comm(tid: i32) -> String {
    fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
        .map(|s| s.trim_end().to_string())
        .unwrap_or_default()
}

/// This process's command line, one string per argument.
pub fn cmdline() -> Vec<String> {
    fs::read("/proc/self/cmdline")
        .unwrap_or_default()
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// Path of this process's executable.
pub fn exe() -> String {
    fs::read_link("/proc/self/exe")
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// Running `causeway record --flight` processes (to ask them to dump with us).
pub fn flight_recorders() -> Vec<i32> {
    let me = std::process::id();
    let Ok(rd) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| p != me)
        .filter(|&p| {
            let raw = fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = raw.split(|&b| b == 0).collect();
            args.first().is_some_and(|a| a.ends_with(b"causeway"))
                && args.contains(&&b"record"[..])
                && args.iter().any(|a| a.starts_with(b"--flight"))
        })
        .map(|p| p as i32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_executable_mappings_are_files() {
        let maps = exec_mappings();
        assert!(!maps.is_empty());
        assert!(maps.iter().all(|m| m.exec && m.path.starts_with('/')));
    }

    #[test]
    fn the_test_binary_has_a_build_id_or_none_without_panic() {
        let id = build_id(&exe());
        assert!(id.is_empty() || id.len() >= 8);
        assert_eq!(causeway_procfs::elf::build_id_of(b"not an elf"), None);
    }
}
