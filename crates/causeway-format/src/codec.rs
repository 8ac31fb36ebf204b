//! Byte layout of events inside an event chunk (before compression).
//!
//! Each event is `code, ts_delta, fields`. `ts_delta` is the varint distance from the
//! previous event of the chunk (the first from the chunk's start time). Codes below
//! [`FIRST_SIZED_CODE`] have a fixed layout per major version; codes from it on are
//! followed by a varint payload length, so a reader can skip kinds a newer minor version
//! added (counted, not an error) and ignore fields appended to a known kind.
//!
//! Thread ids are predicted: the encoder remembers the thread the last `sched_switch`
//! put on the CPU and writes `0` for "that thread", `tid + 1` otherwise. Most events
//! are about the running thread, so this saves two or three bytes per event. The state
//! resets at every chunk so chunks decode independently (needed for salvage).

use crate::bytes::{ByteReader, ByteWriter, ReadFail};
use crate::event::{BlockOp, Event, EventKind, Marker, SoftirqVec, StackKind, TaskState, Waker};
use crate::ids::{Cpu, DevId, StackId, StringId, Tgid, Tid, Timestamp};

/// First event code that carries a payload length.
pub const FIRST_SIZED_CODE: u8 = 64;

mod code {
    pub const SCHED_SWITCH: u8 = 1;
    pub const WAKEUP: u8 = 2;
    pub const WAKEUP_NEW: u8 = 3;
    pub const SYSCALL_ENTER: u8 = 4;
    pub const SYSCALL_EXIT: u8 = 5;
    pub const IRQ_ENTRY: u8 = 6;
    pub const IRQ_EXIT: u8 = 7;
    pub const SOFTIRQ_ENTRY: u8 = 8;
    pub const SOFTIRQ_EXIT: u8 = 9;
    pub const STACK: u8 = 10;
    pub const LOST: u8 = 11;
    // Sized codes.
    pub const FORK: u8 = 64;
    pub const EXEC: u8 = 65;
    pub const EXIT: u8 = 66;
    pub const BLOCK_ISSUE: u8 = 67;
    pub const BLOCK_COMPLETE: u8 = 68;
    pub const NET_XMIT: u8 = 69;
    pub const NET_RECV: u8 = 70;
    pub const MARKER: u8 = 71;
}

mod waker_tag {
    pub const UNKNOWN: u8 = 0;
    pub const THREAD: u8 = 1;
    pub const IRQ: u8 = 2;
    pub const SOFTIRQ: u8 = 3;
}

mod marker_tag {
    pub const SPIN_BEGIN: u8 = 0;
    pub const SPIN_END: u8 = 1;
    pub const FALSE_WAKEUP: u8 = 2;
    pub const FLAG_READ: u8 = 3;
    pub const FLAG_WRITE: u8 = 4;
    pub const METHOD_ENTER: u8 = 5;
    pub const METHOD_EXIT: u8 = 6;
    pub const SPAN_BEGIN: u8 = 7;
    pub const SPAN_END: u8 = 8;
    /// A watchpoint hit (see `crate::dataflag`).
    pub const DATA_FLAG: u8 = 9;
}

/// Sentinel for "no thread predicted yet" (never equal to a real tid + 1 encoding).
const NO_CURRENT: u64 = u64::MAX;

/// Encodes the events of one chunk of one CPU.
#[derive(Debug)]
pub struct ChunkEncoder {
    out: ByteWriter,
    sized: ByteWriter,
    prev_ts: u64,
    current: u64,
    /// Events encoded so far.
    pub count: u32,
}

impl ChunkEncoder {
    /// Start a chunk whose first event is at or after `start`.
    pub fn new(start: Timestamp) -> Self {
        ChunkEncoder {
            out: ByteWriter::default(),
            sized: ByteWriter::default(),
            prev_ts: start.0,
            current: NO_CURRENT,
            count: 0,
        }
    }

    /// The encoded bytes so far.
    pub fn bytes(&self) -> &[u8] {
        &self.out.buf
    }

    /// Consume the encoder, returning the bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.out.buf
    }

    fn tid(w: &mut ByteWriter, current: u64, tid: Tid) {
        crate::predict::put_tid(w, current, tid)
    }

    fn waker(w: &mut ByteWriter, current: u64, waker: &Waker) {
        match *waker {
            Waker::Unknown => w.u8(waker_tag::UNKNOWN),
            Waker::Thread { tid } => {
                w.u8(waker_tag::THREAD);
                Self::tid(w, current, tid);
            }
            Waker::Irq { irq, name } => {
                w.u8(waker_tag::IRQ);
                w.varint(irq as u64);
                w.varint(name.0 as u64);
            }
            Waker::Softirq { vec } => {
                w.u8(waker_tag::SOFTIRQ);
                w.u8(vec.0);
            }
        }
    }

    /// Append one event. Timestamps must not decrease within a chunk (the writer sorts).
    pub fn push(&mut self, ev: &Event) {
        let delta = ev.ts.0.saturating_sub(self.prev_ts);
        self.prev_ts = self.prev_ts.max(ev.ts.0);
        self.count += 1;
        let cur = self.current;
        let w = &mut self.out;
        match ev.kind {
            EventKind::SchedSwitch {
                prev_tid,
                prev_state,
                next_tid,
            } => {
                w.u8(code::SCHED_SWITCH);
                w.varint(delta);
                Self::tid(w, cur, prev_tid);
                w.varint(prev_state.0 as u64);
                w.varint(next_tid.0 as u64);
                self.current = next_tid.0 as u64;
            }
            EventKind::Wakeup {
                wakee,
                target_cpu,
                waker,
            }
            | EventKind::WakeupNew {
                wakee,
                target_cpu,
                waker,
            } => {
                let c = if matches!(ev.kind, EventKind::Wakeup { .. }) {
                    code::WAKEUP
                } else {
                    code::WAKEUP_NEW
                };
                w.u8(c);
                w.varint(delta);
                w.varint(wakee.0 as u64);
                w.varint(target_cpu.0 as u64);
                Self::waker(w, cur, &waker);
            }
            EventKind::SyscallEnter { tid, nr, args } => {
                w.u8(code::SYSCALL_ENTER);
                w.varint(delta);
                Self::tid(w, cur, tid);
                w.varint(nr as u64);
                for a in args {
                    w.varint(a);
                }
            }
            EventKind::SyscallExit { tid, nr, ret } => {
                w.u8(code::SYSCALL_EXIT);
                w.varint(delta);
                Self::tid(w, cur, tid);
                w.varint(nr as u64);
                w.svarint(ret);
            }
            EventKind::IrqEntry { irq, name } => {
                w.u8(code::IRQ_ENTRY);
                w.varint(delta);
                w.varint(irq as u64);
                w.varint(name.0 as u64);
            }
            EventKind::IrqExit { irq, handled } => {
                w.u8(code::IRQ_EXIT);
                w.varint(delta);
                w.varint(irq as u64);
                w.u8(handled as u8);
            }
            EventKind::SoftirqEntry { vec } => {
                w.u8(code::SOFTIRQ_ENTRY);
                w.varint(delta);
                w.u8(vec.0);
            }
            EventKind::SoftirqExit { vec } => {
                w.u8(code::SOFTIRQ_EXIT);
                w.varint(delta);
                w.u8(vec.0);
            }
            EventKind::Stack {
                tid,
                kind,
                user,
                kernel,
            } => {
                w.u8(code::STACK);
                w.varint(delta);
                Self::tid(w, cur, tid);
                w.u8(kind.to_u8());
                w.varint(user.map_or(0, |s| s.0 as u64 + 1));
                w.varint(kernel.map_or(0, |s| s.0 as u64 + 1));
            }
            EventKind::Lost { count } => {
                w.u8(code::LOST);
                w.varint(delta);
                w.varint(count);
            }
            _ => {
                // Sized kinds: encode the payload aside, then write its length first.
                let s = &mut self.sized;
                s.buf.clear();
                let c = encode_sized(s, cur, &ev.kind);
                w.u8(c);
                w.varint(delta);
                w.varint(s.buf.len() as u64);
                w.buf.extend_from_slice(&s.buf);
            }
        }
    }
}

fn encode_sized(s: &mut ByteWriter, cur: u64, kind: &EventKind) -> u8 {
    let tid = ChunkEncoder::tid;
    match *kind {
        EventKind::Fork {
            parent_tid,
            parent_tgid,
            child_tid,
            child_tgid,
        } => {
            tid(s, cur, parent_tid);
            s.varint(parent_tgid.0 as u64);
            s.varint(child_tid.0 as u64);
            s.varint(child_tgid.0 as u64);
            code::FORK
        }
        EventKind::Exec {
            tid: t,
            comm,
            filename,
        } => {
            tid(s, cur, t);
            s.varint(comm.0 as u64);
            s.varint(filename.0 as u64);
            code::EXEC
        }
        EventKind::Exit { tid: t } => {
            tid(s, cur, t);
            code::EXIT
        }
        EventKind::BlockIssue {
            tid: t,
            dev,
            sector,
            bytes,
            op,
        } => {
            tid(s, cur, t);
            s.varint(dev.0 as u64);
            s.varint(sector);
            s.varint(bytes as u64);
            s.u8(op.to_bits());
            code::BLOCK_ISSUE
        }
        EventKind::BlockComplete {
            dev,
            sector,
            bytes,
            op,
            error,
        } => {
            s.varint(dev.0 as u64);
            s.varint(sector);
            s.varint(bytes as u64);
            s.u8(op.to_bits());
            s.svarint(error as i64);
            code::BLOCK_COMPLETE
        }
        EventKind::NetXmit { tid: t, dev, bytes } | EventKind::NetRecv { tid: t, dev, bytes } => {
            tid(s, cur, t);
            s.varint(dev.0 as u64);
            s.varint(bytes as u64);
            if matches!(kind, EventKind::NetXmit { .. }) {
                code::NET_XMIT
            } else {
                code::NET_RECV
            }
        }
        EventKind::Marker { tid: t, marker } => {
            tid(s, cur, t);
            encode_marker(s, &marker);
            code::MARKER
        }
        EventKind::SignalGenerate { .. }
        | EventKind::SignalDeliver { .. }
        | EventKind::TimerArm { .. }
        | EventKind::TimerExpire { .. } => crate::codec_signals::encode(s, cur, kind),
        EventKind::SockSend { .. } | EventKind::SockReady { .. } => {
            crate::codec_sockets::encode(s, cur, kind)
        }
        EventKind::GoRun { .. }
        | EventKind::GoPark { .. }
        | EventKind::GoNetWait { .. }
        | EventKind::GoReady { .. } => crate::codec_goroutines::encode(s, cur, kind),
        // Compact kinds never get here.
        _ => 0,
    }
}

fn encode_marker(s: &mut ByteWriter, m: &Marker) {
    match *m {
        Marker::SpinBegin { id } => {
            s.u8(marker_tag::SPIN_BEGIN);
            s.varint(id);
        }
        Marker::SpinEnd { id } => {
            s.u8(marker_tag::SPIN_END);
            s.varint(id);
        }
        Marker::FalseWakeup => s.u8(marker_tag::FALSE_WAKEUP),
        Marker::FlagRead { addr } => {
            s.u8(marker_tag::FLAG_READ);
            s.varint(addr);
        }
        Marker::FlagWrite { addr } => {
            s.u8(marker_tag::FLAG_WRITE);
            s.varint(addr);
        }
        Marker::MethodEnter { method } => {
            s.u8(marker_tag::METHOD_ENTER);
            s.varint(method.0 as u64);
        }
        Marker::MethodExit { method } => {
            s.u8(marker_tag::METHOD_EXIT);
            s.varint(method.0 as u64);
        }
        Marker::SpanBegin { name, id } => {
            s.u8(marker_tag::SPAN_BEGIN);
            s.varint(name.0 as u64);
            s.varint(id);
        }
        Marker::SpanEnd { name, id } => {
            s.u8(marker_tag::SPAN_END);
            s.varint(name.0 as u64);
            s.varint(id);
        }
        Marker::DataFlag { addr, access, ip } => {
            s.u8(marker_tag::DATA_FLAG);
            s.varint(addr);
            s.u8(access.code());
            s.varint(ip);
        }
    }
}

/// Why a chunk failed to decode, with the byte position inside the decompressed chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeFail {
    /// Position in the decompressed chunk.
    pub pos: usize,
    /// What is wrong.
    pub detail: String,
}

/// Where a [`ChunkDecoder`] stands: everything but the bytes, so the merge can keep a
/// chunk's bytes and its decoding position side by side and decode lazily.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DecodeState {
    pos: usize,
    prev_ts: u64,
    current: u64,
    /// Events of unknown sized kinds skipped so far.
    pub(crate) skipped_unknown: u64,
    /// Events decoded so far.
    pub(crate) decoded: u64,
}

impl DecodeState {
    /// At the start of a chunk beginning at `start`.
    pub(crate) fn new(start: Timestamp) -> Self {
        DecodeState {
            pos: 0,
            prev_ts: start.0,
            current: NO_CURRENT,
            skipped_unknown: 0,
            decoded: 0,
        }
    }

    /// The next event of `data` (a decompressed chunk of `cpu`), `Ok(None)` at its end.
    #[inline]
    pub(crate) fn next_event(
        &mut self,
        data: &[u8],
        cpu: Cpu,
    ) -> Result<Option<Event>, DecodeFail> {
        let mut slot = [PLACEHOLDER];
        match self.fill(data, cpu, &mut slot) {
            (1, _) => Ok(Some(slot[0])),
            (_, Stop::Fail(f)) => Err(f),
            _ => Ok(None),
        }
    }

    /// Decode the next events of `data` (a decompressed chunk of `cpu`) into `out`, as
    /// many as fit. Returns how many were written (at the start of `out`) and why the
    /// decoding stopped. After a failure the state stays on the bad event, so decoding
    /// again fails again.
    #[inline]
    pub(crate) fn fill(&mut self, data: &[u8], cpu: Cpu, out: &mut [Event]) -> (usize, Stop) {
        // The state lives in locals (registers) for the whole batch.
        let mut at = At {
            pos: self.pos,
            prev_ts: self.prev_ts,
            current: self.current,
        };
        let mut n = 0usize;
        let mut stop = Stop::Full;
        for slot in out.iter_mut() {
            // Fast path: a compact event with a whole window of bytes behind it.
            if let Some(w) = data
                .get(at.pos..at.pos.wrapping_add(WINDOW))
                .and_then(|s| <&[u8; WINDOW]>::try_from(s).ok())
                && let Some(len) = decode_fast(w, &mut at.prev_ts, &mut at.current, cpu, slot)
            {
                at.pos += len;
                n += 1;
                continue;
            }
            // Anything else (the chunk's last bytes, sized kinds, malformed events)
            // takes the checked path, which also finds the exact error.
            let (next, end) = self.checked(data, at, cpu, slot);
            at = next;
            match end {
                None => n += 1,
                Some(end) => {
                    stop = end;
                    break;
                }
            }
        }
        self.pos = at.pos;
        self.prev_ts = at.prev_ts;
        self.current = at.current;
        self.decoded += n as u64;
        (n, stop)
    }

    /// Decode the event at `at` into `slot` with every read checked, skipping events
    /// of unknown sized kinds: the state after it, and `None` if one was decoded or why
    /// not. After a failure the state stays on the bad event.
    #[inline(never)]
    fn checked(&mut self, data: &[u8], at: At, cpu: Cpu, slot: &mut Event) -> (At, Option<Stop>) {
        let mut at = at;
        loop {
            let mut r = ByteReader::at(data, at.pos);
            if r.is_empty() {
                return (at, Some(Stop::End));
            }
            let (mut prev_ts, mut current) = (at.prev_ts, at.current);
            match decode_event(&mut r, &mut prev_ts, &mut current, cpu, slot) {
                Ok(decoded) => {
                    at = At {
                        pos: r.pos(),
                        prev_ts,
                        current,
                    };
                    if decoded {
                        return (at, None);
                    }
                    self.skipped_unknown += 1;
                }
                Err(f) => {
                    let fail = DecodeFail {
                        pos: at.pos,
                        detail: f.text(),
                    };
                    return (at, Some(Stop::Fail(fail)));
                }
            }
        }
    }
}

/// Where decoding stands inside a chunk (the part of [`DecodeState`] a batch updates).
#[derive(Clone, Copy)]
struct At {
    pos: usize,
    prev_ts: u64,
    current: u64,
}

/// Bytes a compact event can take at most: its code and at most six varints of at most
/// ten bytes (a syscall entry: delta, tid, number and three arguments) is 61.
const WINDOW: usize = 64;

/// A fixed window of bytes read without bounds checks: every index is reduced modulo
/// [`WINDOW`], and a compact event never reaches the end of the window (see there).
struct Win<'a> {
    w: &'a [u8; WINDOW],
    i: usize,
}

impl Win<'_> {
    #[inline(always)]
    fn u8(&mut self) -> u8 {
        let b = self.w[self.i % WINDOW];
        self.i += 1;
        b
    }

    /// Unsigned LEB128 of at most ten bytes; `None` for anything malformed.
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        let b0 = self.u8() as u64;
        if b0 < 0x80 {
            return Some(b0);
        }
        let b1 = self.u8() as u64;
        if b1 < 0x80 {
            return Some(b0 & 0x7f | b1 << 7);
        }
        let (v, i) = win_varint_long(self.w, self.i, b0 & 0x7f | (b1 & 0x7f) << 7)?;
        self.i = i;
        Some(v)
    }

    #[inline(always)]
    fn varint_u32(&mut self) -> Option<u32> {
        u32::try_from(self.varint()?).ok()
    }

    /// A predicted thread id (see [`tid`]).
    #[inline(always)]
    fn tid(&mut self, current: u64) -> Option<Tid> {
        let t = match self.varint()? {
            0 => current,
            v => v - 1,
        };
        u32::try_from(t).ok().map(Tid)
    }
}

/// The rest of a varint of three or more bytes whose first 14 bits are `v`, from
/// `w[i..]`: its value and the index after it. Same limits as the checked reader.
#[inline(never)]
fn win_varint_long(w: &[u8; WINDOW], mut i: usize, mut v: u64) -> Option<(u64, usize)> {
    let mut shift = 14u32;
    loop {
        let b = w[i % WINDOW];
        i += 1;
        if shift == 63 && b > 1 {
            return None;
        }
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return Some((v, i));
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// Decode the compact event at the start of `w` into `out`: the bytes it took, or
/// `None` (nothing changed but maybe `out`) if it is not a well-formed compact event,
/// which [`decode_event`] then handles.
#[inline(always)]
fn decode_fast(
    w: &[u8; WINDOW],
    prev_ts: &mut u64,
    current: &mut u64,
    cpu: Cpu,
    out: &mut Event,
) -> Option<usize> {
    let mut r = Win { w, i: 0 };
    let c = r.u8();
    let delta = r.varint()?;
    let ts = Timestamp(prev_ts.checked_add(delta)?);
    let cur = *current;
    let mut put = |kind| *out = Event { ts, cpu, kind };
    match c {
        code::SCHED_SWITCH => {
            let prev_tid = r.tid(cur)?;
            let prev_state = TaskState(u16::try_from(r.varint()?).ok()?);
            let next_tid = Tid(r.varint_u32()?);
            *current = next_tid.0 as u64;
            put(EventKind::SchedSwitch {
                prev_tid,
                prev_state,
                next_tid,
            })
        }
        code::WAKEUP | code::WAKEUP_NEW => {
            let wakee = Tid(r.varint_u32()?);
            let target_cpu = Cpu(r.varint_u32()?);
            let waker = match r.u8() {
                waker_tag::THREAD => Waker::Thread { tid: r.tid(cur)? },
                waker_tag::UNKNOWN => Waker::Unknown,
                waker_tag::IRQ => Waker::Irq {
                    irq: r.varint_u32()?,
                    name: StringId(r.varint_u32()?),
                },
                waker_tag::SOFTIRQ => Waker::Softirq {
                    vec: SoftirqVec(r.u8()),
                },
                _ => return None,
            };
            put(if c == code::WAKEUP {
                EventKind::Wakeup {
                    wakee,
                    target_cpu,
                    waker,
                }
            } else {
                EventKind::WakeupNew {
                    wakee,
                    target_cpu,
                    waker,
                }
            })
        }
        code::SYSCALL_ENTER => put(EventKind::SyscallEnter {
            tid: r.tid(cur)?,
            nr: r.varint_u32()?,
            args: [r.varint()?, r.varint()?, r.varint()?],
        }),
        code::SYSCALL_EXIT => {
            let tid = r.tid(cur)?;
            let nr = r.varint_u32()?;
            let u = r.varint()?;
            put(EventKind::SyscallExit {
                tid,
                nr,
                ret: ((u >> 1) as i64) ^ -((u & 1) as i64),
            })
        }
        code::IRQ_ENTRY => put(EventKind::IrqEntry {
            irq: r.varint_u32()?,
            name: StringId(r.varint_u32()?),
        }),
        code::IRQ_EXIT => put(EventKind::IrqExit {
            irq: r.varint_u32()?,
            handled: r.u8() != 0,
        }),
        code::SOFTIRQ_ENTRY => put(EventKind::SoftirqEntry {
            vec: SoftirqVec(r.u8()),
        }),
        code::SOFTIRQ_EXIT => put(EventKind::SoftirqExit {
            vec: SoftirqVec(r.u8()),
        }),
        code::STACK => {
            let tid = r.tid(cur)?;
            let kind = StackKind::from_u8(r.u8());
            let user = r.varint()?;
            let kernel = r.varint()?;
            put(EventKind::Stack {
                tid,
                kind,
                user: opt_stack(user).ok()?,
                kernel: opt_stack(kernel).ok()?,
            })
        }
        code::LOST => put(EventKind::Lost { count: r.varint()? }),
        _ => return None,
    }
    *prev_ts = ts.0;
    Some(r.i)
}

/// A placeholder event for buffers about to be overwritten.
pub(crate) const PLACEHOLDER: Event = Event {
    ts: Timestamp(0),
    cpu: Cpu(0),
    kind: EventKind::Lost { count: 0 },
};

/// Why [`DecodeState::fill`] stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The output is full; there may be more events.
    Full,
    /// The chunk ended.
    End,
    /// The next event is malformed.
    Fail(DecodeFail),
}

/// Why an event failed to decode: small and `Copy` so the hot path carries no `String`;
/// the text is built only when a failure is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fail {
    /// A primitive read failed.
    Read(ReadFail),
    /// The timestamp does not fit in 64 bits.
    TsOverflow,
    /// An unknown compact code or field value (with the event code).
    Unknown(u8),
}

impl From<ReadFail> for Fail {
    #[inline(always)]
    fn from(f: ReadFail) -> Self {
        Fail::Read(f)
    }
}

impl Fail {
    #[cold]
    fn text(self) -> String {
        match self {
            Fail::Read(f) => f.text().to_string(),
            Fail::TsOverflow => "timestamp overflows".to_string(),
            Fail::Unknown(c) => format!("unknown event code {c} or field value"),
        }
    }
}

/// Decode the event at `r` into `out`; `Ok(false)` for a skipped unknown sized kind.
/// On failure `prev_ts` and `current` are unchanged (`out` may be partly written).
#[inline(always)]
fn decode_event(
    r: &mut ByteReader<'_>,
    prev_ts: &mut u64,
    current: &mut u64,
    cpu: Cpu,
    out: &mut Event,
) -> Result<bool, Fail> {
    let c = r.u8()?;
    let delta = r.varint()?;
    let ts = prev_ts.checked_add(delta).ok_or(Fail::TsOverflow)?;
    let cur = *current;
    if c < FIRST_SIZED_CODE {
        decode_compact(r, c, cur, current, Timestamp(ts), cpu, out)?;
    } else {
        let len = r.varint()?;
        let len = usize::try_from(len).map_err(|_| ReadFail::Eof)?;
        let payload = r.take(len)?;
        let mut p = ByteReader::new(payload);
        match ChunkDecoder::decode_sized(&mut p, c, cur)? {
            Some(kind) => {
                *out = Event {
                    ts: Timestamp(ts),
                    cpu,
                    kind,
                }
            }
            None => {
                *prev_ts = ts;
                return Ok(false);
            }
        }
    }
    *prev_ts = ts;
    Ok(true)
}

/// A thread id with the "same as the current thread" prediction.
#[inline(always)]
fn tid(r: &mut ByteReader<'_>, current: u64) -> Result<Tid, ReadFail> {
    crate::predict::read_tid(r, current)
}

#[inline(always)]
fn waker(r: &mut ByteReader<'_>, current: u64, c: u8) -> Result<Waker, Fail> {
    Ok(match r.u8()? {
        waker_tag::THREAD => Waker::Thread {
            tid: tid(r, current)?,
        },
        waker_tag::UNKNOWN => Waker::Unknown,
        waker_tag::IRQ => Waker::Irq {
            irq: r.varint_u32()?,
            name: StringId(r.varint_u32()?),
        },
        waker_tag::SOFTIRQ => Waker::Softirq {
            vec: SoftirqVec(r.u8()?),
        },
        _ => return Err(Fail::Unknown(c)),
    })
}

#[inline(always)]
fn opt_stack(v: u64) -> Result<Option<StackId>, ReadFail> {
    match v {
        0 => Ok(None),
        v => u32::try_from(v - 1)
            .map(|s| Some(StackId(s)))
            .map_err(|_| ReadFail::BadVarint),
    }
}

/// Decode the fields of a compact event of code `c` at `ts` into `out` (each kind is
/// written whole where it is decoded, so no kind-sized value is moved around).
#[inline(always)]
fn decode_compact(
    r: &mut ByteReader<'_>,
    c: u8,
    cur: u64,
    current: &mut u64,
    ts: Timestamp,
    cpu: Cpu,
    out: &mut Event,
) -> Result<(), Fail> {
    let mut put = |kind| *out = Event { ts, cpu, kind };
    match c {
        code::SCHED_SWITCH => {
            let prev_tid = tid(r, cur)?;
            let state = r.varint()?;
            let prev_state = TaskState(u16::try_from(state).map_err(|_| ReadFail::BadVarint)?);
            let next_tid = Tid(r.varint_u32()?);
            *current = next_tid.0 as u64;
            put(EventKind::SchedSwitch {
                prev_tid,
                prev_state,
                next_tid,
            })
        }
        code::WAKEUP => put(EventKind::Wakeup {
            wakee: Tid(r.varint_u32()?),
            target_cpu: Cpu(r.varint_u32()?),
            waker: waker(r, cur, c)?,
        }),
        code::WAKEUP_NEW => put(EventKind::WakeupNew {
            wakee: Tid(r.varint_u32()?),
            target_cpu: Cpu(r.varint_u32()?),
            waker: waker(r, cur, c)?,
        }),
        code::SYSCALL_ENTER => put(EventKind::SyscallEnter {
            tid: tid(r, cur)?,
            nr: r.varint_u32()?,
            args: [r.varint()?, r.varint()?, r.varint()?],
        }),
        code::SYSCALL_EXIT => put(EventKind::SyscallExit {
            tid: tid(r, cur)?,
            nr: r.varint_u32()?,
            ret: r.svarint()?,
        }),
        code::IRQ_ENTRY => put(EventKind::IrqEntry {
            irq: r.varint_u32()?,
            name: StringId(r.varint_u32()?),
        }),
        code::IRQ_EXIT => put(EventKind::IrqExit {
            irq: r.varint_u32()?,
            handled: r.u8()? != 0,
        }),
        code::SOFTIRQ_ENTRY => put(EventKind::SoftirqEntry {
            vec: SoftirqVec(r.u8()?),
        }),
        code::SOFTIRQ_EXIT => put(EventKind::SoftirqExit {
            vec: SoftirqVec(r.u8()?),
        }),
        code::STACK => put(EventKind::Stack {
            tid: tid(r, cur)?,
            kind: StackKind::from_u8(r.u8()?),
            user: opt_stack(r.varint()?)?,
            kernel: opt_stack(r.varint()?)?,
        }),
        code::LOST => put(EventKind::Lost { count: r.varint()? }),
        _ => return Err(Fail::Unknown(c)),
    }
    Ok(())
}

/// Decodes the events of one chunk.
#[derive(Debug)]
pub struct ChunkDecoder<'a> {
    data: &'a [u8],
    cpu: Cpu,
    st: DecodeState,
    /// Events of unknown sized kinds skipped so far.
    pub skipped_unknown: u64,
}

impl<'a> ChunkDecoder<'a> {
    /// Decode `data`, the decompressed chunk of `cpu` starting at `start`.
    pub fn new(data: &'a [u8], cpu: Cpu, start: Timestamp) -> Self {
        ChunkDecoder {
            data,
            cpu,
            st: DecodeState::new(start),
            skipped_unknown: 0,
        }
    }

    /// The next event, `Ok(None)` at the end of the chunk.
    #[inline]
    pub fn next_event(&mut self) -> Result<Option<Event>, DecodeFail> {
        let r = self.st.next_event(self.data, self.cpu);
        self.skipped_unknown = self.st.skipped_unknown;
        r
    }

    /// `Ok(None)` for an unknown code (to be skipped). Trailing payload bytes a newer
    /// minor version appended are ignored.
    #[inline]
    fn decode_sized(
        p: &mut ByteReader<'_>,
        c: u8,
        cur: u64,
    ) -> Result<Option<EventKind>, ReadFail> {
        let k = match c {
            code::FORK => EventKind::Fork {
                parent_tid: tid(p, cur)?,
                parent_tgid: Tgid(p.varint_u32()?),
                child_tid: Tid(p.varint_u32()?),
                child_tgid: Tgid(p.varint_u32()?),
            },
            code::EXEC => EventKind::Exec {
                tid: tid(p, cur)?,
                comm: StringId(p.varint_u32()?),
                filename: StringId(p.varint_u32()?),
            },
            code::EXIT => EventKind::Exit { tid: tid(p, cur)? },
            code::BLOCK_ISSUE => EventKind::BlockIssue {
                tid: tid(p, cur)?,
                dev: DevId(p.varint_u32()?),
                sector: p.varint()?,
                bytes: p.varint_u32()?,
                op: BlockOp::from_bits(p.u8()?),
            },
            code::BLOCK_COMPLETE => EventKind::BlockComplete {
                dev: DevId(p.varint_u32()?),
                sector: p.varint()?,
                bytes: p.varint_u32()?,
                op: BlockOp::from_bits(p.u8()?),
                error: i32::try_from(p.svarint()?).map_err(|_| ReadFail::BadVarint)?,
            },
            code::NET_XMIT | code::NET_RECV => {
                let tid = tid(p, cur)?;
                let dev = StringId(p.varint_u32()?);
                let bytes = p.varint_u32()?;
                if c == code::NET_XMIT {
                    EventKind::NetXmit { tid, dev, bytes }
                } else {
                    EventKind::NetRecv { tid, dev, bytes }
                }
            }
            code::MARKER => {
                let tid = tid(p, cur)?;
                let marker = match p.u8()? {
                    marker_tag::SPIN_BEGIN => Marker::SpinBegin { id: p.varint()? },
                    marker_tag::SPIN_END => Marker::SpinEnd { id: p.varint()? },
                    marker_tag::FALSE_WAKEUP => Marker::FalseWakeup,
                    marker_tag::FLAG_READ => Marker::FlagRead { addr: p.varint()? },
                    marker_tag::FLAG_WRITE => Marker::FlagWrite { addr: p.varint()? },
                    marker_tag::METHOD_ENTER => Marker::MethodEnter {
                        method: StringId(p.varint_u32()?),
                    },
                    marker_tag::METHOD_EXIT => Marker::MethodExit {
                        method: StringId(p.varint_u32()?),
                    },
                    marker_tag::SPAN_BEGIN => Marker::SpanBegin {
                        name: StringId(p.varint_u32()?),
                        id: p.varint()?,
                    },
                    marker_tag::SPAN_END => Marker::SpanEnd {
                        name: StringId(p.varint_u32()?),
                        id: p.varint()?,
                    },
                    marker_tag::DATA_FLAG => {
                        let addr = p.varint()?;
                        // An access kind from a newer minor version: skip the event.
                        let Some(access) = crate::dataflag::DataFlagAccess::from_code(p.u8()?)
                        else {
                            return Ok(None);
                        };
                        Marker::DataFlag {
                            addr,
                            access,
                            ip: p.varint()?,
                        }
                    }
                    // A marker type from a newer minor version: skip the event.
                    _ => return Ok(None),
                };
                EventKind::Marker { tid, marker }
            }
            crate::codec_signals::code::SIGNAL_GENERATE
                ..=crate::codec_signals::code::TIMER_EXPIRE => {
                crate::codec_signals::decode(p, c, cur)?
            }
            crate::codec_sockets::code::SOCK_SEND..=crate::codec_sockets::code::SOCK_READY => {
                crate::codec_sockets::decode(p, c, cur)?
            }
            crate::codec_goroutines::code::GO_RUN..=crate::codec_goroutines::code::GO_NET_WAIT => {
                crate::codec_goroutines::decode(p, c, cur)?
            }
            _ => return Ok(None),
        };
        Ok(Some(k))
    }
}

/// Append an unknown sized event (for tests of forward compatibility).
#[doc(hidden)]
pub fn push_raw_sized(enc: &mut ChunkEncoder, code: u8, ts_delta: u64, payload: &[u8]) {
    enc.out.u8(code);
    enc.out.varint(ts_delta);
    enc.out.bytes(payload);
    enc.prev_ts += ts_delta;
    enc.count += 1;
}
