//! Parsing of the records the BPF programs write to the ring buffers.
//!
//! The byte layout is defined in `src/bpf/abi.h`; this module reads it, with the type
//! numbers, flags and sizes the skeleton generates from that header. Records
//! arrive from the kernel, so a short or unknown record is reported as an error value,
//! never trusted.

/// Record type numbers, from `enum rec_type` in the BPF ABI header.
mod ty {
    use crate::skel::types::rec_type;
    pub const SWITCH: u16 = rec_type::REC_SWITCH.0 as u16;
    pub const WAKING: u16 = rec_type::REC_WAKING.0 as u16;
    pub const WAKEUP_NEW: u16 = rec_type::REC_WAKEUP_NEW.0 as u16;
    pub const FORK: u16 = rec_type::REC_FORK.0 as u16;
    pub const EXEC: u16 = rec_type::REC_EXEC.0 as u16;
    pub const EXIT: u16 = rec_type::REC_EXIT.0 as u16;
    pub const IRQ_ENTRY: u16 = rec_type::REC_IRQ_ENTRY.0 as u16;
    pub const IRQ_EXIT: u16 = rec_type::REC_IRQ_EXIT.0 as u16;
    pub const SOFTIRQ_ENTRY: u16 = rec_type::REC_SOFTIRQ_ENTRY.0 as u16;
    pub const SOFTIRQ_EXIT: u16 = rec_type::REC_SOFTIRQ_EXIT.0 as u16;
    pub const BLOCK_ISSUE: u16 = rec_type::REC_BLOCK_ISSUE.0 as u16;
    pub const BLOCK_COMPLETE: u16 = rec_type::REC_BLOCK_COMPLETE.0 as u16;
    pub const NET_XMIT: u16 = rec_type::REC_NET_XMIT.0 as u16;
    pub const NET_RECV: u16 = rec_type::REC_NET_RECV.0 as u16;
    pub const SYS_ENTER: u16 = rec_type::REC_SYS_ENTER.0 as u16;
    pub const SYS_EXIT: u16 = rec_type::REC_SYS_EXIT.0 as u16;
    pub const TASK: u16 = rec_type::REC_TASK.0 as u16;
    pub const MAPS_CHANGED: u16 = rec_type::REC_MAPS_CHANGED.0 as u16;
    pub const USTACK: u16 = rec_type::REC_USTACK.0 as u16;
    pub const SAMPLE: u16 = rec_type::REC_SAMPLE.0 as u16;
    pub const SIGNAL_GENERATE: u16 = rec_type::REC_SIGNAL_GENERATE.0 as u16;
    pub const SIGNAL_DELIVER: u16 = rec_type::REC_SIGNAL_DELIVER.0 as u16;
    pub const TIMER_ARM: u16 = rec_type::REC_TIMER_ARM.0 as u16;
    pub const TIMER_EXPIRE: u16 = rec_type::REC_TIMER_EXPIRE.0 as u16;
    pub const SOCK_SEND: u16 = rec_type::REC_SOCK_SEND.0 as u16;
    pub const SOCK_READY: u16 = rec_type::REC_SOCK_READY.0 as u16;
    pub const GO_RUN: u16 = rec_type::REC_GO_RUN.0 as u16;
    pub const GO_PARK: u16 = rec_type::REC_GO_PARK.0 as u16;
    pub const GO_READY: u16 = rec_type::REC_GO_READY.0 as u16;
    pub const GO_NETWAIT: u16 = rec_type::REC_GO_NETWAIT.0 as u16;
}

use crate::skel::types;

/// Bytes before the stack data in a `REC_USTACK` record.
const USTACK_HDR: usize = types::abi_sizes::USTACK_HDR.0 as usize;

const HDR: usize = size_of::<types::rec_hdr>();
const REC_F_STACK: u16 = types::rec_flag::REC_F_STACK.0 as u16;

/// Bits of [`RawStack::flags`].
pub mod stack_flags {
    use crate::skel::types;
    /// The user walk stopped on its budget or scope, not at the end of the stack.
    pub const USER_TRUNCATED: u8 = types::stack_flag::STK_F_USER_TRUNCATED.0 as u8;
    /// No user registers, or the first read of the user stack failed.
    pub const USER_FAILED: u8 = types::stack_flag::STK_F_USER_FAILED.0 as u8;
    /// The first program frame was found by scanning the stack, not by frame pointers.
    pub const SCANNED: u8 = types::stack_flag::STK_F_SCANNED.0 as u8;
    /// The kernel stack filled its buffer.
    pub const KERNEL_TRUNCATED: u8 = types::stack_flag::STK_F_KERNEL_TRUNCATED.0 as u8;
    /// The user stack was copied (a `REC_USTACK` record with the same time and thread)
    /// for unwinding in user space.
    pub const COPIED: u8 = types::stack_flag::STK_F_COPIED.0 as u8;
    /// The ring was over three quarters full: the user stack was not copied, so the
    /// events keep room when the reader falls behind.
    pub const USER_SKIPPED: u8 = types::stack_flag::STK_F_USER_SKIPPED.0 as u8;
    /// The user stack is one user space unwound before: the trailer ends with its memo
    /// id and copy flags ([`super::RawStack::memo`]).
    pub const USER_MEMO: u8 = types::stack_flag::STK_F_USER_MEMO.0 as u8;
}

/// Bits of [`StackCopy::flags`] (`causeway-unwind`, checked against the BPF side's
/// `USTK_F_*` in this module's tests), and the copied stack itself.
pub use causeway_unwind::{StackCopy, copy_flags};

/// Who ran the code that woke a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakerCtx {
    /// A thread (the record's `tid`).
    Thread,
    /// A device interrupt handler.
    Irq(u32),
    /// A softirq vector.
    Softirq(u32),
    /// An hrtimer callback (a sleep or timeout expiring).
    Timer,
    /// NMI or anything not recognized.
    Unknown,
}

/// A stack attached to a record (in the record: kernel frames first, then user ones).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawStack {
    /// 0 switch-out, 1 waker, 2 syscall, 3 sample (`StackKind` numbering).
    pub kind: u8,
    /// `stack_flags` bits.
    pub flags: u8,
    /// User return addresses.
    pub user: Vec<u64>,
    /// Kernel return addresses.
    pub kernel: Vec<u64>,
    /// With `USER_MEMO`: the unwind memo's id (low half) and the copy flags (high).
    pub memo: Option<u64>,
}

/// A socket's two ends as the BPF side wrote them (`struct rec_flow`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawFlow {
    /// This side's address (IPv6 or IPv4-mapped; a Unix socket's object hash).
    pub local_addr: [u8; 16],
    /// The other side's address.
    pub remote_addr: [u8; 16],
    /// This side's port.
    pub local_port: u16,
    /// The other side's port.
    pub remote_port: u16,
    /// Address family.
    pub family: u16,
    /// IP protocol, or the Unix socket type.
    pub proto: u16,
}

/// Body of one record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// `sched_switch`; header tid/tgid are the previous task.
    Switch {
        /// Next task.
        next_tid: u32,
        /// Next task's process.
        next_tgid: u32,
        /// Raw `__state` of the previous task.
        prev_state: u32,
        /// Its `exit_state`.
        prev_exit_state: u32,
        /// Switched out by preemption.
        preempt: bool,
    },
    /// `sched_waking` or `sched_wakeup_new`; header tid/tgid are the current task.
    Wake {
        /// True for `sched_wakeup_new`.
        new: bool,
        /// Woken thread.
        wakee_tid: u32,
        /// Its process.
        wakee_tgid: u32,
        /// CPU it last ran on.
        target_cpu: u32,
        /// Context of the waker.
        waker: WakerCtx,
    },
    /// A thread or process was created; header is the parent.
    Fork {
        /// New thread.
        child_tid: u32,
        /// Its process.
        child_tgid: u32,
    },
    /// A successful exec.
    Exec {
        /// New name.
        comm: String,
        /// Executed path.
        filename: String,
    },
    /// A thread exited.
    Exit,
    /// Hard IRQ handler entry or exit.
    Irq {
        /// Entry (true) or exit.
        entry: bool,
        /// IRQ number.
        irq: u32,
        /// Handler result (exit).
        ret: i32,
        /// Handler name (entry).
        name: String,
    },
    /// Softirq entry or exit.
    Softirq {
        /// Entry (true) or exit.
        entry: bool,
        /// Vector.
        vec: u32,
    },
    /// Block request issued or completed.
    Block {
        /// Issue (true) or completion.
        issue: bool,
        /// Device, `major << 20 | minor`.
        dev: u32,
        /// First sector.
        sector: u64,
        /// Bytes.
        bytes: u32,
        /// `cmd_flags` of the request.
        cmd_flags: u32,
        /// Completion status.
        error: i32,
    },
    /// Packet sent or received.
    Net {
        /// Transmit (true) or receive.
        xmit: bool,
        /// Device name.
        dev: String,
        /// Bytes.
        bytes: u32,
    },
    /// Syscall entry.
    SysEnter {
        /// Syscall number.
        nr: u32,
        /// First argument.
        arg0: u64,
        /// Keyed hash of the kernel object behind fd `arg0`, 0 if none.
        obj: u64,
        /// `enum obj_kind`.
        obj_kind: u32,
    },
    /// Syscall exit.
    SysExit {
        /// Syscall number.
        nr: u32,
        /// Return value.
        ret: i64,
    },
    /// A thread's name (first sighting or after a rename).
    Task {
        /// `comm`.
        comm: String,
    },
    /// A process's executable mappings may have changed (1 exec, 2 mmap, 3 new).
    MapsChanged {
        /// Why.
        reason: u32,
    },
    /// A copied user stack for the stack of the next record with the same time and
    /// thread (header tid/tgid).
    UserStack(StackCopy),
    /// An on-CPU sample of the header's thread; its stacks are the record's trailer.
    Sample,
    /// A signal generated (header: the sender, 0 in interrupt context) or delivered
    /// (header: the receiver).
    Signal {
        /// Delivered (true) or generated.
        deliver: bool,
        /// Thread it was sent to.
        target_tid: u32,
        /// Its process.
        target_tgid: u32,
        /// Signal number.
        sig: i32,
        /// The kernel's verdict (`enum sig_result`), generate only.
        result: i32,
        /// Process-wide, generate only.
        group: bool,
    },
    /// Data sent on a socket by the header's thread.
    SockSend {
        /// The socket's ends from the sender's side.
        flow: RawFlow,
        /// Bytes sent.
        bytes: u32,
        /// TCP `write_seq` after the send.
        seq: Option<u32>,
    },
    /// The wake-up record just before (same time) was caused by data arriving on a
    /// socket; the header's thread is the one current then.
    SockReady {
        /// The socket's ends from the receiver's side.
        flow: RawFlow,
        /// The woken thread.
        wakee_tid: u32,
        /// TCP `rcv_nxt`.
        seq: Option<u32>,
    },
    /// A timer armed by the header's thread, or one such timer expiring.
    Timer {
        /// Expired (true) or armed.
        expire: bool,
        /// Keyed hash of the timer's address.
        timer: u64,
        /// `CLOCK_MONOTONIC` expiry, negative if on another clock (arm only).
        expires: i64,
    },
    /// The header's thread starts running a goroutine.
    GoRun {
        /// The goroutine.
        goid: u64,
        /// The goroutine that created it (0: unknown).
        parent: u64,
        /// Entry address of its start function.
        start_pc: u64,
    },
    /// The goroutine on the header's thread parks.
    GoPark {
        /// The goroutine.
        goid: u64,
        /// The runtime's wait reason number.
        reason: u32,
        /// The probed binary's slot (whose reason names apply).
        slot: u32,
    },
    /// The goroutine that just parked on the header's thread waits for data on this
    /// socket.
    GoNetWait {
        /// The goroutine.
        goid: u64,
        /// The socket's ends from the receiver's side.
        flow: RawFlow,
        /// TCP `rcv_nxt` at the park.
        seq: Option<u32>,
    },
    /// A goroutine made runnable by code on the header's thread.
    GoReady {
        /// The goroutine readied.
        goid: u64,
        /// The goroutine the thread carried (0: none).
        by: u64,
    },
}

/// One record from a ring buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// `CLOCK_MONOTONIC` nanoseconds.
    pub ts: u64,
    /// Subject thread (see [`Body`]).
    pub tid: u32,
    /// Its process.
    pub tgid: u32,
    /// Payload.
    pub body: Body,
    /// Attached stack, if any.
    pub stack: Option<RawStack>,
}

/// Why a record could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Shorter than its header or its declared body.
    #[error("record too short ({0} bytes)")]
    Short(usize),
    /// Unknown record type (the BPF object and this parser disagree).
    #[error("unknown record type {0}")]
    UnknownType(u16),
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn need(&self, n: usize) -> Result<(), RecordError> {
        if self.at + n > self.b.len() {
            return Err(RecordError::Short(self.b.len()));
        }
        Ok(())
    }
    fn u8(&mut self) -> Result<u8, RecordError> {
        self.need(1)?;
        self.at += 1;
        Ok(self.b[self.at - 1])
    }
    fn u16(&mut self) -> Result<u16, RecordError> {
        self.need(2)?;
        let v = u16::from_ne_bytes([self.b[self.at], self.b[self.at + 1]]);
        self.at += 2;
        Ok(v)
    }
    fn u32(&mut self) -> Result<u32, RecordError> {
        self.need(4)?;
        let mut a = [0u8; 4];
        a.copy_from_slice(&self.b[self.at..self.at + 4]);
        self.at += 4;
        Ok(u32::from_ne_bytes(a))
    }
    fn u64(&mut self) -> Result<u64, RecordError> {
        self.need(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(&self.b[self.at..self.at + 8]);
        self.at += 8;
        Ok(u64::from_ne_bytes(a))
    }
    fn skip(&mut self, n: usize) -> Result<(), RecordError> {
        self.need(n)?;
        self.at += n;
        Ok(())
    }
    /// A NUL-terminated string in a fixed field of `n` bytes.
    fn str(&mut self, n: usize) -> Result<String, RecordError> {
        self.need(n)?;
        let f = &self.b[self.at..self.at + n];
        self.at += n;
        let end = f.iter().position(|&c| c == 0).unwrap_or(n);
        Ok(String::from_utf8_lossy(&f[..end]).into_owned())
    }
}

fn waker_ctx(kind: u32, what: u32) -> WakerCtx {
    use types::waker_kind as k;
    match types::waker_kind(kind) {
        k::WAKER_THREAD => WakerCtx::Thread,
        k::WAKER_IRQ => WakerCtx::Irq(what),
        k::WAKER_SOFTIRQ => WakerCtx::Softirq(what),
        k::WAKER_TIMER => WakerCtx::Timer,
        _ => WakerCtx::Unknown,
    }
}

/// Parse one record.
pub fn parse(b: &[u8]) -> Result<Record, RecordError> {
    if b.len() < HDR {
        return Err(RecordError::Short(b.len()));
    }
    let mut c = Cursor { b, at: 0 };
    let ts = c.u64()?;
    let typ = c.u16()?;
    let _len = c.u16()?;
    let flags = c.u16()?;
    c.skip(2)?;
    let tid = c.u32()?;
    let tgid = c.u32()?;
    let body = match typ {
        ty::SWITCH | ty::WAKING | ty::WAKEUP_NEW | ty::FORK | ty::EXEC | ty::EXIT | ty::TASK => {
            sched_body(typ, &mut c)?
        }
        ty::IRQ_ENTRY
        | ty::IRQ_EXIT
        | ty::SOFTIRQ_ENTRY
        | ty::SOFTIRQ_EXIT
        | ty::BLOCK_ISSUE
        | ty::BLOCK_COMPLETE
        | ty::NET_XMIT
        | ty::NET_RECV => device_body(typ, &mut c)?,
        ty::SYS_ENTER | ty::SYS_EXIT | ty::MAPS_CHANGED | ty::USTACK => sys_body(typ, &mut c)?,
        ty::SAMPLE => Body::Sample,
        ty::SIGNAL_GENERATE | ty::SIGNAL_DELIVER | ty::TIMER_ARM | ty::TIMER_EXPIRE => {
            signal_timer_body(typ, &mut c)?
        }
        ty::SOCK_SEND | ty::SOCK_READY => sock_body(typ, &mut c)?,
        ty::GO_RUN => Body::GoRun {
            goid: c.u64()?,
            parent: c.u64()?,
            start_pc: c.u64()?,
        },
        ty::GO_PARK => Body::GoPark {
            goid: c.u64()?,
            reason: c.u32()?,
            slot: c.u32()?,
        },
        ty::GO_NETWAIT => {
            let flow = raw_flow(&mut c)?;
            let goid = c.u64()?;
            let (seq, has_seq) = (c.u32()?, c.u32()? != 0);
            Body::GoNetWait {
                goid,
                flow,
                seq: has_seq.then_some(seq),
            }
        }
        ty::GO_READY => Body::GoReady {
            goid: c.u64()?,
            by: c.u64()?,
        },
        other => return Err(RecordError::UnknownType(other)),
    };
    let stack = if flags & REC_F_STACK != 0 {
        Some(raw_stack(&mut c)?)
    } else {
        None
    };
    Ok(Record {
        ts,
        tid,
        tgid,
        body,
        stack,
    })
}

/// The body of a scheduler or process record: switch, wake-up, fork, exec, exit,
/// thread name.
fn sched_body(typ: u16, c: &mut Cursor<'_>) -> Result<Body, RecordError> {
    Ok(match typ {
        ty::SWITCH => {
            let next_tid = c.u32()?;
            let next_tgid = c.u32()?;
            let prev_state = c.u32()?;
            let prev_exit_state = c.u32()?;
            let preempt = c.u8()? != 0;
            c.skip(7)?;
            Body::Switch {
                next_tid,
                next_tgid,
                prev_state,
                prev_exit_state,
                preempt,
            }
        }
        ty::WAKING | ty::WAKEUP_NEW => {
            let wakee_tid = c.u32()?;
            let wakee_tgid = c.u32()?;
            let target_cpu = c.u32()?;
            let kind = c.u32()?;
            let what = c.u32()?;
            c.skip(4)?;
            Body::Wake {
                new: typ == ty::WAKEUP_NEW,
                wakee_tid,
                wakee_tgid,
                target_cpu,
                waker: waker_ctx(kind, what),
            }
        }
        ty::FORK => Body::Fork {
            child_tid: c.u32()?,
            child_tgid: c.u32()?,
        },
        ty::EXEC => Body::Exec {
            comm: c.str(16)?,
            filename: c.str(128)?,
        },
        ty::EXIT => Body::Exit,
        ty::TASK => Body::Task { comm: c.str(16)? },
        other => return Err(RecordError::UnknownType(other)),
    })
}

/// The body of an interrupt, block or network record.
fn device_body(typ: u16, c: &mut Cursor<'_>) -> Result<Body, RecordError> {
    Ok(match typ {
        ty::IRQ_ENTRY | ty::IRQ_EXIT => {
            let irq = c.u32()?;
            let ret = c.u32()? as i32;
            let name = c.str(32)?;
            Body::Irq {
                entry: typ == ty::IRQ_ENTRY,
                irq,
                ret,
                name,
            }
        }
        ty::SOFTIRQ_ENTRY | ty::SOFTIRQ_EXIT => {
            let vec = c.u32()?;
            c.skip(4)?;
            Body::Softirq {
                entry: typ == ty::SOFTIRQ_ENTRY,
                vec,
            }
        }
        ty::BLOCK_ISSUE | ty::BLOCK_COMPLETE => {
            let sector = c.u64()?;
            let dev = c.u32()?;
            let bytes = c.u32()?;
            let cmd_flags = c.u32()?;
            let error = c.u32()? as i32;
            Body::Block {
                issue: typ == ty::BLOCK_ISSUE,
                dev,
                sector,
                bytes,
                cmd_flags,
                error,
            }
        }
        ty::NET_XMIT | ty::NET_RECV => {
            let dev = c.str(16)?;
            let bytes = c.u32()?;
            c.skip(4)?;
            Body::Net {
                xmit: typ == ty::NET_XMIT,
                dev,
                bytes,
            }
        }
        other => return Err(RecordError::UnknownType(other)),
    })
}

/// A socket's two ends (`struct rec_flow`).
fn raw_flow(c: &mut Cursor<'_>) -> Result<RawFlow, RecordError> {
    let mut flow = RawFlow::default();
    for a in [&mut flow.local_addr, &mut flow.remote_addr] {
        for b in a.iter_mut() {
            *b = c.u8()?;
        }
    }
    flow.local_port = c.u16()?;
    flow.remote_port = c.u16()?;
    flow.family = c.u16()?;
    flow.proto = c.u16()?;
    Ok(flow)
}

/// The body of a socket send or a socket's data arriving.
fn sock_body(typ: u16, c: &mut Cursor<'_>) -> Result<Body, RecordError> {
    let flow = raw_flow(c)?;
    let (n, seq, has_seq) = (c.u32()?, c.u32()?, c.u32()? != 0);
    c.skip(4)?;
    let seq = has_seq.then_some(seq);
    Ok(if typ == ty::SOCK_SEND {
        Body::SockSend {
            flow,
            bytes: n,
            seq,
        }
    } else {
        Body::SockReady {
            flow,
            wakee_tid: n,
            seq,
        }
    })
}

fn signal_timer_body(typ: u16, c: &mut Cursor<'_>) -> Result<Body, RecordError> {
    Ok(match typ {
        ty::SIGNAL_GENERATE | ty::SIGNAL_DELIVER => {
            let target_tid = c.u32()?;
            let target_tgid = c.u32()?;
            let sig = c.u32()? as i32;
            let result = c.u32()? as i32;
            let group = c.u32()? != 0;
            c.skip(4)?;
            Body::Signal {
                deliver: typ == ty::SIGNAL_DELIVER,
                target_tid,
                target_tgid,
                sig,
                result,
                group,
            }
        }
        _ => {
            let timer = c.u64()?;
            let expires = c.u64()? as i64;
            Body::Timer {
                expire: typ == ty::TIMER_EXPIRE,
                timer,
                expires,
            }
        }
    })
}

/// The body of a system call, mapping change or user stack copy record.
fn sys_body(typ: u16, c: &mut Cursor<'_>) -> Result<Body, RecordError> {
    Ok(match typ {
        ty::SYS_ENTER => {
            let arg0 = c.u64()?;
            let obj = c.u64()?;
            let nr = c.u32()?;
            let obj_kind = c.u32()?;
            Body::SysEnter {
                nr,
                arg0,
                obj,
                obj_kind,
            }
        }
        ty::SYS_EXIT => {
            let ret = c.u64()? as i64;
            let nr = c.u32()?;
            c.skip(4)?;
            Body::SysExit { nr, ret }
        }
        ty::MAPS_CHANGED => {
            let reason = c.u32()?;
            c.skip(4)?;
            Body::MapsChanged { reason }
        }
        ty::USTACK => {
            let ip = c.u64()?;
            let sp = c.u64()?;
            let bp = c.u64()?;
            let size = c.u32()? as usize;
            let flags = c.u32()?;
            c.at = USTACK_HDR;
            c.need(size)?;
            let data = c.b[c.at..c.at + size].to_vec();
            c.at += size;
            Body::UserStack(StackCopy {
                ip,
                sp,
                bp,
                flags,
                data,
            })
        }
        other => return Err(RecordError::UnknownType(other)),
    })
}

/// The stack trailer of a record that has one.
fn raw_stack(c: &mut Cursor<'_>) -> Result<RawStack, RecordError> {
    let kind = c.u8()?;
    let sflags = c.u8()?;
    let nu = c.u8()? as usize;
    let nk = c.u8()? as usize;
    c.skip(4)?;
    let mut kernel = Vec::with_capacity(nk);
    for _ in 0..nk {
        kernel.push(c.u64()?);
    }
    let mut user = Vec::with_capacity(nu);
    for _ in 0..nu {
        user.push(c.u64()?);
    }
    let memo = if sflags & stack_flags::USER_MEMO != 0 {
        Some(c.u64()?)
    } else {
        None
    };
    Ok(RawStack {
        kind,
        flags: sflags,
        user,
        kernel,
        memo,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(ts: u64, typ: u16, flags: u16, tid: u32, tgid: u32) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&ts.to_ne_bytes());
        v.extend_from_slice(&typ.to_ne_bytes());
        v.extend_from_slice(&0u16.to_ne_bytes());
        v.extend_from_slice(&flags.to_ne_bytes());
        v.extend_from_slice(&0u16.to_ne_bytes());
        v.extend_from_slice(&tid.to_ne_bytes());
        v.extend_from_slice(&tgid.to_ne_bytes());
        v
    }

    #[test]
    fn user_stack_copy_parses() {
        let mut b = hdr(5, ty::USTACK, 0, 7, 7);
        for x in [0x401000u64, 0x7ffd_0000, 0x7ffd_0040] {
            b.extend_from_slice(&x.to_ne_bytes());
        }
        b.extend_from_slice(&16u32.to_ne_bytes());
        b.extend_from_slice(&copy_flags::CUT.to_ne_bytes());
        b.resize(USTACK_HDR, 0);
        b.extend((0..16u8).collect::<Vec<_>>());
        let r = parse(&b).unwrap();
        let Body::UserStack(c) = r.body else {
            panic!("not a stack copy: {:?}", r.body)
        };
        assert_eq!(
            (c.ip, c.sp, c.bp, c.flags),
            (0x401000, 0x7ffd_0000, 0x7ffd_0040, 1)
        );
        assert_eq!(c.data, (0..16u8).collect::<Vec<_>>());
        // A size beyond the record is an error, not a read past it.
        let mut short = b.clone();
        short.truncate(USTACK_HDR + 8);
        assert!(matches!(parse(&short), Err(RecordError::Short(_))));
    }

    #[test]
    fn switch_with_stack_parses() {
        let mut b = hdr(77, ty::SWITCH, REC_F_STACK, 5, 4);
        for x in [9u32, 8, 1, 0] {
            b.extend_from_slice(&x.to_ne_bytes());
        }
        b.push(0);
        b.extend_from_slice(&[0; 7]);
        b.extend_from_slice(&[0, stack_flags::SCANNED, 2, 1, 0, 0, 0, 0]);
        for a in [0xffff_ffff_8100_0000u64, 0x1000, 0x2000] {
            b.extend_from_slice(&a.to_ne_bytes());
        }
        let r = parse(&b).unwrap();
        assert_eq!(r.ts, 77);
        assert_eq!(r.tid, 5);
        assert_eq!(
            r.body,
            Body::Switch {
                next_tid: 9,
                next_tgid: 8,
                prev_state: 1,
                prev_exit_state: 0,
                preempt: false
            }
        );
        let s = r.stack.unwrap();
        assert_eq!(s.user, vec![0x1000, 0x2000]);
        assert_eq!(s.kernel, vec![0xffff_ffff_8100_0000]);
        assert_eq!(s.flags, stack_flags::SCANNED);
    }

    #[test]
    fn short_and_unknown_records_are_errors() {
        assert_eq!(parse(&[0; 10]), Err(RecordError::Short(10)));
        let b = hdr(1, 99, 0, 1, 1);
        assert_eq!(parse(&b), Err(RecordError::UnknownType(99)));
        let mut b = hdr(1, ty::SWITCH, 0, 1, 1);
        b.extend_from_slice(&[0; 5]);
        assert!(matches!(parse(&b), Err(RecordError::Short(_))));
        // A stack flag with frames missing.
        let mut b = hdr(1, ty::EXIT, REC_F_STACK, 1, 1);
        b.extend_from_slice(&[0, 0, 3, 0, 0, 0, 0, 0]);
        assert!(matches!(parse(&b), Err(RecordError::Short(_))));
    }
}

/// The parser against the C side's layouts: each record is built from the structs the
/// skeleton generates from `records.h` (through the object's BTF), then parsed.
#[cfg(test)]
mod abi {
    use super::*;
    use crate::skel::types;
    use std::mem::size_of;

    /// The bytes of a generated `#[repr(C)]` struct of integers and integer arrays.
    fn bytes_of<T: Copy>(v: &T) -> Vec<u8> {
        // SAFETY: `T` is a plain `#[repr(C)]` struct generated from the BPF object's BTF
        // (integers and arrays of integers, every padding byte an explicit `pad` field),
        // so all `size_of::<T>()` bytes behind the reference are initialized.
        unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()) }.to_vec()
    }

    fn header(typ: u16, body: usize) -> types::rec_hdr {
        types::rec_hdr {
            ts: 0x1122_3344_5566_7788,
            r#type: typ,
            len: (HDR + body) as u16,
            flags: 0,
            pad: 0,
            tid: 4242,
            tgid: 4240,
        }
    }

    fn record<T: Copy>(typ: u16, body: &T) -> Record {
        let mut b = bytes_of(&header(typ, size_of::<T>()));
        b.extend(bytes_of(body));
        let r = parse(&b).expect("parses");
        assert_eq!((r.ts, r.tid, r.tgid), (0x1122_3344_5566_7788, 4242, 4240));
        r
    }

    fn c_str<const N: usize>(s: &str) -> [i8; N] {
        let mut a = [0i8; N];
        for (d, c) in a.iter_mut().zip(s.bytes()) {
            *d = c as i8;
        }
        a
    }

    #[test]
    fn header_and_stack_copy_sizes_match_the_c_structs() {
        assert_eq!(size_of::<types::rec_hdr>(), HDR);
        // The copied stack starts at USTACK_HDR, past the header and rec_ustack.
        assert!(size_of::<types::rec_hdr>() + size_of::<types::rec_ustack>() <= USTACK_HDR);
        assert_eq!(size_of::<types::rec_stack>(), 8);
        // probes::set_ranges writes the range table's values by hand.
        let n = crate::probes::MAX_RANGES;
        assert_eq!(size_of::<types::code_ranges>(), 8 + 16 * n);
    }

    #[test]
    fn stack_kinds_are_the_trace_formats_codes() {
        use causeway_format::StackKind;
        use types::stack_kind as k;
        for (c, want) in [
            (k::STACK_KIND_SWITCH_OUT, StackKind::SwitchOut),
            (k::STACK_KIND_WAKER, StackKind::Waker),
            (k::STACK_KIND_WAKER_SAMPLE, StackKind::WakerSample),
            (k::STACK_KIND_SYSCALL, StackKind::Syscall),
            (k::STACK_KIND_SAMPLE, StackKind::Sample),
        ] {
            assert_eq!(StackKind::from_u8(c.0 as u8), want);
        }
    }

    #[test]
    fn a_sample_is_a_header_and_a_stack_trailer() {
        let mut h = header(ty::SAMPLE, 0);
        h.flags = REC_F_STACK;
        let mut b = bytes_of(&h);
        b.extend(bytes_of(&types::rec_stack {
            kind: types::stack_kind::STACK_KIND_SAMPLE.0 as u8,
            flags: 0,
            n_user: 1,
            n_kernel: 0,
            pad: 0,
        }));
        b.extend(0x0040_1000_u64.to_ne_bytes());
        let r = parse(&b).expect("parses");
        assert_eq!(r.body, Body::Sample);
        let st = r.stack.expect("stack");
        assert_eq!((st.kind, st.user.as_slice()), (3, &[0x0040_1000_u64][..]));
    }

    #[test]
    fn switch_and_wake_fields_sit_where_the_c_side_puts_them() {
        let sw = types::rec_switch {
            next_tid: 7,
            next_tgid: 8,
            prev_state: 0x402,
            prev_exit_state: 0x10,
            preempt: 1,
            pad: [0; 7],
        };
        let r = record(ty::SWITCH, &sw);
        assert!(matches!(
            r.body,
            Body::Switch {
                next_tid: 7,
                next_tgid: 8,
                prev_state: 0x402,
                prev_exit_state: 0x10,
                preempt: true
            }
        ));
        let wk = types::rec_wake {
            wakee_tid: 11,
            wakee_tgid: 12,
            target_cpu: 1,
            waker_kind: 1,
            irq_or_vec: 33,
            pad: 0,
        };
        let r = record(ty::WAKING, &wk);
        assert!(matches!(
            r.body,
            Body::Wake {
                new: false,
                wakee_tid: 11,
                wakee_tgid: 12,
                target_cpu: 1,
                waker: WakerCtx::Irq(33)
            }
        ));
    }

    #[test]
    fn string_block_and_syscall_fields_sit_where_the_c_side_puts_them() {
        let ex = types::rec_exec {
            comm: c_str("gzip"),
            filename: c_str("/usr/bin/gzip"),
        };
        let r = record(ty::EXEC, &ex);
        assert!(
            matches!(&r.body, Body::Exec { comm, filename } if comm == "gzip" && filename == "/usr/bin/gzip")
        );
        let irq = types::rec_irq {
            irq: 24,
            ret: -1,
            name: c_str("virtio0-requests"),
        };
        let r = record(ty::IRQ_ENTRY, &irq);
        assert!(
            matches!(&r.body, Body::Irq { entry: true, irq: 24, ret: -1, name } if name == "virtio0-requests")
        );
        let blk = types::rec_block {
            sector: 123_456_789,
            dev: (254 << 20) | 1,
            bytes: 4096,
            cmd_flags: 0x801,
            error: -5,
        };
        let r = record(ty::BLOCK_COMPLETE, &blk);
        assert!(matches!(
            r.body,
            Body::Block {
                issue: false,
                dev: 0x0fe0_0001,
                sector: 123_456_789,
                bytes: 4096,
                cmd_flags: 0x801,
                error: -5
            }
        ));
        let net = types::rec_net {
            dev: c_str("lo"),
            bytes: 1500,
            pad: 0,
        };
        let r = record(ty::NET_XMIT, &net);
        assert!(matches!(&r.body, Body::Net { xmit: true, dev, bytes: 1500 } if dev == "lo"));
        let se = types::rec_sys_enter {
            arg0: 3,
            obj: 0xdead_beef,
            nr: 0,
            obj_kind: 1,
        };
        let r = record(ty::SYS_ENTER, &se);
        assert!(matches!(
            r.body,
            Body::SysEnter {
                nr: 0,
                arg0: 3,
                obj: 0xdead_beef,
                obj_kind: 1
            }
        ));
        let sx = types::rec_sys_exit {
            ret: -11,
            nr: 7,
            pad: 0,
        };
        let r = record(ty::SYS_EXIT, &sx);
        assert!(matches!(r.body, Body::SysExit { nr: 7, ret: -11 }));
    }

    #[test]
    fn signal_and_timer_fields_sit_where_the_c_side_puts_them() {
        let sg = types::rec_signal {
            target_tid: 31,
            target_tgid: 30,
            sig: 19,
            result: 2,
            group: 1,
            pad: 0,
        };
        let r = record(ty::SIGNAL_GENERATE, &sg);
        assert_eq!(
            r.body,
            Body::Signal {
                deliver: false,
                target_tid: 31,
                target_tgid: 30,
                sig: 19,
                result: 2,
                group: true
            }
        );
        let r = record(ty::SIGNAL_DELIVER, &sg);
        assert!(matches!(
            r.body,
            Body::Signal {
                deliver: true,
                sig: 19,
                ..
            }
        ));
        let tm = types::rec_timer {
            timer: 0xfeed_f00d,
            expires: -1,
        };
        let r = record(ty::TIMER_ARM, &tm);
        assert_eq!(
            r.body,
            Body::Timer {
                expire: false,
                timer: 0xfeed_f00d,
                expires: -1
            }
        );
        let r = record(ty::TIMER_EXPIRE, &tm);
        assert!(matches!(r.body, Body::Timer { expire: true, .. }));
    }

    #[test]
    fn socket_fields_sit_where_the_c_side_puts_them() {
        let mut flow = types::rec_flow {
            local_port: 5000,
            remote_port: 41230,
            family: 2,
            proto: 6,
            ..Default::default()
        };
        flow.local_addr[15] = 1;
        flow.remote_addr[15] = 2;
        let send = types::rec_sock_send {
            flow,
            bytes: 64,
            seq: 0xdead_beef,
            has_seq: 1,
            pad: 0,
        };
        let r = record(ty::SOCK_SEND, &send);
        let Body::SockSend {
            flow: f,
            bytes,
            seq,
        } = r.body
        else {
            panic!("not a send: {:?}", r.body);
        };
        assert_eq!((bytes, seq), (64, Some(0xdead_beef)));
        assert_eq!(
            (f.local_port, f.remote_port, f.family, f.proto),
            (5000, 41230, 2, 6)
        );
        assert_eq!((f.local_addr[15], f.remote_addr[15]), (1, 2));
        let ready = types::rec_sock_ready {
            flow,
            wakee_tid: 77,
            seq: 5,
            has_seq: 0,
            pad: 0,
        };
        let r = record(ty::SOCK_READY, &ready);
        assert!(matches!(
            r.body,
            Body::SockReady {
                wakee_tid: 77,
                seq: None,
                ..
            }
        ));
    }

    #[test]
    fn goroutine_fields_sit_where_the_c_side_puts_them() {
        let run = types::rec_go_run {
            goid: 18,
            parent_goid: 1,
            start_pc: 0x4a_1b2c,
        };
        assert_eq!(
            record(ty::GO_RUN, &run).body,
            Body::GoRun {
                goid: 18,
                parent: 1,
                start_pc: 0x4a_1b2c
            }
        );
        let park = types::rec_go_park {
            goid: u64::MAX,
            reason: 14,
            slot: 3,
        };
        assert_eq!(
            record(ty::GO_PARK, &park).body,
            Body::GoPark {
                goid: u64::MAX,
                reason: 14,
                slot: 3
            }
        );
        let ready = types::rec_go_ready {
            goid: 7,
            by_goid: 0,
        };
        assert_eq!(
            record(ty::GO_READY, &ready).body,
            Body::GoReady { goid: 7, by: 0 }
        );
    }

    #[test]
    fn stack_trailer_and_stack_copy_sit_where_the_c_side_puts_them() {
        let mut b = bytes_of(&header(ty::TASK, size_of::<types::rec_task>()));
        b[12] = REC_F_STACK as u8; // rec_hdr.flags, little end first on x86-64
        b.extend(bytes_of(&types::rec_task {
            comm: c_str("worker"),
        }));
        b.extend(bytes_of(&types::rec_stack {
            kind: 1,
            flags: 16,
            n_user: 1,
            n_kernel: 2,
            pad: 0,
        }));
        for frame in [0xffff_ffff_8100_0000u64, 0xffff_ffff_8100_0010, 0x5555_0000] {
            b.extend(frame.to_ne_bytes());
        }
        let r = parse(&b).expect("parses");
        assert!(matches!(&r.body, Body::Task { comm } if comm == "worker"));
        let st = r.stack.expect("stack trailer");
        assert_eq!((st.kind, st.flags), (1, 16));
        assert_eq!(
            st.kernel,
            vec![0xffff_ffff_8100_0000, 0xffff_ffff_8100_0010]
        );
        assert_eq!(st.user, vec![0x5555_0000]);

        let us = types::rec_ustack {
            ip: 0x401000,
            sp: 0x7ffd_0000,
            bp: 0x7ffd_0040,
            size: 16,
            flags: 1,
        };
        let mut b = bytes_of(&header(ty::USTACK, USTACK_HDR - HDR + 16));
        b.extend(bytes_of(&us));
        b.resize(USTACK_HDR, 0);
        b.extend((0u8..16).collect::<Vec<u8>>());
        let r = parse(&b).expect("parses");
        let Body::UserStack(copy) = r.body else {
            panic!("not a stack copy: {:?}", r.body);
        };
        assert_eq!(
            (copy.ip, copy.sp, copy.bp, copy.flags),
            (0x401000, 0x7ffd_0000, 0x7ffd_0040, 1)
        );
        assert_eq!(copy.data, (0u8..16).collect::<Vec<u8>>());
    }
}

#[cfg(test)]
mod copy_flag_tests {
    use crate::skel::types;

    #[test]
    fn the_unwinder_reads_the_flags_the_bpf_side_sets() {
        use causeway_unwind::copy_flags as f;
        assert_eq!(f::CUT, types::copy_flag::USTK_F_CUT.0);
        assert_eq!(f::NO_VMA, types::copy_flag::USTK_F_NO_VMA.0);
        assert_eq!(f::RANGE_LOOKUP, types::copy_flag::USTK_F_RANGE_LOOKUP.0);
        assert_eq!(f::RANGE_STALE, types::copy_flag::USTK_F_RANGE_STALE.0);
        assert_eq!(f::TOP, types::copy_flag::USTK_F_TOP.0);
    }
}
