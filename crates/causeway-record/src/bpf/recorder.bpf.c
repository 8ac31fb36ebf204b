// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* causeway's kernel recorder.
 *
 * Scheduler, wake-up, process, interrupt, block, network and syscall events of the
 * target processes go to one BPF ring buffer per CPU, with scoped user stacks (Uscope
 * §III) and optional kernel stacks. Which processes are targets is kept in a tgid map
 * that follows fork and exec (the Trace Map), decided by name once per process.
 *
 * Every program is compiled twice, as a BTF tracepoint (tp_btf) and as a raw
 * tracepoint; user space loads one family (tp_btf first). Bodies read the
 * tracepoints' arguments through TASK_READ, bpf_core_cast or BPF_CORE_READ so they
 * verify in both; the current task (bpf_get_current_task_btf) is a trusted pointer in
 * both. On the hot paths, plain loads (the first two) rather than probe-read helper
 * calls: docs/causeway-record.md, "Overhead", says why.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "causeway/common.bpf.h"
#include "abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "config.h"
#include "ring.h"
#include "task_regs.h"
#include "trace_map.h"
#include "ustack_walk.h"
#include "ustack_copy.h"
#include "wake_sampling.h"
#include "reclaim.h"

/* ---- handlers ---- */

/* A field of a task the tracepoint passed: read directly in the BTF family (its
 * arguments are trusted kernel pointers), with a probe read in the raw family (plain
 * numbers there). `direct` is a constant of each entry point (see BOTH), so each program
 * keeps one of the two; on the scheduler's path the helper calls were ~15% of a run. */
#define TASK_READ(direct, p, f) ((direct) ? (p)->f : BPF_CORE_READ(p, f))

static __always_inline void emit_sock_ready(struct task_struct *wakee, __u32 wakee_tid,
					    __u32 cur_tid, __u32 cur_tgid, __u64 ts);
static __always_inline bool go_idle(__u32 tid);

static __always_inline void on_switch(void *ctx, bool preempt, struct task_struct *prev,
				      struct task_struct *next, unsigned int prev_state, bool direct)
{
	if (!(events & EV_SCHED))
		return;
	__u32 prev_tgid = TASK_READ(direct, prev, tgid);
	__u32 next_tgid = TASK_READ(direct, next, tgid);
	bool prev_mine = is_mine(prev_tgid, prev);
	if (!prev_mine && !is_mine(next_tgid, next))
		return;
	__u32 prev_tid = TASK_READ(direct, prev, pid);
	__u32 next_tid = TASK_READ(direct, next, pid);
	note_task(prev, prev_tid, prev_tgid, false, TASK_READ(direct, prev, start_time));
	note_task(next, next_tid, next_tgid, false, TASK_READ(direct, next, start_time));
	struct scratch *s = get_scratch();
	if (!s)
		return;
	__u64 ts = bpf_ktime_get_ns();
	struct rec_hdr *h = begin(s, REC_SWITCH, prev_tid, prev_tgid, ts);
	struct rec_switch *b = (void *)(s->buf + sizeof(*h));
	b->next_tid = next_tid;
	b->next_tgid = next_tgid;
	b->prev_state = prev_state;
	b->prev_exit_state = TASK_READ(direct, prev, exit_state);
	b->preempt = preempt;
	h->len = sizeof(*h) + sizeof(*b);
	if (prev_mine && !preempt && prev_state != 0)
		note_blocked(prev_tid, ts);
	/* A blocking switch-out of a recorded thread: where it waits. */
	if (prev_mine && !preempt && prev_state != 0 && (stack_on & STACK_ON_SWITCH)) {
		/* TASK_UNINTERRUPTIBLE without TASK_NOLOAD: disk and other kernel waits. */
		bool d_state = (prev_state & 0x2) && !(prev_state & 0x400);
		bool kern = kernel_stacks == KSTACK_ALL || (kernel_stacks == KSTACK_AUTO && d_state);
		add_stack(ctx, s, h, sizeof(*b), STACK_KIND_SWITCH_OUT, !go_idle(prev_tid), kern);
	}
	submit(s->buf, h->len);
}

/* Softirq vectors (include/linux/interrupt.h) whose wake-ups the context explains. */
#define SIRQ_TIMER 1
#define SIRQ_NET_TX 2
#define SIRQ_NET_RX 3
#define SIRQ_HRTIMER 8

/* Whether a wake-up in interrupt context is explained by the context alone, so that
 * its kernel stack adds nothing the analyses use: an hrtimer callback or a timer
 * softirq is a timeout; a network softirq is a packet, and its sender comes from the
 * socket mark that follows. Measured on the scheduler path, that kernel stack cost
 * ~7 us of the ~7.8 us of a wake-up, paid once per request by a network server (the
 * reply's wake-up of its client, and the timer that ends a backend wait). Block
 * completion and other interrupts keep theirs: their frames name the driver. */
static __always_inline bool context_names_cause(__u32 kind, __u32 what)
{
	if (kind == WAKER_TIMER)
		return true;
	return kind == WAKER_SOFTIRQ && (what == SIRQ_TIMER || what == SIRQ_HRTIMER ||
					 what == SIRQ_NET_TX || what == SIRQ_NET_RX);
}

static __always_inline void on_wake(void *ctx, struct task_struct *p, __u16 type, bool direct)
{
	if (!(events & EV_SCHED))
		return;
	__u32 wakee_tgid = TASK_READ(direct, p, tgid);
	if (wakee_tgid == self_tgid)
		return;
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 cur_tgid = cur->tgid;
	__u32 kind = WAKER_THREAD;
	__u32 what = 0;
	struct cpu_ctx *cc = get_cpuctx();
	if (cc && cc->in_irq) {
		kind = WAKER_IRQ;
		what = cc->irq;
	} else if (cc && cc->in_hrtimer) {
		kind = WAKER_TIMER;
	} else if (cc && cc->in_softirq) {
		kind = WAKER_SOFTIRQ;
		what = cc->vec;
	}
	bool waker_mine = kind == WAKER_THREAD && is_mine(cur_tgid, cur);
	bool wakee_mine = is_mine(wakee_tgid, p);
	if (!wakee_mine && !waker_mine)
		return;
	__u32 wakee_tid = TASK_READ(direct, p, pid);
	__u32 cur_tid = cur->pid;
	note_task(p, wakee_tid, wakee_tgid, false, TASK_READ(direct, p, start_time));
	if (kind == WAKER_THREAD)
		note_task(cur, cur_tid, cur_tgid, false, cur->start_time);
	struct scratch *s = get_scratch();
	if (!s)
		return;
	__u64 ts = bpf_ktime_get_ns();
	struct rec_hdr *h = begin(s, type, cur_tid, cur_tgid, ts);
	struct rec_wake *b = (void *)(s->buf + sizeof(*h));
	b->wakee_tid = wakee_tid;
	b->wakee_tgid = wakee_tgid;
	b->target_cpu = TASK_READ(direct, p, wake_cpu);
	b->waker_kind = kind;
	b->irq_or_vec = what;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	if (stack_on & STACK_ON_WAKER) {
		bool kthread = kind == WAKER_THREAD && !cur->mm;
		bool kern = kernel_stacks == KSTACK_ALL ||
			    (kernel_stacks == KSTACK_AUTO && (kind != WAKER_THREAD || kthread) &&
			     !context_names_cause(kind, what));
		bool user = kind == WAKER_THREAD;
		__u8 sk = STACK_KIND_WAKER;
		if (user && waker_sample_min_ns && type == REC_WAKING && wakee_mine &&
		    short_wait(wakee_tid, ts)) {
			if (sample_hit())
				sk = STACK_KIND_WAKER_SAMPLE;
			else
				user = false;
		}
		/* After the draw: most short waits' wake-ups stop there, without the lookup. */
		if (user && go_idle(cur_tid))
			user = false;
		if (user || kern)
			add_stack(ctx, s, h, sizeof(*b), sk, user, kern);
	}
	submit(s->buf, h->len);
	if (type == REC_WAKING)
		emit_sock_ready(p, wakee_tid, cur_tid, cur_tgid, ts);
}

static __always_inline void on_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	if (!is_mine(ptgid, parent))
		return;
	__u32 ctid = BPF_CORE_READ(child, pid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	note_thread_top(ctid);
	if (ctgid != ptgid) {
		__u8 one = 1;
		bpf_map_update_elem(&tracked, &ctgid, &one, BPF_ANY);
		bpf_map_delete_elem(&negative, &ctgid);
	}
	if (!(events & EV_PROC))
		return;
	note_task(child, ctid, ctgid, true, 0);
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h =
		begin(s, REC_FORK, BPF_CORE_READ(parent, pid), ptgid, bpf_ktime_get_ns());
	struct rec_fork *b = (void *)(s->buf + sizeof(*h));
	b->child_tid = ctid;
	b->child_tgid = ctgid;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
	if (ctgid != ptgid)
		emit_maps_changed(ctid, ctgid, 3);
}

static __always_inline void on_exec(struct task_struct *p, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u32 tid = BPF_CORE_READ(p, pid);
	if (mode == MODE_COMM && !bpf_map_lookup_elem(&tracked, &tgid)) {
		/* A new program: decide again by its new name. */
		bpf_map_delete_elem(&negative, &tgid);
	}
	bpf_map_delete_elem(&thread_tops, &tid);
	if (!is_mine(tgid, p))
		return;
	bpf_map_delete_elem(&ranges, &tgid);
	if (events & EV_PROC) {
		struct scratch *s = get_scratch();
		if (!s)
			return;
		struct rec_hdr *h = begin(s, REC_EXEC, tid, tgid, bpf_ktime_get_ns());
		struct rec_exec *b = (void *)(s->buf + sizeof(*h));
		BPF_CORE_READ_STR_INTO(&b->comm, p, comm);
		const char *fname = BPF_CORE_READ(bprm, filename);
		bpf_probe_read_kernel_str(b->filename, sizeof(b->filename), fname);
		h->len = sizeof(*h) + sizeof(*b);
		submit(s->buf, h->len);
	}
	note_task(p, tid, tgid, true, 0);
	emit_maps_changed(tid, tgid, 1);
}

static __always_inline void on_exit(struct task_struct *p)
{
	if (!(events & EV_PROC))
		return;
	__u32 tgid = BPF_CORE_READ(p, tgid);
	if (!is_mine(tgid, p))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_EXIT, BPF_CORE_READ(p, pid), tgid, bpf_ktime_get_ns());
	h->len = sizeof(*h);
	submit(s->buf, h->len);
}

/* The process is gone for good (its last switch is past): forget it, so a later
 * process reusing the number is decided afresh. */
static __always_inline void on_free(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	__u32 tgid = BPF_CORE_READ(p, tgid);
	bpf_map_delete_elem(&seen, &tid);
	bpf_map_delete_elem(&thread_tops, &tid);
	if (tid == tgid) {
		bpf_map_delete_elem(&tracked, &tgid);
		__sync_fetch_and_add(&untracked_gen, 1);
		bpf_map_delete_elem(&negative, &tgid);
		bpf_map_delete_elem(&ranges, &tgid);
	}
}

static __always_inline void on_rename(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	if (!is_mine(tgid, task))
		return;
	/* The tracepoint fires before the new name is copied: the record is sent after a
	 * short delay by marking the thread unseen; its next event carries the name. */
	__u32 tid = BPF_CORE_READ(task, pid);
	bpf_map_delete_elem(&seen, &tid);
	/* The CPUs' caches of sent names must not answer for it either. */
	__sync_fetch_and_add(&renamed_gen, 1);
}

/* Interrupt records: kept when they interrupt a recorded thread or an idle CPU (where
 * completions of the target's I/O land), or everywhere with -a. */
static __always_inline bool irq_interesting(void)
{
	if (mode == MODE_ALL)
		return true;
	struct task_struct *cur = bpf_get_current_task_btf();
	if (cur->pid == 0)
		return true;
	return is_mine(cur->tgid, cur);
}

static __always_inline void on_irq(struct irqaction *action, int irq, int ret, bool entry)
{
	struct cpu_ctx *cc = get_cpuctx();
	if (cc) {
		cc->irq = irq;
		cc->in_irq = entry;
	}
	if (!(events & EV_IRQ) || !irq_interesting())
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, entry ? REC_IRQ_ENTRY : REC_IRQ_EXIT, 0, 0,
				  bpf_ktime_get_ns());
	struct rec_irq *b = (void *)(s->buf + sizeof(*h));
	b->irq = irq;
	b->ret = ret;
	if (entry) {
		const char *name = BPF_CORE_READ(action, name);
		bpf_probe_read_kernel_str(b->name, sizeof(b->name), name);
	} else {
		b->name[0] = 0;
	}
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

static __always_inline void on_softirq(unsigned int vec, bool entry)
{
	struct cpu_ctx *cc = get_cpuctx();
	if (cc) {
		cc->vec = vec;
		cc->in_softirq = entry;
		cc->sirq_gen++;
	}
	if (!(events & EV_SOFTIRQ) || !irq_interesting())
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, entry ? REC_SOFTIRQ_ENTRY : REC_SOFTIRQ_EXIT, 0, 0,
				  bpf_ktime_get_ns());
	struct rec_softirq *b = (void *)(s->buf + sizeof(*h));
	b->vec = vec;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

/* Block requests are recorded for every process: the disk is shared, and its busy
 * time is what the disk pseudo thread of the wait-for graph needs. */
static __always_inline void on_block(struct request *rq, int error, unsigned int nr_bytes,
				     bool issue)
{
	if (!(events & EV_BLOCK))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct task_struct *cur = bpf_get_current_task_btf();
	struct rec_hdr *h = begin(s, issue ? REC_BLOCK_ISSUE : REC_BLOCK_COMPLETE, cur->pid,
				  cur->tgid, bpf_ktime_get_ns());
	struct rec_block *b = (void *)(s->buf + sizeof(*h));
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);
	__u32 major = 0, minor = 0;
	if (disk) {
		major = BPF_CORE_READ(disk, major);
		minor = BPF_CORE_READ(disk, first_minor);
	}
	b->dev = major << 20 | minor;
	/* As the block tracepoints print it: a request without a position (a flush)
	 * reports sector 0. */
	__u64 sector = BPF_CORE_READ(rq, __sector);
	b->sector = sector == (__u64)-1 ? 0 : sector;
	b->bytes = issue ? BPF_CORE_READ(rq, __data_len) : nr_bytes;
	b->cmd_flags = BPF_CORE_READ(rq, cmd_flags);
	b->error = error;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

static __always_inline void on_net(struct net_device *dev, __u32 len, bool xmit)
{
	if (!(events & EV_NET))
		return;
	struct task_struct *cur = bpf_get_current_task_btf();
	struct cpu_ctx *cc = get_cpuctx();
	bool in_softirq = cc && cc->in_softirq;
	if (mode != MODE_ALL && !is_mine(cur->tgid, cur) && !(!xmit && in_softirq))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, xmit ? REC_NET_XMIT : REC_NET_RECV, cur->pid, cur->tgid,
				  bpf_ktime_get_ns());
	struct rec_net *b = (void *)(s->buf + sizeof(*h));
	/* A plain copy of the name's array: user space reads it up to its first NUL. */
	struct net_device *d = bpf_core_cast(dev, struct net_device);
	__builtin_memcpy(b->dev, d->name, sizeof(b->dev));
	b->bytes = len;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

#include "fd_identity.h"
#include "signal_timer.h"
#include "sockets.h"
#include "golang.h"

#define NR_MMAP 9
#define PROT_EXEC 4

static __always_inline void on_sys_enter(void *ctx, struct pt_regs *regs, long id)
{
	if (id < 0 || id >= 512)
		return;
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 tgid = cur->tgid;
	if (!is_mine(tgid, cur))
		return;
	__u32 tid = cur->pid;
	struct pt_regs *r = bpf_core_cast(regs, struct pt_regs);
	if (id == NR_MMAP && (r->dx & PROT_EXEC))
		emit_maps_changed(tid, tgid, 2);
	if (!(events & EV_SYSCALL))
		return;
	__u32 key = id;
	__u8 *conf = bpf_map_lookup_elem(&syscalls, &key);
	if (!conf || !(*conf & 1))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_SYS_ENTER, tid, tgid, bpf_ktime_get_ns());
	struct rec_sys_enter *b = (void *)(s->buf + sizeof(*h));
	b->nr = id;
	b->arg0 = r->di;
	b->obj = 0;
	b->obj_kind = OBJ_NONE;
	if (*conf & 2) {
		__u32 k = 0;
		b->obj = object_of(cur, (int)b->arg0, &k);
		b->obj_kind = k;
	}
	h->len = sizeof(*h) + sizeof(*b);
	/* A kernel stack at syscall entry is always the entry path: user frames only. */
	if (stack_on & STACK_ON_SYSCALL)
		add_stack(ctx, s, h, sizeof(*b), STACK_KIND_SYSCALL, true, false);
	submit(s->buf, h->len);
}

static __always_inline void on_sys_exit(struct pt_regs *regs, long ret)
{
	if (!(events & EV_SYSCALL))
		return;
	long id = bpf_core_cast(regs, struct pt_regs)->orig_ax;
	if (id < 0 || id >= 512)
		return;
	__u32 key = id;
	__u8 *conf = bpf_map_lookup_elem(&syscalls, &key);
	if (!conf || !(*conf & 1))
		return;
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 tgid = cur->tgid;
	if (!is_mine(tgid, cur))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_SYS_EXIT, cur->pid, tgid, bpf_ktime_get_ns());
	struct rec_sys_exit *b = (void *)(s->buf + sizeof(*h));
	b->nr = id;
	b->ret = ret;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

static __always_inline void on_hrtimer(bool entry)
{
	struct cpu_ctx *cc = get_cpuctx();
	if (cc)
		cc->in_hrtimer = entry;
}

/* ---- entry points: one BTF tracepoint and one raw tracepoint per handler ---- */

static __always_inline void nest(int d)
{
	struct cpu_ctx *cc = get_cpuctx();
	if (!cc)
		return;
	cc->depth += d;
	if (d > 0 && cc->depth == 1)
		cc->spool_refused = 0;
}

/* ---- on-CPU samples ---- */

/* A periodic sample of whatever runs on this CPU (a software cpu-clock perf event per
 * CPU, opened by user space): kept when it is a recorded thread, with its user stack
 * (copied or walked as for switch-outs) and, unless kernel stacks are off, the kernel
 * frames of the interrupted context (none when it was in user mode). */
static __always_inline void on_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = task->tgid;
	if (!is_mine(tgid, task))
		return;
	__u32 tid = task->pid;
	note_task(task, tid, tgid, false, task->start_time);
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_SAMPLE, tid, tgid, bpf_ktime_get_ns());
	h->len = sizeof(*h);
	add_stack(ctx, s, h, 0, STACK_KIND_SAMPLE, true, kernel_stacks != KSTACK_NONE);
	submit(s->buf, h->len);
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	nest(1);
	on_sample(ctx);
	nest(-1);
	return 0;
}

#define BOTH(tp, args, body)                                                              \
	SEC("tp_btf/" #tp) int BPF_PROG(btf_##tp, args)                                    \
	{                                                                                  \
		const bool direct = true;                                                  \
		(void)direct;                                                              \
		nest(1);                                                                   \
		body;                                                                      \
		nest(-1);                                                                  \
		return 0;                                                                  \
	}                                                                                  \
	SEC("raw_tp/" #tp) int BPF_PROG(raw_##tp, args)                                    \
	{                                                                                  \
		const bool direct = false;                                                 \
		(void)direct;                                                              \
		nest(1);                                                                   \
		body;                                                                      \
		nest(-1);                                                                  \
		return 0;                                                                  \
	}

#define ARGS(...) __VA_ARGS__

BOTH(sched_switch, ARGS(bool preempt, struct task_struct *prev, struct task_struct *next,
			unsigned int prev_state),
     on_switch(ctx, preempt, prev, next, prev_state, direct))
BOTH(sched_waking, ARGS(struct task_struct *p), on_wake(ctx, p, REC_WAKING, direct))
BOTH(sched_wakeup_new, ARGS(struct task_struct *p), on_wake(ctx, p, REC_WAKEUP_NEW, direct))
BOTH(sched_process_fork, ARGS(struct task_struct *parent, struct task_struct *child),
     on_fork(parent, child))
BOTH(sched_process_exec, ARGS(struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm),
     on_exec(p, bprm))
BOTH(sched_process_exit, ARGS(struct task_struct *p), on_exit(p))
BOTH(sched_process_free, ARGS(struct task_struct *p), on_free(p))
BOTH(task_rename, ARGS(struct task_struct *task, const char *comm), on_rename(task))
BOTH(irq_handler_entry, ARGS(int irq, struct irqaction *action), on_irq(action, irq, 0, true))
BOTH(irq_handler_exit, ARGS(int irq, struct irqaction *action, int ret),
     on_irq(action, irq, ret, false))
BOTH(hrtimer_expire_entry, ARGS(struct hrtimer *t, ktime_t *now),
     { on_hrtimer_expire(t); on_hrtimer(true); })
BOTH(hrtimer_start, ARGS(struct hrtimer *t, enum hrtimer_mode m, bool was_armed),
     on_hrtimer_start(t))
BOTH(signal_generate, ARGS(int sig, struct kernel_siginfo *info, struct task_struct *task,
			   int group, int result),
     on_signal_generate(ctx, sig, task, group, result))
BOTH(signal_deliver, ARGS(int sig, struct kernel_siginfo *info, struct k_sigaction *ka),
     on_signal_deliver(sig))
BOTH(hrtimer_expire_exit, ARGS(struct hrtimer *t), on_hrtimer(false))
BOTH(softirq_entry, ARGS(unsigned int vec), on_softirq(vec, true))
BOTH(softirq_exit, ARGS(unsigned int vec), on_softirq(vec, false))
BOTH(block_rq_issue, ARGS(struct request *rq), on_block(rq, 0, 0, true))
BOTH(block_rq_complete, ARGS(struct request *rq, int error, unsigned int nr_bytes),
     on_block(rq, error, nr_bytes, false))
BOTH(net_dev_xmit, ARGS(struct sk_buff *skb, int rc, struct net_device *dev, unsigned int len),
     on_net(dev, len, true))
BOTH(netif_receive_skb, ARGS(struct sk_buff *skb),
     on_net(bpf_core_cast(skb, struct sk_buff)->dev, bpf_core_cast(skb, struct sk_buff)->len,
	    false))
BOTH(sock_send_length, ARGS(struct sock *sk, int ret, int flags), on_sock_send(sk, ret))
BOTH(sk_data_ready, ARGS(const struct sock *sk), on_sk_data_ready(sk))
BOTH(mm_vmscan_direct_reclaim_begin, ARGS(int order, gfp_t gfp_flags), on_reclaim(true))
BOTH(mm_vmscan_direct_reclaim_end, ARGS(unsigned long nr_reclaimed), on_reclaim(false))
BOTH(mm_vmscan_memcg_reclaim_begin, ARGS(int order, gfp_t gfp_flags), on_reclaim(true))
BOTH(mm_vmscan_memcg_reclaim_end, ARGS(unsigned long nr_reclaimed), on_reclaim(false))
BOTH(sys_enter, ARGS(struct pt_regs *regs, long id), on_sys_enter(ctx, regs, id))
BOTH(sys_exit, ARGS(struct pt_regs *regs, long ret), on_sys_exit(regs, ret))
