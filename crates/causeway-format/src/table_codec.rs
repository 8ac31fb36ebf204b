//! Byte layout of table rows inside table blocks.
//!
//! Each row is a varint length followed by its fields, so a newer minor version can
//! append fields that an older reader skips.

use crate::bytes::{ByteReader, ByteWriter, ReadFail};
use crate::cgroups::{CgroupRow, CpuSample, MemorySample, PressureResource, PressureSample};
use crate::ids::{FrameId, StringId, Tgid, Tid, Timestamp};
use crate::tables::{Frame, FrameSpace, InlinedFrame, Mapping, ProcessInfo, Stack, ThreadInfo};

/// A table row type that can be written to and read from a table block.
pub trait Row: Sized {
    /// Encode the fields (without the length prefix).
    fn encode(&self, w: &mut ByteWriter);
    /// Decode the fields from exactly the row's bytes.
    fn decode(r: &mut ByteReader<'_>) -> Result<Self, ReadFail>;
}

/// Append a row with its length prefix.
pub fn put_row<T: Row>(w: &mut ByteWriter, scratch: &mut ByteWriter, row: &T) {
    scratch.buf.clear();
    row.encode(scratch);
    w.bytes(&scratch.buf);
}

/// Read a length-prefixed row.
pub fn get_row<T: Row>(r: &mut ByteReader<'_>) -> Result<T, ReadFail> {
    let body = r.bytes()?;
    T::decode(&mut ByteReader::new(body))
}

impl Row for String {
    fn encode(&self, w: &mut ByteWriter) {
        w.buf.extend_from_slice(self.as_bytes());
    }
    fn decode(r: &mut ByteReader<'_>) -> Result<Self, ReadFail> {
        let b = r.take(r.remaining())?;
        std::str::from_utf8(b)
            .map(str::to_owned)
            .map_err(|_| ReadFail::BadUtf8)
    }
}

impl Row for ThreadInfo {
    fn encode(&self, w: &mut ByteWriter) {
        w.varint(self.tid.0 as u64);
        w.varint(self.tgid.0 as u64);
        w.varint(self.since.0);
        w.varint(self.comm.0 as u64);
    }
    fn decode(r: &mut ByteReader<'_>) -> Result<Self, ReadFail> {
        Ok(ThreadInfo {
            tid: Tid(r.varint_u32()?),
            tgid: Tgid(r.varint_u32()?),
            since: Timestamp(r.varint()?),
            comm: StringId(r.varint_u32()?),
        })
    }
}

impl Row for ProcessInfo {
    fn encode(&self, w: &mut ByteWriter) {
        w.varint(self.tgid.0 as u64);
        w.varint(self.parent.map_or(0, |p| p.0 as u64 + 1));
        w.varint(self.since.0);
        w.varint(self.exe.0 as u64);
        w.varint(self.cmdline.0 as u64);
    }
    fn decode(r: &mut ByteReader<'_>) -> Result<Self, ReadFail> {
        let tgid = Tgid(r.varint_u32()?);
        let parent = match r.varint()? {
            0 => None,
            p => Some(Tgid(u32::try_from(p - 1).map_err(|_| ReadFail::BadVarint)?)),
        };
        Ok(ProcessInfo {
            tgid,
            parent,
            since: Timestamp(r.varint()?),
            exe: StringId(r.varint_u32()?),
            cmdline: StringId(r.varint_u32()?),
        })
    }
}

impl Row for Mapping {
    fn encode(&self, w: &mut ByteWriter) {
        w.varint(self.tgid.0 as u64);
        w.varint(self.since.0);
        w.varint(self.start);
        w.varint(self.end);
        w.varint(self.file_offset);
        w.varint(self.path.0 as u64);
        w.bytes(&self.build_id);
    }
    fn decode(r: &mut ByteReader<'_>) -> Result<Self, ReadFail> {
        Ok(Mapping {
            tgid: Tgid(r.varint_u32()?),
            since: Timestamp(r.varint()?),
            start: r.varint()?,
            end: r.varint()?,
            file_offset: r.varint()?,
            path: StringId(r.varint_u32()?),
            build_id: r.bytes()?.to_vec(),
        })
    }
}

impl Row for Frame {
    fn encode(&self, w: &mut ByteWriter) {
        // Space: 0 = kernel, tgid + 1 = user.
        w.varint(match self.space {
            FrameSpace::Kernel => 0,
            FrameSpace::User { tgid } => tgid.0 as u64 + 1,
        });
        w.varint(self.addr);
        w.varint(self.module.0 as u64);
        w.varint(self.symbol.0 as u64);
        w.varint(self.sym_offset);
        // Source information (format 1.1) only when there is some, so frames without
        // it keep the 1.0 bytes.
        if self.file.0 != 0 || self.line != 0 || !self.inlined.is_empty() {
            w.varint(self.file.0 as u64);
            w.varint(self.line as u64);
            w.varint(self.inlined.len() as u64);
            for i in &self.inlined {
                w.varint(i.symbol.0 as u64);
                w.varint(i.file.0 as u64);
                w.varint(i.line as u64);
            }
        }
    }
    fn decode(r: &mut ByteReader<'_>) -> Result<Self, ReadFail> {
        let space = match r.varint()? {
            0 => FrameSpace::Kernel,
            t => FrameSpace::User {
                tgid: Tgid(u32::try_from(t - 1).map_err(|_| ReadFail::BadVarint)?),
            },
        };
        let mut f = Frame::new(
            space,
            r.varint()?,
            StringId(r.varint_u32()?),
            StringId(r.varint_u32()?),
            r.varint()?,
        );
        if r.remaining() > 0 {
            f.file = StringId(r.varint_u32()?);
            f.line = r.varint_u32()?;
            let n = r.varint()?;
            // Each inlined entry takes at least three bytes.
            if n > r.remaining() as u64 / 3 {
                return Err(ReadFail::Eof);
            }
            for _ in 0..n {
                f.inlined.push(InlinedFrame {
                    symbol: StringId(r.varint_u32()?),
                    file: StringId(r.varint_u32()?),
                    line: r.varint_u32()?,
                });
            }
        }
        Ok(f)
    }
}

impl Row for Stack {
    fn encode(&self, w: &mut ByteWriter) {
        w.u8(self.truncated as u8);
        w.varint(self.frames.len() as u64);
        for f in &self.frames {
            w.varint(f.0 as u64);
        }
    }
    fn decode(r: &mut ByteReader<'_>) -> Result<Self, ReadFail> {
        let truncated = r.u8()? != 0;
        let n = r.varint()?;
        // Each frame takes at least one byte: cap the allocation by what is left.
        if n > r.remaining() as u64 {
            return Err(ReadFail::Eof);
        }
        let mut frames = Vec::with_capacity(n as usize);
        for _ in 0..n {
            frames.push(FrameId(r.varint_u32()?));
        }
        Ok(Stack { frames, truncated })
    }
}

/// Flow rows (format 1.4): family, protocol, then each end as its 16 address bytes and
/// its port.
impl Row for crate::sockets::Flow {
    fn encode(&self, w: &mut ByteWriter) {
        w.varint(self.family.0 as u64);
        w.varint(self.proto.0 as u64);
        for e in [&self.local, &self.remote] {
            w.buf.extend_from_slice(&e.addr);
            w.varint(e.port as u64);
        }
    }
    fn decode(r: &mut ByteReader<'_>) -> Result<Self, ReadFail> {
        use crate::sockets::{Endpoint, SockFamily, SockProto};
        let family = SockFamily(r.varint_u16()?);
        let proto = SockProto(r.varint_u16()?);
        let mut end = || -> Result<Endpoint, ReadFail> {
            let mut addr = [0u8; 16];
            addr.copy_from_slice(r.take(16)?);
            Ok(Endpoint {
                addr,
                port: r.varint_u16()?,
            })
        };
        let local = end()?;
        let remote = end()?;
        Ok(crate::sockets::Flow {
            family,
            proto,
            local,
            remote,
        })
    }
}

/// Tags of the cgroup rows (format 1.7).
const TAG_MEMBER: u8 = 1;
const TAG_CPU: u8 = 2;
const TAG_MEMORY_MEMBER: u8 = 3;
const TAG_MEMORY: u8 = 4;
/// Tags added in 1.8.
const TAG_AFFINITY: u8 = 5;
const TAG_IDLE: u8 = 6;
/// Tags added in 1.9.
const TAG_PRESSURE: u8 = 7;
const TAG_RECLAIM: u8 = 8;

impl Row for CgroupRow {
    fn encode(&self, w: &mut ByteWriter) {
        match self {
            CgroupRow::Member { tgid, since, path } => {
                w.u8(TAG_MEMBER);
                w.varint(u64::from(tgid.0));
                w.varint(since.0);
                w.varint(u64::from(path.0));
            }
            CgroupRow::Cpu(s) => {
                w.u8(TAG_CPU);
                w.varint(s.ts.0);
                w.varint(u64::from(s.path.0));
                w.varint(s.quota_us.map_or(0, |q| q.saturating_add(1)));
                w.varint(s.period_us);
                w.varint(s.periods);
                w.varint(s.throttled);
                w.varint(s.throttled_ns);
            }
            CgroupRow::MemoryMember { tgid, since, path } => {
                w.u8(TAG_MEMORY_MEMBER);
                w.varint(u64::from(tgid.0));
                w.varint(since.0);
                w.varint(u64::from(path.0));
            }
            CgroupRow::Memory(m) => {
                w.u8(TAG_MEMORY);
                w.varint(m.ts.0);
                w.varint(u64::from(m.path.0));
                w.varint(m.limit.map_or(0, |l| l.saturating_add(1)));
                w.varint(m.usage);
                w.varint(m.hits);
                w.varint(m.major_faults);
                w.varint(m.refaults);
            }
            CgroupRow::Affinity { tgid, since, cpus } => {
                w.u8(TAG_AFFINITY);
                w.varint(u64::from(tgid.0));
                w.varint(since.0);
                w.varint(u64::from(cpus.0));
            }
            CgroupRow::Idle { ts, cpu, idle_ns } => {
                w.u8(TAG_IDLE);
                w.varint(ts.0);
                w.varint(u64::from(*cpu));
                w.varint(*idle_ns);
            }
            CgroupRow::Pressure(p) => {
                w.u8(TAG_PRESSURE);
                w.varint(p.ts.0);
                w.varint(u64::from(p.path.0));
                w.u8(match p.resource {
                    PressureResource::Cpu => 0,
                    PressureResource::Memory => 1,
                    PressureResource::Io => 2,
                });
                w.varint(p.some_us);
                w.varint(p.full_us);
            }
            CgroupRow::Reclaim {
                ts,
                tid,
                tgid,
                ns,
                count,
            } => {
                w.u8(TAG_RECLAIM);
                w.varint(ts.0);
                w.varint(u64::from(tid.0));
                w.varint(u64::from(tgid.0));
                w.varint(*ns);
                w.varint(*count);
            }
            CgroupRow::Unknown => w.u8(0),
        }
    }
    fn decode(r: &mut ByteReader<'_>) -> Result<Self, ReadFail> {
        Ok(match r.u8()? {
            TAG_MEMBER => CgroupRow::Member {
                tgid: Tgid(r.varint_u32()?),
                since: Timestamp(r.varint()?),
                path: StringId(r.varint_u32()?),
            },
            TAG_CPU => CgroupRow::Cpu(CpuSample {
                ts: Timestamp(r.varint()?),
                path: StringId(r.varint_u32()?),
                quota_us: r.varint()?.checked_sub(1),
                period_us: r.varint()?,
                periods: r.varint()?,
                throttled: r.varint()?,
                throttled_ns: r.varint()?,
            }),
            TAG_MEMORY_MEMBER => CgroupRow::MemoryMember {
                tgid: Tgid(r.varint_u32()?),
                since: Timestamp(r.varint()?),
                path: StringId(r.varint_u32()?),
            },
            TAG_MEMORY => CgroupRow::Memory(MemorySample {
                ts: Timestamp(r.varint()?),
                path: StringId(r.varint_u32()?),
                limit: r.varint()?.checked_sub(1),
                usage: r.varint()?,
                hits: r.varint()?,
                major_faults: r.varint()?,
                refaults: r.varint()?,
            }),
            TAG_AFFINITY => CgroupRow::Affinity {
                tgid: Tgid(r.varint_u32()?),
                since: Timestamp(r.varint()?),
                cpus: StringId(r.varint_u32()?),
            },
            TAG_IDLE => CgroupRow::Idle {
                ts: Timestamp(r.varint()?),
                cpu: r.varint_u32()?,
                idle_ns: r.varint()?,
            },
            TAG_PRESSURE => CgroupRow::Pressure(PressureSample {
                ts: Timestamp(r.varint()?),
                path: StringId(r.varint_u32()?),
                resource: match r.u8()? {
                    0 => PressureResource::Cpu,
                    1 => PressureResource::Memory,
                    2 => PressureResource::Io,
                    // A resource a newer kernel adds: the row is skipped.
                    _ => return Ok(CgroupRow::Unknown),
                },
                some_us: r.varint()?,
                full_us: r.varint()?,
            }),
            TAG_RECLAIM => CgroupRow::Reclaim {
                ts: Timestamp(r.varint()?),
                tid: Tid(r.varint_u32()?),
                tgid: Tgid(r.varint_u32()?),
                ns: r.varint()?,
                count: r.varint()?,
            },
            _ => CgroupRow::Unknown,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_and_unknown_tags_are_skipped() {
        let rows = [
            CgroupRow::Member {
                tgid: Tgid(42),
                since: Timestamp(7),
                path: StringId(3),
            },
            CgroupRow::Cpu(CpuSample {
                ts: Timestamp(100),
                path: StringId(3),
                quota_us: Some(20_000),
                period_us: 100_000,
                periods: 12,
                throttled: 11,
                throttled_ns: 880_000_000,
            }),
            CgroupRow::MemoryMember {
                tgid: Tgid(42),
                since: Timestamp(9),
                path: StringId(5),
            },
            CgroupRow::Memory(MemorySample {
                ts: Timestamp(150),
                path: StringId(5),
                limit: Some(64 << 20),
                usage: 1,
                hits: 2,
                major_faults: 3,
                refaults: 4,
            }),
            CgroupRow::Cpu(CpuSample {
                ts: Timestamp(200),
                path: StringId(4),
                quota_us: None,
                period_us: 100_000,
                periods: 0,
                throttled: 0,
                throttled_ns: 0,
            }),
            CgroupRow::Affinity {
                tgid: Tgid(42),
                since: Timestamp(11),
                cpus: StringId(6),
            },
            CgroupRow::Idle {
                ts: Timestamp(160),
                cpu: 1,
                idle_ns: 9_000_000,
            },
            CgroupRow::Pressure(PressureSample {
                ts: Timestamp(170),
                path: StringId(3),
                resource: PressureResource::Memory,
                some_us: 380_000,
                full_us: 200_000,
            }),
            CgroupRow::Reclaim {
                ts: Timestamp(180),
                tid: Tid(43),
                tgid: Tgid(42),
                ns: 1_500_000,
                count: 12,
            },
        ];
        let mut w = ByteWriter::default();
        let mut scratch = ByteWriter::default();
        for r in &rows {
            put_row(&mut w, &mut scratch, r);
        }
        // A row of a newer tag, with fields this reader does not know.
        let mut newer = ByteWriter::default();
        newer.u8(9);
        newer.varint(5);
        w.bytes(&newer.buf);
        let mut r = ByteReader::new(&w.buf);
        let n = rows.len();
        let back: Vec<CgroupRow> = (0..=n).map(|_| get_row(&mut r).unwrap()).collect();
        assert_eq!(&back[..n], &rows);
        assert_eq!(back[n], CgroupRow::Unknown);
    }
}
