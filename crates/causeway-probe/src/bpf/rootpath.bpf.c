// SPDX-License-Identifier: GPL-2.0
/*
 * DARC's measurement (§3) with uprobes: F0 is timed on every call (log2 slots, for
 * the peak), and for calls of F0 that fall in the chosen peak, the function under
 * study (the end of the root-cause path so far) and each of its callees are timed
 * too; one sample per such call goes to user space, which keeps the maxcounts and
 * decides.
 *
 * Per-thread state keeps the call-path filter (§3.2): a callee is timed only when
 * the thread is in F0 and has entered the path's functions in order down to the
 * function under study, so calls of the same callee from elsewhere are ignored.
 * Recursion (§3.5): F0 and a callee are timed at their outermost call only.
 *
 * Preemption and interrupts (§3.6): while the thread is inside the function under
 * study, scheduler switches (tp_btf/sched_switch) and hard IRQ handlers on its CPU
 * (tp_btf/irq_handler_entry/exit, and the local timer's local_timer_entry/exit) are
 * timed as two pseudo-callees of that function;
 * the time is taken out of the real callee it fell in, so the contributors do not
 * overlap and compete on equal terms in the maxcount.
 *
 * Indirect calls: a probe on each `call *...` instruction of the function under study
 * reads the target from the registers (or the memory they point to) when the call is
 * about to be made, under the same call-path filter, and counts it per site in
 * `targets`; user space turns the targets into functions and times them like the
 * direct callees, in a pass of its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "causeway/common.bpf.h"
#include "rootpath.h"

const volatile __u32 targ_tgid = 0;
/* Depth of the function under study: 0 is F0 itself. */
const volatile __u32 level = 0;
/* The peak: F0 latencies in [peak_lo, peak_hi) ns; empty while only profiling F0. */
const volatile __u64 peak_lo = 0;
const volatile __u64 peak_hi = 0;
/* What one probe hit (an entry or a return) adds to the latency of the call around
 * it, calibrated by user space. On a machine where a uprobe trap costs microseconds,
 * timing F0's callees would push F0's calls out of the peak they are studied for;
 * F0's latency is corrected by the hits inside it. */
const volatile __u64 hit_cost_ns = 0;
/* The indirect call sites probed (cookie index -> how to read the target). */
const volatile struct rootpath_site sites[ROOTPATH_MAX_SITES] = {};

struct tstate {
	__u64 f0_start;
	/* Stack pointer at F0's outermost entry: a new entry at or above it is not a
	 * recursive call but a new call whose predecessor's return was never seen (the
	 * kernel drops a return probe's instance when a tail call reuses its frame). */
	__u64 f0_sp;
	__u64 fn_start;
	__u64 fn_max;
	__u64 callee_start;
	__u32 f0_depth;
	/* Deepest path level entered, in order, inside this call of F0. */
	__u32 path_level;
	/* 1 + the callee being timed, 0 if none. */
	__u32 in_callee;
	__u32 callee_depth;
	/* Probe hits (path functions and callees) inside this call of F0. */
	__u64 hits;
	__u64 callee_max[ROOTPATH_MAX_CALLEES];
	/* §3.6 bookkeeping, reset at each call of F0. */
	__u64 off_since; /* switched out while runnable at; 0: running */
	__u64 irq_since; /* in a hard IRQ handler since; 0: not */
	__u32 off_cpu;	 /* CPU of the pending switch-out */
	__u32 irq_slot;
	__u64 stolen; /* preempted + IRQ time inside the callee being timed */
	__u64 preempt_ns;
	__u64 irq_ns;
	__u32 by_tid[ROOTPATH_CULPRITS];
	__u64 by_ns[ROOTPATH_CULPRITS];
	char by_comm[ROOTPATH_CULPRITS][ROOTPATH_COMM];
	__u32 irq_no[ROOTPATH_CULPRITS];
	__u64 irq_no_ns[ROOTPATH_CULPRITS];
	char irq_name[ROOTPATH_CULPRITS][ROOTPATH_COMM];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct tstate);
} threads SEC(".maps");

/* A zeroed state to start a thread from (too large to build on the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tstate);
} zero SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ROOTPATH_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} f0_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} samples SEC(".maps");

/* Samples that did not fit in the ring. */
CW_PERCPU_COUNTERS(lost, 1);

/* Calls through a pointer per (site, target). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ROOTPATH_MAX_TARGETS);
	__type(key, struct rootpath_target);
	__type(value, __u64);
} targets SEC(".maps");

/* Indirect calls whose target could not be kept: the table was full, or the memory
 * holding the pointer could not be read. */
CW_PERCPU_COUNTERS(site_lost, 1);

static __always_inline struct tstate *state(__u32 tid, int create)
{
	struct tstate *s = bpf_map_lookup_elem(&threads, &tid);
	if (s || !create)
		return s;
	__u32 k = 0;
	struct tstate *z = bpf_map_lookup_elem(&zero, &k);
	if (!z)
		return 0;
	bpf_map_update_elem(&threads, &tid, z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&threads, &tid);
}

static __always_inline void f0_entry(struct tstate *s, __u64 now, __u64 sp)
{
	if (s->f0_depth && sp < s->f0_sp) {
		s->f0_depth++;
		return;
	}
	s->f0_depth = 1;
	s->f0_sp = sp;
	s->f0_start = now;
	s->fn_start = now;
	s->fn_max = 0;
	s->path_level = 0;
	s->in_callee = 0;
	s->callee_depth = 0;
	s->hits = 0;
	for (int i = 0; i < ROOTPATH_MAX_CALLEES; i++)
		s->callee_max[i] = 0;
	s->off_since = 0;
	s->irq_since = 0;
	s->stolen = 0;
	s->preempt_ns = 0;
	s->irq_ns = 0;
	for (int i = 0; i < ROOTPATH_CULPRITS; i++) {
		s->by_tid[i] = 0;
		s->by_ns[i] = 0;
		s->irq_no[i] = 0;
		s->irq_no_ns[i] = 0;
	}
}

/* The slot with the most time, or ROOTPATH_CULPRITS if all are empty. */
static __always_inline __u32 top_slot(__u64 *ns)
{
	__u32 best = ROOTPATH_CULPRITS;
	__u64 most = 0;
	for (__u32 i = 0; i < ROOTPATH_CULPRITS; i++) {
		if (ns[i] > most) {
			most = ns[i];
			best = i;
		}
	}
	return best;
}

static __always_inline void culprits_out(struct tstate *s, struct rootpath_sample *out)
{
	out->preempt_ns = s->preempt_ns;
	out->irq_ns = s->irq_ns;
	out->preemptor_tid = 0;
	out->irq = 0;
	__builtin_memset(out->preemptor_comm, 0, ROOTPATH_COMM);
	__builtin_memset(out->irq_name, 0, ROOTPATH_COMM);
	__u32 p = top_slot(s->by_ns);
	if (p < ROOTPATH_CULPRITS) {
		p &= ROOTPATH_CULPRITS - 1;
		out->preemptor_tid = s->by_tid[p];
		__builtin_memcpy(out->preemptor_comm, s->by_comm[p], ROOTPATH_COMM);
	}
	__u32 q = top_slot(s->irq_no_ns);
	if (q < ROOTPATH_CULPRITS) {
		q &= ROOTPATH_CULPRITS - 1;
		out->irq = s->irq_no[q];
		__builtin_memcpy(out->irq_name, s->irq_name[q], ROOTPATH_COMM);
	}
}

static __always_inline void f0_return(struct tstate *s, __u64 now)
{
	if (!s->f0_depth || --s->f0_depth)
		return;
	__u64 lat = now - s->f0_start;
	__u64 overhead = s->hits * hit_cost_ns;
	lat = lat > overhead ? lat - overhead : 0;
	__u32 slot = log2_u64(lat);
	if (slot >= ROOTPATH_SLOTS)
		slot = ROOTPATH_SLOTS - 1;
	__u64 *c = bpf_map_lookup_elem(&f0_hist, &slot);
	if (c)
		(*c)++;
	if (lat < peak_lo || lat >= peak_hi)
		return;
	struct rootpath_sample *out = bpf_ringbuf_reserve(&samples, sizeof(*out), 0);
	if (!out) {
		__u32 k = 0;
		__u64 *l = bpf_map_lookup_elem(&lost, &k);
		if (l)
			(*l)++;
		return;
	}
	out->f0_ns = lat;
	out->function_ns = level == 0 ? lat : s->fn_max;
	for (int i = 0; i < ROOTPATH_MAX_CALLEES; i++)
		out->callee_ns[i] = s->callee_max[i];
	culprits_out(s, out);
	bpf_ringbuf_submit(out, 0);
}

static __always_inline void path_entry(struct tstate *s, __u32 j, __u64 now)
{
	if (!s->f0_depth || s->in_callee || s->path_level + 1 != j)
		return;
	s->path_level = j;
	if (j == level)
		s->fn_start = now;
}

static __always_inline void path_return(struct tstate *s, __u32 j, __u64 now)
{
	if (!s->f0_depth || s->path_level != j || s->in_callee)
		return;
	if (j == level) {
		__u64 d = now - s->fn_start;
		if (d > s->fn_max)
			s->fn_max = d;
	}
	s->path_level = j - 1;
}

static __always_inline void callee_entry(struct tstate *s, __u32 i, __u64 now)
{
	if (!s->f0_depth || s->path_level != level)
		return;
	if (s->in_callee == i + 1) {
		s->callee_depth++;
		return;
	}
	if (s->in_callee)
		return;
	s->in_callee = i + 1;
	s->callee_depth = 0;
	s->callee_start = now;
	s->stolen = 0;
}

static __always_inline void callee_return(struct tstate *s, __u32 i, __u64 now)
{
	if (s->in_callee != i + 1)
		return;
	if (s->callee_depth) {
		s->callee_depth--;
		return;
	}
	s->in_callee = 0;
	if (i >= ROOTPATH_MAX_CALLEES)
		return;
	__u64 d = now - s->callee_start;
	d = d > s->stolen ? d - s->stolen : 0;
	/* The mask repeats the bound check on the register that indexes (the compiler
	 * may index with a copy the check did not cover); the barrier keeps the mask. */
	barrier_var(i);
	i &= ROOTPATH_MAX_CALLEES - 1;
	if (d > s->callee_max[i])
		s->callee_max[i] = d;
}

/* pt_regs slot (in u64s) of each register, in x86 encoding order (rax 0 .. r15 15).
 * A global, not a static: libbpf places a static's BTF by its symbol, which clang
 * may not emit for one, and then drops the object's BTF. */
const volatile __u8 reg_slot[16] = {
	__builtin_offsetof(struct pt_regs, ax) / 8,  __builtin_offsetof(struct pt_regs, cx) / 8,
	__builtin_offsetof(struct pt_regs, dx) / 8,  __builtin_offsetof(struct pt_regs, bx) / 8,
	__builtin_offsetof(struct pt_regs, sp) / 8,  __builtin_offsetof(struct pt_regs, bp) / 8,
	__builtin_offsetof(struct pt_regs, si) / 8,  __builtin_offsetof(struct pt_regs, di) / 8,
	__builtin_offsetof(struct pt_regs, r8) / 8,  __builtin_offsetof(struct pt_regs, r9) / 8,
	__builtin_offsetof(struct pt_regs, r10) / 8, __builtin_offsetof(struct pt_regs, r11) / 8,
	__builtin_offsetof(struct pt_regs, r12) / 8, __builtin_offsetof(struct pt_regs, r13) / 8,
	__builtin_offsetof(struct pt_regs, r14) / 8, __builtin_offsetof(struct pt_regs, r15) / 8,
};

#define PT_REGS_WORDS (sizeof(struct pt_regs) / 8)

/* Register `r` from a copy of the registers. A copy on the stack, not the context:
 * the verifier refuses a context read at an offset only known at run time. */
static __always_inline __u64 reg_value(const __u64 *regs, __u8 r)
{
	if (r >= 16)
		return 0;
	__u32 k = reg_slot[r & 15];
	barrier_var(k);
	if (k >= PT_REGS_WORDS)
		return 0;
	return regs[k];
}

static __always_inline void site_lost_one(void)
{
	__u32 k = 0;
	__u64 *l = bpf_map_lookup_elem(&site_lost, &k);
	if (l)
		(*l)++;
}

/* An indirect call of the function under study is about to be made: read and count
 * its target. The uprobe runs before the instruction, so the registers are the ones
 * the call will use, and the reported ip is the call instruction's. */
static __always_inline void site_hit(struct pt_regs *ctx, struct tstate *s, __u32 i)
{
	if (!s->f0_depth || s->path_level != level || s->in_callee)
		return;
	if (i >= ROOTPATH_MAX_SITES)
		return;
	barrier_var(i);
	i &= ROOTPATH_MAX_SITES - 1;
	struct rootpath_site d = sites[i];
	__u64 regs[PT_REGS_WORDS];
	if (bpf_probe_read_kernel(regs, sizeof(regs), ctx)) {
		site_lost_one();
		return;
	}
	__u64 target = 0;
	if (d.how == ROOTPATH_SITE_REG) {
		target = reg_value(regs, d.base);
	} else {
		__u64 at = (__u64)d.disp;
		if (d.how == ROOTPATH_SITE_IPREL) {
			at += PT_REGS_IP(ctx);
		} else {
			if (d.base != ROOTPATH_NO_REG)
				at += reg_value(regs, d.base);
			if (d.index != ROOTPATH_NO_REG)
				at += reg_value(regs, d.index) * d.scale;
		}
		if (bpf_probe_read_user(&target, sizeof(target), (void *)at)) {
			site_lost_one();
			return;
		}
	}
	struct rootpath_target key = { .site = i, .addr = target };
	__u64 *c = bpf_map_lookup_elem(&targets, &key);
	if (c) {
		__sync_fetch_and_add(c, 1);
		return;
	}
	__u64 one = 1;
	long err = bpf_map_update_elem(&targets, &key, &one, BPF_NOEXIST);
	/* -EEXIST (17): another CPU added it just now; one call less counted, no matter.
	 * Anything else: the table is full. */
	if (err && err != -17)
		site_lost_one();
}

static __always_inline int handle(struct pt_regs *ctx, int ret)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	if (targ_tgid && (id >> 32) != targ_tgid)
		return 0;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 kind = cookie >> 32;
	__u32 index = (__u32)cookie;
	struct tstate *s = state((__u32)id, kind == ROOTPATH_KIND_F0 && !ret);
	if (!s)
		return 0;
	if (kind != ROOTPATH_KIND_F0 && s->f0_depth)
		s->hits++;
	if (kind == ROOTPATH_KIND_F0) {
		if (ret)
			f0_return(s, now);
		else
			f0_entry(s, now, PT_REGS_SP(ctx));
	} else if (kind == ROOTPATH_KIND_PATH) {
		if (ret)
			path_return(s, index, now);
		else
			path_entry(s, index, now);
	} else if (kind == ROOTPATH_KIND_CALLEE) {
		if (ret)
			callee_return(s, index, now);
		else
			callee_entry(s, index, now);
	} else if (kind == ROOTPATH_KIND_SITE && !ret) {
		site_hit(ctx, s, index);
	}
	return 0;
}

/* Inside the function under study (F0 itself at level 0): where §3.6 counts. */
static __always_inline int in_subtree(struct tstate *s)
{
	return s->f0_depth && s->path_level == level;
}

/* The state of a traced thread of the target process, if it is in the subtree. */
static __always_inline struct tstate *traced(__u32 tgid, __u32 tid)
{
	if (targ_tgid && tgid != targ_tgid)
		return 0;
	struct tstate *s = state(tid, 0);
	return s && in_subtree(s) ? s : 0;
}

/* Time the thread could not run its own code: out of whichever callee it fell in. */
static __always_inline void steal(struct tstate *s, __u64 d)
{
	if (s->in_callee)
		s->stolen += d;
}

/* Slot of `key` in a culprit table, taking a free one; ROOTPATH_CULPRITS if full. */
static __always_inline __u32 slot_of(__u32 *keys, __u64 *ns, __u32 key)
{
	for (__u32 i = 0; i < ROOTPATH_CULPRITS; i++)
		if (ns[i] && keys[i] == key)
			return i;
	for (__u32 i = 0; i < ROOTPATH_CULPRITS; i++)
		if (!ns[i])
			return i;
	return ROOTPATH_CULPRITS;
}

/* Who ran on the CPU a preempted thread was switched out of, while it waited: the
 * thread `next` at the switch-out is often only a woken kernel thread that runs for
 * microseconds, after which the scheduler picks the real competitor; so the time is
 * charged to every thread that ran there, for as long as it ran. */
struct waiter {
	__u32 tid; /* the preempted thread, 0: none */
	__u32 cur_tid;
	__u64 since;
	char cur_comm[ROOTPATH_COMM];
};

#define ROOTPATH_CPUS 1024

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROOTPATH_CPUS);
	__type(key, __u32);
	__type(value, struct waiter);
} waiting SEC(".maps");

/* Charge `d` ns of the preempted thread's wait to the thread `tid` named `comm`. */
static __always_inline void charge(struct tstate *s, __u32 tid, const char *comm, __u64 d)
{
	__u32 k = slot_of(s->by_tid, s->by_ns, tid);
	if (k >= ROOTPATH_CULPRITS)
		return;
	k &= ROOTPATH_CULPRITS - 1;
	if (!s->by_ns[k]) {
		s->by_tid[k] = tid;
		bpf_probe_read_kernel_str(s->by_comm[k], ROOTPATH_COMM, comm);
	}
	/* +1: a slot with time 0 counts as free. */
	s->by_ns[k] += d ? d : 1;
}

static __always_inline void switched_out(struct task_struct *prev, struct task_struct *next,
					 __u64 now)
{
	struct tstate *s = traced(prev->tgid, prev->pid);
	if (!s)
		return;
	__u32 cpu = bpf_get_smp_processor_id();
	struct waiter *w = bpf_map_lookup_elem(&waiting, &cpu);
	if (!w)
		return;
	s->off_since = now;
	s->off_cpu = cpu;
	w->tid = prev->pid;
	w->since = now;
	w->cur_tid = next->pid;
	bpf_probe_read_kernel_str(w->cur_comm, ROOTPATH_COMM, next->comm);
}

/* A switch on a CPU a preempted thread waits on: `prev` ran there since the last. */
static __always_inline void ran_while_waiting(struct task_struct *prev, struct task_struct *next,
					      __u64 now)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct waiter *w = bpf_map_lookup_elem(&waiting, &cpu);
	if (!w || !w->tid || w->tid == prev->pid)
		return;
	struct tstate *s = state(w->tid, 0);
	if (!s || !s->off_since) {
		w->tid = 0;
		return;
	}
	charge(s, prev->pid, prev->comm, now - w->since);
	w->since = now;
	w->cur_tid = next->pid;
	bpf_probe_read_kernel_str(w->cur_comm, ROOTPATH_COMM, next->comm);
}

static __always_inline void switched_in(struct task_struct *next, __u64 now)
{
	if (targ_tgid && next->tgid != targ_tgid)
		return;
	struct tstate *s = state(next->pid, 0);
	if (!s || !s->off_since)
		return;
	__u64 d = now - s->off_since;
	s->off_since = 0;
	s->preempt_ns += d;
	steal(s, d);
	/* Back on another CPU: the one running on the old CPU since the last switch
	 * there gets the rest. */
	__u32 cpu = s->off_cpu;
	struct waiter *w = bpf_map_lookup_elem(&waiting, &cpu);
	if (!w || w->tid != next->pid)
		return;
	if (cpu != bpf_get_smp_processor_id())
		charge(s, w->cur_tid, w->cur_comm, now - w->since);
	w->tid = 0;
}

/* Only involuntary switches are preemption: the thread stays runnable (a preempted
 * thread may have set a sleeping state it had not acted on yet, hence `preempt`). */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	ran_while_waiting(prev, next, now);
	if (preempt || prev_state == 0)
		switched_out(prev, next, now);
	switched_in(next, now);
	return 0;
}

/* Start timing a hard interrupt on the current thread, if it is in the subtree.
 * Returns the culprit slot to name when `irq` takes a new one, ROOTPATH_CULPRITS when
 * there is nothing to name. */
static __always_inline __u32 irq_begin(struct tstate *s, __u32 irq)
{
	__u32 k = slot_of(s->irq_no, s->irq_no_ns, irq);
	s->irq_since = bpf_ktime_get_ns();
	s->irq_slot = k;
	if (k < ROOTPATH_CULPRITS && !s->irq_no_ns[k & (ROOTPATH_CULPRITS - 1)]) {
		k &= ROOTPATH_CULPRITS - 1;
		s->irq_no[k] = irq;
		return k;
	}
	return ROOTPATH_CULPRITS;
}

static __always_inline void irq_end(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (targ_tgid && (id >> 32) != targ_tgid)
		return;
	struct tstate *s = state((__u32)id, 0);
	if (!s || !s->irq_since)
		return;
	__u64 d = bpf_ktime_get_ns() - s->irq_since;
	s->irq_since = 0;
	s->irq_ns += d;
	steal(s, d);
	__u32 k = s->irq_slot;
	if (k < ROOTPATH_CULPRITS)
		s->irq_no_ns[k & (ROOTPATH_CULPRITS - 1)] += d ? d : 1;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(on_irq_entry, int irq, struct irqaction *action)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct tstate *s = traced(id >> 32, (__u32)id);
	/* Hard IRQ handlers do not nest on Linux; a shared line runs several handlers in
	 * a row, each timed on its own. */
	if (!s || s->irq_since)
		return 0;
	__u32 k = irq_begin(s, (__u32)irq);
	if (k < ROOTPATH_CULPRITS)
		bpf_probe_read_kernel_str(s->irq_name[k & (ROOTPATH_CULPRITS - 1)],
					  ROOTPATH_COMM, action->name);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(on_irq_exit, int irq, struct irqaction *action, int ret)
{
	irq_end();
	return 0;
}

/* The local APIC timer (the scheduler tick, "LOC" in /proc/interrupts) is not an
 * irqaction: it enters through its own vector and tracepoints. Timed as one more
 * interrupt, numbered by its vector. */
SEC("tp_btf/local_timer_entry")
int BPF_PROG(on_timer_entry, int vector)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct tstate *s = traced(id >> 32, (__u32)id);
	if (!s || s->irq_since)
		return 0;
	__u32 k = irq_begin(s, (__u32)vector);
	if (k < ROOTPATH_CULPRITS)
		__builtin_memcpy(s->irq_name[k & (ROOTPATH_CULPRITS - 1)], "LOC", 4);
	return 0;
}

SEC("tp_btf/local_timer_exit")
int BPF_PROG(on_timer_exit, int vector)
{
	irq_end();
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(handle_entry)
{
	return handle(ctx, 0);
}

SEC("uretprobe")
int BPF_URETPROBE(handle_return)
{
	return handle(ctx, 1);
}

char LICENSE[] SEC("license") = "GPL";
