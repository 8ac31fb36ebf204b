//! perf.data read directly (the `linux-perf-data` crate), without running perf: the
//! header's host facts and event list, the tracepoint records decoded through the
//! formats perf stored in the file ([`crate::tracefmt`], this machine's tracefs as a
//! fallback), callchains named by [`crate::native_syms`], and the side-band records
//! (COMM, FORK, EXIT, MMAP, LOST). Everything goes through the same converter as
//! `perf script` text, as the same typed values.

use crate::callchain::FrameLine;
use crate::convert::Converter;
use crate::error::ImportError;
use crate::native_syms::{KERNEL_DSO, Symbols, is_kernel_addr};
use crate::options::ImportOptions;
use crate::perf_header::PerfHeader;
use crate::script_parse::{Head, Record};
use crate::summary::ImportSummary;
use crate::tracefmt::{Format, RawRecord, from_tracefs, parse_formats};
use crate::tracepoint::Parsed;
use causeway_format::TraceWriter;
use linux_perf_data::linux_perf_event_reader::{EventRecord, PerfEventType, SampleRecord};
use linux_perf_data::{Feature, PerfFileReader, PerfFileRecord};
// Fx rather than SipHash: hashed for every frame of every sample (addresses and ids).
use rustc_hash::FxHashMap as HashMap;
use std::io::{BufReader, Write};
use std::path::Path;

/// Callchain entries at and above this are context markers (`PERF_CONTEXT_*`).
const CONTEXT_MARKERS: u64 = 0xffff_ffff_ffff_f000;
/// `PROT_EXEC` in an MMAP2 record's protection.
const PROT_EXEC: u32 = 4;

fn bad(path: &Path, e: impl std::fmt::Display) -> ImportError {
    ImportError::Io {
        what: format!("reading perf data {}", path.display()),
        source: std::io::Error::other(e.to_string()),
    }
}

/// What each event of the file is: its name and, for a tracepoint, its format.
struct Events {
    names: Vec<String>,
    formats: Vec<Option<Format>>,
}

fn events(perf_file: &linux_perf_data::PerfFile) -> Events {
    let stored = perf_file
        .feature_section_data(Feature::TRACING_DATA)
        .map(|b| parse_formats(&String::from_utf8_lossy(b)))
        .unwrap_or_default();
    let mut names = Vec::new();
    let mut formats = Vec::new();
    for a in perf_file.event_attributes() {
        let name = a.name.clone().unwrap_or_default();
        let format = match a.attr.type_ {
            PerfEventType::Tracepoint(id) => {
                stored.get(&id).cloned().or_else(|| from_tracefs(&name))
            }
            _ => None,
        };
        names.push(name);
        formats.push(format);
    }
    Events { names, formats }
}

fn header(perf_file: &linux_perf_data::PerfFile, names: &[String]) -> PerfHeader {
    let s = |r: Result<Option<&str>, _>| r.ok().flatten().unwrap_or("").to_string();
    let cpus = perf_file.nr_cpus().ok().flatten();
    PerfHeader {
        hostname: s(perf_file.hostname()),
        os_release: s(perf_file.os_release()),
        arch: s(perf_file.arch()),
        perf_version: s(perf_file.perf_version()),
        nr_cpus_avail: cpus.map(|c| c.nr_cpus_available),
        nr_cpus_online: cpus.map(|c| c.nr_cpus_online),
        cmdline: perf_file
            .cmdline()
            .ok()
            .flatten()
            .map(|v| v.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default(),
        events: names
            .iter()
            .map(|n| crate::perf_header::PerfEventDesc {
                name: n.clone(),
                sample_type: Vec::new(),
            })
            .collect(),
    }
}

/// The importer's state besides the converter: thread names and mappings.
struct Reader<W: Write> {
    conv: Converter<W>,
    syms: Symbols,
    comms: HashMap<u32, String>,
    opts: ImportOptions,
}

impl<W: Write> Reader<W> {
    fn sample(&mut self, ev: &Events, idx: usize, s: &SampleRecord<'_>) -> Result<(), ImportError> {
        let tid = s.tid.and_then(|t| u32::try_from(t).ok());
        let pid = s.pid.and_then(|p| u32::try_from(p).ok());
        let event = ev.names.get(idx).map_or("", String::as_str);
        let raw = s.raw.as_ref().map(|r| r.as_slice());
        let parsed = match (ev.formats.get(idx).and_then(Option::as_ref), raw.as_deref()) {
            (Some(format), Some(data)) => crate::native_tp::decode(
                event,
                &RawRecord { data, format },
                self.opts.keep_syscall_args,
            ),
            _ => Parsed::Ignored,
        };
        let comm = tid
            .and_then(|t| self.comms.get(&t))
            .map_or("", String::as_str);
        let head = Head {
            comm,
            tgid: pid,
            tid,
            cpu: s.cpu.unwrap_or(0),
            ts_ns: s.timestamp.unwrap_or(0),
        };
        self.conv.typed_sample(head, event, parsed)?;
        let Some(chain) = &s.callchain else {
            return Ok(());
        };
        if !self.opts.stacks {
            return Ok(());
        }
        let pid = pid.unwrap_or(0);
        let mut leaf = true;
        for i in 0..chain.len() {
            let Some(addr) = chain.get(i) else { break };
            if addr >= CONTEXT_MARKERS {
                continue;
            }
            let sym = self.syms.resolve(pid, addr, leaf);
            leaf = false;
            let dso = if sym.dso.is_empty() && is_kernel_addr(addr) {
                KERNEL_DSO
            } else {
                sym.dso.as_str()
            };
            let f = FrameLine {
                addr,
                symbol: if sym.symbol.is_empty() {
                    "[unknown]"
                } else {
                    &sym.symbol
                },
                offset: sym.offset,
                dso,
            };
            self.conv.typed_frame(&f);
        }
        Ok(())
    }

    fn side(&mut self, head: Head<'_>, rec: EventRecord<'_>) -> Result<(), ImportError> {
        let id = |v: i32| u32::try_from(v).ok();
        match rec {
            EventRecord::Comm(c) => {
                let name = String::from_utf8_lossy(&c.name.as_slice()).into_owned();
                let (Some(tgid), Some(tid)) = (id(c.pid), id(c.tid)) else {
                    return Ok(());
                };
                if c.is_execve {
                    self.syms.exec(tgid);
                }
                self.comms.insert(tid, name.clone());
                let rec = Record::Comm {
                    comm: &name,
                    tgid,
                    tid,
                    exec: c.is_execve,
                };
                self.conv.typed_record(head, rec)
            }
            EventRecord::Fork(f) => {
                let (Some(tgid), Some(tid), Some(ptgid), Some(ptid)) =
                    (id(f.pid), id(f.tid), id(f.ppid), id(f.ptid))
                else {
                    return Ok(());
                };
                if let Some(c) = self.comms.get(&ptid).cloned() {
                    self.comms.entry(tid).or_insert(c);
                }
                self.syms.fork(ptgid, tgid);
                let rec = Record::Fork {
                    tgid,
                    tid,
                    parent_tgid: ptgid,
                    parent_tid: ptid,
                };
                self.conv.typed_record(head, rec)
            }
            EventRecord::Exit(f) => match (id(f.pid), id(f.tid)) {
                (Some(tgid), Some(tid)) => self.conv.typed_record(head, Record::Exit { tgid, tid }),
                _ => Ok(()),
            },
            EventRecord::Mmap(m) if m.is_executable => {
                let path = String::from_utf8_lossy(&m.path.as_slice()).into_owned();
                self.mapping(head, id(m.pid), m.address, m.length, m.page_offset, &path)
            }
            EventRecord::Mmap2(m) if m.protection & PROT_EXEC != 0 => {
                let path = String::from_utf8_lossy(&m.path.as_slice()).into_owned();
                self.mapping(head, id(m.pid), m.address, m.length, m.page_offset, &path)
            }
            EventRecord::Lost(l) => self
                .conv
                .typed_record(head, Record::Lost { count: l.count }),
            _ => Ok(()),
        }
    }

    fn mapping(
        &mut self,
        head: Head<'_>,
        tgid: Option<u32>,
        start: u64,
        len: u64,
        pgoff: u64,
        path: &str,
    ) -> Result<(), ImportError> {
        if let Some(p) = tgid {
            self.syms.map(p, start, len, pgoff, path);
        }
        let rec = Record::Mmap {
            tgid,
            start,
            len,
            pgoff,
            exec: true,
            path,
        };
        self.conv.typed_record(head, rec)
    }
}

/// Convert a perf.data file into a trace written to `out`, reading the file directly.
pub fn import_perf_data_native<W: Write>(
    path: impl AsRef<Path>,
    out: W,
    opts: &ImportOptions,
) -> Result<(W, ImportSummary), ImportError> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(|source| ImportError::Io {
        what: format!("cannot open perf data {}", path.display()),
        source,
    })?;
    let PerfFileReader {
        mut perf_file,
        mut record_iter,
    } = PerfFileReader::parse_file(BufReader::with_capacity(1 << 20, file))
        .map_err(|e| bad(path, e))?;
    let ev = events(&perf_file);
    let header = header(&perf_file, &ev.names).to_header();
    let mut r = Reader {
        conv: Converter::new(TraceWriter::new(out, &header)?, opts),
        syms: Symbols::default(),
        comms: HashMap::default(),
        opts: opts.clone(),
    };
    while let Some(rec) = record_iter
        .next_record(&mut perf_file)
        .map_err(|e| bad(path, e))?
    {
        let PerfFileRecord::EventRecord { attr_index, record } = rec else {
            continue;
        };
        let common = record.common_data().ok();
        let parsed = match record.parse() {
            Ok(p) => p,
            Err(_) => {
                r.conv.count_skipped_line();
                continue;
            }
        };
        if let EventRecord::Sample(s) = &parsed {
            r.sample(&ev, attr_index, s)?;
            continue;
        }
        let head = Head {
            comm: "",
            tgid: None,
            tid: None,
            cpu: common.as_ref().and_then(|c| c.cpu).unwrap_or(0),
            ts_ns: common.as_ref().and_then(|c| c.timestamp).unwrap_or(0),
        };
        r.side(head, parsed)?;
    }
    r.conv.finish()
}
