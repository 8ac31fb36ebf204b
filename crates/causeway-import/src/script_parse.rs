//! One line of `perf script` output to a typed, borrowed record.
//!
//! Expected layout (`perf script --ns -F comm,tid,pid,cpu,time,event,trace,ip,sym,symoff,dso
//! --show-task-events --show-mmap-events --show-lost-events`):
//!
//! ```text
//! consumer  5792/5798  [000]   520.741884693:       sched:sched_switch: prev_comm=...
//! \tffffffff821f5618 __schedule+0x618 ([kernel.kallsyms])
//! bash  1969/1969  [000]   520.736878810: PERF_RECORD_FORK(5800:5800):(1969:1969)
//! ```
//!
//! The sample head is `comm pid/tid [cpu] secs.frac:`; `comm` may contain spaces, `pid/`
//! may be absent (`-F tid`), the time may have 6 (µs) or 9 (`--ns`) fraction digits.
//! This module does not interpret tracepoint fields (see [`crate::tracepoint`]) or
//! callchain frames (see [`crate::callchain`]); it never allocates.

/// The common head of a sample or side-band line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Head<'a> {
    /// Thread name perf had for the thread at that time.
    pub comm: &'a str,
    /// Process id, if the `pid` field was printed and perf knew it.
    pub tgid: Option<u32>,
    /// Thread id; `None` if perf printed `-1` (it lost track of an exiting thread).
    pub tid: Option<u32>,
    /// CPU number.
    pub cpu: u32,
    /// Timestamp in nanoseconds.
    pub ts_ns: u64,
}

/// A parsed line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// Empty (ends a sample's callchain).
    Blank,
    /// A `#` comment (e.g. the header printed by `perf script --header`).
    Comment,
    /// A callchain line (indented); parsed later by [`crate::callchain`].
    Frame(&'a str),
    /// A sample: its head, event name and tracepoint text (trailing inline ip/sym removed).
    Sample(Head<'a>, &'a str, &'a str),
    /// A side-band record (`PERF_RECORD_...`).
    Record(Head<'a>, Record<'a>),
    /// Something else.
    Unparsed,
}

/// Side-band records printed by `--show-task-events`, `--show-mmap-events` and
/// `--show-lost-events`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Record<'a> {
    /// `PERF_RECORD_COMM[ exec]: comm:pid/tid`.
    Comm {
        comm: &'a str,
        tgid: u32,
        tid: u32,
        exec: bool,
    },
    /// `PERF_RECORD_FORK(pid:tid):(ppid:ptid)`.
    Fork {
        tgid: u32,
        tid: u32,
        parent_tgid: u32,
        parent_tid: u32,
    },
    /// `PERF_RECORD_EXIT(pid:tid):(ppid:ptid)`.
    Exit { tgid: u32, tid: u32 },
    /// `PERF_RECORD_MMAP[2] pid/tid: [0xstart(0xlen) @ 0xpgoff ...]: prot path`.
    /// `tgid` is `None` for the kernel (`-1`).
    Mmap {
        tgid: Option<u32>,
        start: u64,
        len: u64,
        pgoff: u64,
        exec: bool,
        path: &'a str,
    },
    /// `PERF_RECORD_LOST lost N` (or `PERF_RECORD_LOST_SAMPLES lost N`).
    Lost { count: u64 },
    /// Another record type, e.g. `PERF_RECORD_KSYMBOL` (name without the prefix).
    Other(&'a str),
    /// A known record type whose payload did not parse.
    Malformed,
}

/// Classify and parse one line (without its line terminator).
pub(crate) fn parse_line(line: &str) -> Line<'_> {
    if line.trim().is_empty() {
        return Line::Blank;
    }
    if line.starts_with('#') {
        return Line::Comment;
    }
    // perf indents callchain lines with a tab; sample lines of recordings without
    // callchains may start with spaces (right-aligned comm), so test those first.
    if line.starts_with('\t') {
        return Line::Frame(line);
    }
    if let Some((head, rest)) = parse_head(line) {
        let rest = rest.trim_start();
        if let Some(rec) = rest.strip_prefix("PERF_RECORD_") {
            return Line::Record(head, parse_record(rec));
        }
        let (event, trace) = match rest.find(": ") {
            Some(i) => (rest.get(..i).unwrap_or(""), rest.get(i + 2..).unwrap_or("")),
            None => (rest.trim_end().trim_end_matches(':'), ""),
        };
        if event.is_empty() || event.contains(' ') {
            return Line::Unparsed;
        }
        return Line::Sample(head, event, strip_inline_ip(trace.trim()));
    }
    if looks_like_frame(line) {
        return Line::Frame(line);
    }
    Line::Unparsed
}

/// A space-indented line whose first token is a hex address and has a symbol after it.
fn looks_like_frame(line: &str) -> bool {
    let t = line.trim_start();
    if t.len() == line.len() {
        return false;
    }
    let mut it = t.splitn(2, ' ');
    let addr = it.next().unwrap_or("");
    !addr.is_empty() && addr.bytes().all(|b| b.is_ascii_hexdigit()) && it.next().is_some()
}

/// Parse `comm pid/tid [cpu] secs.frac:` and return the head and the text after the colon.
fn parse_head(line: &str) -> Option<(Head<'_>, &str)> {
    let bytes = line.as_bytes();
    let mut search_from = 0;
    // Try each `[` as the start of the CPU field: comm itself may contain brackets.
    while let Some(off) = line.get(search_from..)?.find('[') {
        let open = search_from + off;
        search_from = open + 1;
        if let Some(r) = try_head_at(line, bytes, open) {
            return Some(r);
        }
    }
    None
}

fn try_head_at<'a>(line: &'a str, bytes: &[u8], open: usize) -> Option<(Head<'a>, &'a str)> {
    // [cpu]
    let mut i = open + 1;
    let cpu_start = i;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    if i == cpu_start || bytes.get(i) != Some(&b']') {
        return None;
    }
    let cpu: u32 = line.get(cpu_start..i)?.parse().ok()?;
    i += 1;
    // time
    while bytes.get(i) == Some(&b' ') {
        i += 1;
    }
    let t_start = i;
    while bytes
        .get(i)
        .is_some_and(|b| b.is_ascii_digit() || *b == b'.')
    {
        i += 1;
    }
    if bytes.get(i) != Some(&b':') {
        return None;
    }
    let ts_ns = parse_time_ns(line.get(t_start..i)?)?;
    let rest = line.get(i + 1..)?;
    // pid/tid or tid, right before the bracket
    let before = line.get(..open)?.trim_end();
    let tok_start = before.rfind(' ').map(|p| p + 1).unwrap_or(0);
    let tok = before.get(tok_start..)?;
    let (tgid, tid) = match tok.split_once('/') {
        Some((p, t)) => (head_pid(p)?, head_pid(t)?),
        None => (None, head_pid(tok)?),
    };
    let comm = before.get(..tok_start)?.trim();
    Some((
        Head {
            comm,
            tgid,
            tid,
            cpu,
            ts_ns,
        },
        rest,
    ))
}

/// A pid in a line head: `Some(None)` for perf's `-1` ("unknown").
fn head_pid(s: &str) -> Option<Option<u32>> {
    if s == "-1" {
        return Some(None);
    }
    s.parse().ok().map(Some)
}

/// A pid in a record; perf prints `-1` for "none", which we read as 0.
fn parse_pid(s: &str) -> Option<u32> {
    if s == "-1" {
        return Some(0);
    }
    s.parse().ok()
}

/// `520.741884693` (or `520.741884`, µs) to nanoseconds.
pub(crate) fn parse_time_ns(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    let secs: u64 = secs.parse().ok()?;
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut ns: u64 = 0;
    for b in frac.bytes() {
        ns = ns * 10 + u64::from(b - b'0');
    }
    for _ in frac.len()..9 {
        ns *= 10;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// Without `-g`, `-F ip,sym,dso` prints ` <hex> <sym> (<dso>)` at the end of the
/// tracepoint text; remove it. Tracepoint texts never end in a parenthesis preceded by
/// a hex token and a symbol, so this only strips what perf appended.
pub(crate) fn strip_inline_ip(trace: &str) -> &str {
    if !trace.ends_with(')') {
        return trace;
    }
    let Some(open) = matching_open_paren(trace) else {
        return trace;
    };
    let before = trace.get(..open).unwrap_or("").trim_end();
    // before = "<fields>   <hex> <sym>"
    let Some(sym_start) = before.rfind(' ') else {
        return trace;
    };
    let head = before.get(..sym_start).unwrap_or("").trim_end();
    let Some(addr_start) = head.rfind(' ').map(|p| p + 1) else {
        return trace;
    };
    let addr = head.get(addr_start..).unwrap_or("");
    if addr.is_empty() || !addr.bytes().all(|b| b.is_ascii_hexdigit()) {
        return trace;
    }
    head.get(..addr_start).unwrap_or("").trim_end()
}

/// Index of the `(` matching the final `)` of `s`.
pub(crate) fn matching_open_paren(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in s.bytes().enumerate().rev() {
        match b {
            b')' => depth += 1,
            b'(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The text after `PERF_RECORD_`.
fn parse_record(s: &str) -> Record<'_> {
    let name_end = s
        .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(s.len());
    let (name, rest) = s.split_at(name_end);
    let parsed = match name {
        "COMM" => parse_comm(rest),
        "FORK" => parse_task(rest).map(|(tgid, tid, parent_tgid, parent_tid)| Record::Fork {
            tgid,
            tid,
            parent_tgid,
            parent_tid,
        }),
        "EXIT" => parse_task(rest).map(|(tgid, tid, _, _)| Record::Exit { tgid, tid }),
        "MMAP" | "MMAP2" => parse_mmap(rest),
        "LOST" | "LOST_SAMPLES" => rest
            .split_whitespace()
            .last()
            .and_then(|n| n.parse().ok())
            .map(|count| Record::Lost { count }),
        _ => return Record::Other(name),
    };
    parsed.unwrap_or(Record::Malformed)
}

/// `: comm:pid/tid` or ` exec: comm:pid/tid`.
fn parse_comm(rest: &str) -> Option<Record<'_>> {
    let (exec, payload) = if let Some(p) = rest.strip_prefix(" exec: ") {
        (true, p)
    } else {
        (false, rest.strip_prefix(": ")?)
    };
    let payload = payload.trim_end();
    let (comm, ids) = payload.rsplit_once(':')?;
    let (p, t) = ids.split_once('/')?;
    Some(Record::Comm {
        comm,
        tgid: p.parse().ok()?,
        tid: t.parse().ok()?,
        exec,
    })
}

/// `(pid:tid):(ppid:ptid)`.
fn parse_task(rest: &str) -> Option<(u32, u32, u32, u32)> {
    let rest = rest.trim();
    let (a, b) = rest.split_once("):(")?;
    let a = a.strip_prefix('(')?;
    let b = b.strip_suffix(')')?;
    let (p, t) = a.split_once(':')?;
    let (pp, pt) = b.split_once(':')?;
    Some((parse_pid(p)?, parse_pid(t)?, parse_pid(pp)?, parse_pid(pt)?))
}

/// ` pid/tid: [0xstart(0xlen) @ 0xpgoff ...]: prot path`.
fn parse_mmap(rest: &str) -> Option<Record<'_>> {
    let rest = rest.trim_start();
    let (ids, rest) = rest.split_once(": [")?;
    let pid = ids.split('/').next()?;
    let tgid = if pid.starts_with('-') {
        None
    } else {
        Some(pid.parse().ok()?)
    };
    let (bracket, after) = rest.split_once("]: ")?;
    let (start, rest) = bracket.split_once('(')?;
    let (len, rest) = rest.split_once(')')?;
    let pgoff = rest.trim_start().strip_prefix("@ ")?.split(' ').next()?;
    let (prot, path) = after.split_once(' ')?;
    Some(Record::Mmap {
        tgid,
        start: parse_hex(start)?,
        len: parse_hex(len)?,
        pgoff: parse_hex(pgoff)?,
        exec: prot.contains('x'),
        path: path.trim(),
    })
}

/// Hex with or without `0x`; `0` alone is zero.
pub(crate) fn parse_hex(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits = s.strip_prefix("0x").unwrap_or(s);
    if digits.is_empty() {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_head_with_pid_tid() {
        let l = "consumer  5792/5798  [000]   520.741884693:       sched:sched_switch: prev_comm=consumer prev_pid=5798";
        let Line::Sample(h, ev, tr) = parse_line(l) else {
            panic!("not a sample: {:?}", parse_line(l));
        };
        assert_eq!(h.comm, "consumer");
        assert_eq!(h.tgid, Some(5792));
        assert_eq!(h.tid, Some(5798));
        assert_eq!(h.cpu, 0);
        assert_eq!(h.ts_ns, 520_741_884_693);
        assert_eq!(ev, "sched:sched_switch");
        assert_eq!(tr, "prev_comm=consumer prev_pid=5798");
    }

    #[test]
    fn comm_with_spaces_and_brackets_and_right_alignment() {
        let l = "    Web [x] Content  12/13  [001]   1.5: sched:sched_waking: comm=a pid=1 prio=120 target_cpu=001";
        let Line::Sample(h, _, _) = parse_line(l) else {
            panic!("not a sample");
        };
        assert_eq!(h.comm, "Web [x] Content");
        assert_eq!((h.tgid, h.tid, h.cpu), (Some(12), Some(13), 1));
        assert_eq!(h.ts_ns, 1_500_000_000);
    }

    #[test]
    fn microsecond_times_and_tid_only() {
        let l = "sh 42 [003] 10.000001: irq:softirq_entry: vec=1 [action=TIMER]";
        let Line::Sample(h, ev, tr) = parse_line(l) else {
            panic!("not a sample");
        };
        assert_eq!(
            (h.tgid, h.tid, h.cpu, h.ts_ns),
            (None, Some(42), 3, 10_000_001_000)
        );
        assert_eq!(ev, "irq:softirq_entry");
        assert_eq!(tr, "vec=1 [action=TIMER]");
    }

    #[test]
    fn exited_thread_heads() {
        let l = ":-1    -1/-1    [001]   520.742148864:  block:block_rq_complete: 254,0 WS () 1 + 8 [0]";
        let Line::Sample(h, ev, _) = parse_line(l) else {
            panic!("not a sample");
        };
        assert_eq!((h.comm, h.tgid, h.tid, h.cpu), (":-1", None, None, 1));
        assert_eq!(ev, "block:block_rq_complete");
        let l =
            ":-1  5802/-1    [001]   520.742145659:        irq:softirq_entry: vec=4 [action=BLOCK]";
        let Line::Sample(h, _, _) = parse_line(l) else {
            panic!("not a sample");
        };
        assert_eq!((h.tgid, h.tid), (Some(5802), None));
    }

    #[test]
    fn inline_ip_is_stripped() {
        let l = "              dd  8433/8433  [001]   630.095105868: syscalls:sys_enter_fsync: fd: 0x00000001     7faa24e4bc20 fsync+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)";
        let Line::Sample(_, ev, tr) = parse_line(l) else {
            panic!("not a sample");
        };
        assert_eq!(ev, "syscalls:sys_enter_fsync");
        assert_eq!(tr, "fd: 0x00000001");
        assert_eq!(
            strip_inline_ip("vec=1 [action=TIMER]"),
            "vec=1 [action=TIMER]"
        );
        assert_eq!(
            strip_inline_ip(
                "NR 59 = 0 ffffffff81415311 __traceiter_sys_exit+0x31 ([kernel.kallsyms])"
            ),
            "NR 59 = 0"
        );
    }

    #[test]
    fn frames_and_blank_lines() {
        assert_eq!(
            parse_line("\tffffffff821f5618 __schedule+0x618 ([kernel.kallsyms])"),
            Line::Frame("\tffffffff821f5618 __schedule+0x618 ([kernel.kallsyms])")
        );
        assert!(matches!(
            parse_line("      7f00 foo (/lib/x.so)"),
            Line::Frame(_)
        ));
        assert_eq!(parse_line(""), Line::Blank);
        assert_eq!(parse_line("# comment"), Line::Comment);
        assert_eq!(parse_line("garbage here"), Line::Unparsed);
    }

    #[test]
    fn side_band_records() {
        let rec = |l: &'static str| match parse_line(l) {
            Line::Record(_, r) => r,
            other => panic!("not a record: {other:?}"),
        };
        assert_eq!(
            rec("process_api     0/0     [000]     0.000000000: PERF_RECORD_COMM: process_api:1/1"),
            Record::Comm {
                comm: "process_api",
                tgid: 1,
                tid: 1,
                exec: false
            }
        );
        assert_eq!(
            rec("mkdir  5796/5796  [000]   520.729712540: PERF_RECORD_COMM exec: a:b:5796/5797"),
            Record::Comm {
                comm: "a:b",
                tgid: 5796,
                tid: 5797,
                exec: true
            }
        );
        assert_eq!(
            rec("bash  1969/1969  [000]   520.736878810: PERF_RECORD_FORK(5800:5801):(1969:1970)"),
            Record::Fork {
                tgid: 5800,
                tid: 5801,
                parent_tgid: 1969,
                parent_tid: 1970
            }
        );
        assert_eq!(
            rec("mkdir  5796/5796  [000]   520.733736871: PERF_RECORD_EXIT(5796:5796):(1969:1969)"),
            Record::Exit {
                tgid: 5796,
                tid: 5796
            }
        );
        assert_eq!(
            rec(
                "memfd:sealed-91     0/0     [000]     0.000000000: PERF_RECORD_MMAP2 1415/1415: [0x7ff8c694f000(0xd3000) @ 0xa000 00:01 2 0]: r-xp /memfd:sealed-91 (deleted)"
            ),
            Record::Mmap {
                tgid: Some(1415),
                start: 0x7ff8c694f000,
                len: 0xd3000,
                pgoff: 0xa000,
                exec: true,
                path: "/memfd:sealed-91 (deleted)"
            }
        );
        assert_eq!(
            rec(
                "swapper     0/0     [000]     0.000000000: PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x1206448) @ 0xffffffff81000000]: x [kernel.kallsyms]_text"
            ),
            Record::Mmap {
                tgid: None,
                start: 0xffffffff81000000,
                len: 0x1206448,
                pgoff: 0xffffffff81000000,
                exec: true,
                path: "[kernel.kallsyms]_text"
            }
        );
        assert_eq!(
            rec("perf  8539/8539  [001]   636.476810877: PERF_RECORD_LOST lost 10345"),
            Record::Lost { count: 10345 }
        );
        assert_eq!(
            rec("perf  1/1  [001]   6.4: PERF_RECORD_KSYMBOL addr ffffffffc0000000"),
            Record::Other("KSYMBOL")
        );
        assert_eq!(
            rec("perf  1/1  [001]   6.4: PERF_RECORD_FORK(x)"),
            Record::Malformed
        );
    }

    #[test]
    fn times() {
        assert_eq!(parse_time_ns("0.000000000"), Some(0));
        assert_eq!(parse_time_ns("1.000000001"), Some(1_000_000_001));
        assert_eq!(parse_time_ns("3"), Some(3_000_000_000));
        assert_eq!(parse_time_ns("1.0000000001"), None);
        assert_eq!(parse_time_ns("99999999999999999999.0"), None);
    }

    #[test]
    fn no_panic_on_odd_input() {
        for l in [
            "[",
            "]",
            "x [1",
            "x [1]",
            "x [1] 2",
            "x 1/ [1] 2.0:",
            "x a/b [1] 2.0: e: t",
            "x 1/1 [1] 2.0:",
            "x 1/1 [1] 2.0: PERF_RECORD_",
            "x 1/1 [1] 2.0: PERF_RECORD_MMAP2 1/1: [",
            "\u{e9}\u{e9} 1/1 [1] 2.0: e: \u{e9})",
            ")",
            "(()",
            "x 1/1 [99999999999] 1.0: a: b",
        ] {
            let _ = parse_line(l);
            let _ = strip_inline_ip(l);
        }
    }
}
