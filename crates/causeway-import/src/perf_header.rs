//! The perf.data header as `perf script --header-only` (or `perf script --header`)
//! prints it: `# key : value` lines.
//!
//! This module only reads the handful of keys a causeway [`Header`] needs (host name,
//! kernel release, architecture, CPU count, the recording command line) and the list
//! of recorded events with their sample types. It does not read perf.data bytes itself:
//! perf does that.

use causeway_format::{ClockSource, Header, HostInfo};

/// The value of [`Header::writer`] for imported traces.
pub const WRITER: &str = concat!("causeway-import ", env!("CARGO_PKG_VERSION"));

/// One `# event : name = ..., sample_type = ...` line of the header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfEventDesc {
    /// Event name, e.g. `sched:sched_switch`.
    pub name: String,
    /// Sample type bits as perf prints them (`IP`, `TID`, `CALLCHAIN`, ...).
    pub sample_type: Vec<String>,
}

impl PerfEventDesc {
    /// True if samples of this event carry a callchain (`perf record -g`).
    pub fn has_callchain(&self) -> bool {
        self.sample_type.iter().any(|s| s == "CALLCHAIN")
    }
}

/// What the header of a perf recording says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfHeader {
    /// `# hostname`.
    pub hostname: String,
    /// `# os release` (`uname -r` of the recording host).
    pub os_release: String,
    /// `# arch`.
    pub arch: String,
    /// `# perf version`.
    pub perf_version: String,
    /// `# nrcpus avail`.
    pub nr_cpus_avail: Option<u32>,
    /// `# nrcpus online`.
    pub nr_cpus_online: Option<u32>,
    /// `# cmdline`, split at white space (perf stores it without the user's quoting).
    pub cmdline: Vec<String>,
    /// Recorded events, in header order.
    pub events: Vec<PerfEventDesc>,
}

impl PerfHeader {
    /// Parse the header lines of `text`; lines that are not `# key : value` are skipped.
    pub fn parse(text: &str) -> PerfHeader {
        let mut h = PerfHeader::default();
        for line in text.lines() {
            h.parse_line(line);
        }
        h
    }

    /// Take one header line into account (ignored unless it is a known `# key : value`).
    pub fn parse_line(&mut self, line: &str) {
        let Some(rest) = line.strip_prefix('#') else {
            return;
        };
        let Some((key, value)) = rest.split_once(" : ") else {
            return;
        };
        let value = value.trim();
        match key.trim() {
            "hostname" => self.hostname = value.to_string(),
            "os release" => self.os_release = value.to_string(),
            "arch" => self.arch = value.to_string(),
            "perf version" => self.perf_version = value.to_string(),
            "nrcpus avail" => self.nr_cpus_avail = value.parse().ok(),
            "nrcpus online" => self.nr_cpus_online = value.parse().ok(),
            "cmdline" => self.cmdline = value.split_whitespace().map(str::to_string).collect(),
            "event" => self.events.push(parse_event_desc(value)),
            _ => {}
        }
    }

    /// True if an event of this exact name was recorded.
    pub fn has_event(&self, name: &str) -> bool {
        self.events.iter().any(|e| e.name == name)
    }

    /// True if any recorded event carries callchains (or the header lists no events,
    /// in which case callchains are assumed possible).
    pub fn any_callchain(&self) -> bool {
        self.events.is_empty() || self.events.iter().any(PerfEventDesc::has_callchain)
    }

    /// The causeway header for a trace imported from this recording: perf's clock, the
    /// recording host and CPU count (0 if the header does not say), and the recording
    /// command line.
    pub fn to_header(&self) -> Header {
        Header {
            clock: ClockSource::Perf,
            // perf.data (before perf 6.x `-k`/clock data) does not relate its clock to
            // wall time or CLOCK_MONOTONIC precisely enough to state an offset.
            clock_to_realtime_ns: 0,
            clock_to_monotonic_ns: 0,
            host: HostInfo {
                hostname: self.hostname.clone(),
                kernel_release: self.os_release.clone(),
                arch: self.arch.clone(),
                ..Default::default()
            },
            cpu_count: self.nr_cpus_avail.or(self.nr_cpus_online).unwrap_or(0),
            command_line: self.cmdline.clone(),
            writer: WRITER.to_string(),
            // perf records are imported system-wide (`perf record -a`).
            scope: causeway_format::Scope::System,
            target_pids: Vec::new(),
            target_comm: None,
            file_id: 0,
            salvaged: None,
            waker_stack_sampling: None,
        }
    }

    /// Fill the fields of `h` that are empty (or zero) from this header.
    pub(crate) fn fill_missing(&self, h: &mut Header) {
        let mine = self.to_header();
        if h.host.hostname.is_empty() {
            h.host.hostname = mine.host.hostname;
        }
        if h.host.kernel_release.is_empty() {
            h.host.kernel_release = mine.host.kernel_release;
        }
        if h.host.arch.is_empty() {
            h.host.arch = mine.host.arch;
        }
        if h.cpu_count == 0 {
            h.cpu_count = mine.cpu_count;
        }
        if h.command_line.is_empty() {
            h.command_line = mine.command_line;
        }
    }
}

/// `name = sched:sched_switch, , id = { 29, 30 }, ..., sample_type = IP|TID|..., ...`
fn parse_event_desc(value: &str) -> PerfEventDesc {
    let field = |key: &str| -> Option<&str> {
        let start = value.find(key)? + key.len();
        let rest = value.get(start..)?;
        Some(rest.split(',').next().unwrap_or("").trim())
    };
    PerfEventDesc {
        name: field("name = ").unwrap_or("").to_string(),
        sample_type: field("sample_type = ")
            .map(|s| s.split('|').map(|b| b.trim().to_string()).collect())
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
# ========
# captured on    : Sun Nov 22 00:20:29 2026
# hostname : vm
# os release : 6.18.44-fc-v445
# perf version : 6.1.187
# arch : x86_64
# nrcpus online : 2
# nrcpus avail : 2
# cmdline : /usr/bin/perf record -o bw.data -e sched:sched_switch -e irq:* -g -a -- sleep 1 
# event : name = sched:sched_switch, , id = { 29, 30 }, type = 2, size = 128, config = 0x174, { sample_period, sample_freq } = 1, sample_type = IP|TID|TIME|CALLCHAIN|CPU|PERIOD|RAW|IDENTIFIER, read_format = ID|LOST, disabled = 1
# event : name = dummy:HG, , id = { 61, 62 }, type = 1, size = 128, config = 0x9, { sample_period, sample_freq } = 1, sample_type = IP|TID|TIME|CPU|IDENTIFIER, read_format = ID|LOST
# ========
#
";

    #[test]
    fn parses_host_cpus_cmdline_and_events() {
        let h = PerfHeader::parse(SAMPLE);
        assert_eq!(h.hostname, "vm");
        assert_eq!(h.os_release, "6.18.44-fc-v445");
        assert_eq!(h.arch, "x86_64");
        assert_eq!(h.nr_cpus_avail, Some(2));
        assert_eq!(h.cmdline.first().map(String::as_str), Some("/usr/bin/perf"));
        assert_eq!(h.cmdline.last().map(String::as_str), Some("1"));
        assert_eq!(h.events.len(), 2);
        assert!(h.has_event("sched:sched_switch"));
        assert!(h.events[0].has_callchain());
        assert!(!h.events[1].has_callchain());
        let hdr = h.to_header();
        assert_eq!(hdr.clock, ClockSource::Perf);
        assert_eq!(hdr.cpu_count, 2);
        assert_eq!(hdr.writer, WRITER);
        assert_eq!(hdr.host.hostname, "vm");
    }

    #[test]
    fn garbage_is_ignored() {
        let h = PerfHeader::parse("# nrcpus avail : many\nnot a header\n# : \n#");
        assert_eq!(h, PerfHeader::default());
    }
}
