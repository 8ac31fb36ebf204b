// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Signals (generate, deliver) and high-resolution timers (arm, expire) of the recorded
 * processes: the strong links a stopped thread and a timer wake-up need (Argus §3.1).
 * All four are rare next to switches and wake-ups. Part of recorder.bpf.c, included
 * after fd_identity.h (it uses mix()); not a standalone header. */
#ifndef CAUSEWAY_SIGNAL_TIMER_H
#define CAUSEWAY_SIGNAL_TIMER_H

#define CLOCK_MONOTONIC_ID 1

/* Timers a recorded thread armed, by address, until they expire: only their expiry is
 * recorded (the scheduler tick and every other process's timers expire on the same
 * tracepoint, so the check runs on every expiry of the machine). A direct-mapped table
 * (slot = hash of the address): its lookup is a few loads the verifier inlines, where
 * a hash map's helper calls and an LRU's locks cost ~1 us per run on a host with the
 * SRSO mitigation (bench/RESULTS.md). A slot is emptied on expiry; a cancelled timer
 * stays until another arm takes its slot. */
#define TIMER_SLOTS 16384

struct armed_timer {
	__u64 addr; /* 0: the slot is free */
	__u64 expires; /* on the trace clock; 0 for another clock */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TIMER_SLOTS);
	__type(key, __u32);
	__type(value, struct armed_timer);
} armed_timers SEC(".maps");

/* Arms that took the slot of another timer whose expiry was not yet due (or is on
 * another clock): unless that timer had been cancelled, its expiry will be missing from
 * the trace, so user space reports how many. */
CW_PERCPU_COUNTERS(untracked_timers, 1);

/* Running in an interrupt, softirq or timer callback: current is only the interrupted
 * thread, not the one that acts. */
static __always_inline bool in_interrupt_ctx(void)
{
	struct cpu_ctx *cc = get_cpuctx();
	return cc && (cc->in_irq || cc->in_softirq || cc->in_hrtimer);
}

static __always_inline void on_signal_generate(void *ctx, int sig, struct task_struct *task,
					       int group, int result)
{
	if (!(events & EV_SIGNAL))
		return;
	struct task_struct *cur = bpf_get_current_task_btf();
	struct task_struct *target = bpf_core_cast(task, struct task_struct);
	__u32 target_tgid = target->tgid;
	bool from_kernel = in_interrupt_ctx();
	__u32 cur_tgid = from_kernel ? 0 : cur->tgid;
	if (!is_mine(target_tgid, task) && (from_kernel || !is_mine(cur_tgid, cur)))
		return;
	__u32 cur_tid = from_kernel ? 0 : cur->pid;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	if (!from_kernel)
		note_task(cur, cur_tid, cur_tgid, false, 0);
	struct rec_hdr *h = begin(s, REC_SIGNAL_GENERATE, cur_tid, cur_tgid, bpf_ktime_get_ns());
	struct rec_signal *b = (void *)(s->buf + sizeof(*h));
	b->target_tid = target->pid;
	b->target_tgid = target_tgid;
	b->sig = sig;
	b->result = result;
	b->group = group;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	/* Where the sender was when it sent (a script's kill, a supervisor's stop): signals
	 * are rare, so every send keeps its user stack. */
	if (!from_kernel && (stack_on & STACK_ON_WAKER))
		add_stack(ctx, s, h, sizeof(*b), STACK_KIND_OTHER, true, false);
	submit(s->buf, h->len);
}

static __always_inline void on_signal_deliver(int sig)
{
	if (!(events & EV_SIGNAL))
		return;
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 tgid = cur->tgid;
	if (!is_mine(tgid, cur))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	__u32 tid = cur->pid;
	struct rec_hdr *h = begin(s, REC_SIGNAL_DELIVER, tid, tgid, bpf_ktime_get_ns());
	struct rec_signal *b = (void *)(s->buf + sizeof(*h));
	b->target_tid = tid;
	b->target_tgid = tgid;
	b->sig = sig;
	b->result = 0;
	b->group = 0;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

/* A recorded thread armed a timer in process context (its sleep, a wait's timeout, a
 * timerfd or POSIX timer it set). */
static __always_inline void on_hrtimer_start(struct hrtimer *timer)
{
	if (!(events & EV_TIMER) || in_interrupt_ctx())
		return;
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 tgid = cur->tgid;
	if (!is_mine(tgid, cur))
		return;
	__u64 addr = ptr_value(timer);
	__u32 slot = mix(addr) & (TIMER_SLOTS - 1);
	struct armed_timer *held = bpf_map_lookup_elem(&armed_timers, &slot);
	if (!held)
		return;
	/* Only CLOCK_MONOTONIC expiries are on the trace clock. */
	struct hrtimer *t = bpf_core_cast(timer, struct hrtimer);
	bool mono = t->base->clockid == CLOCK_MONOTONIC_ID;
	__s64 expires = mono ? t->node.expires : -1;
	__u64 now = bpf_ktime_get_ns();
	if (held->addr && held->addr != addr && (!held->expires || held->expires > now))
		cw_count(&untracked_timers, 0);
	held->addr = addr;
	held->expires = mono && expires > 0 ? expires : 0;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_TIMER_ARM, cur->pid, tgid, now);
	struct rec_timer *b = (void *)(s->buf + sizeof(*h));
	b->timer = mix(addr);
	b->expires = expires;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

static __always_inline void on_hrtimer_expire(struct hrtimer *t)
{
	if (!(events & EV_TIMER))
		return;
	__u64 addr = ptr_value(t);
	__u32 slot = mix(addr) & (TIMER_SLOTS - 1);
	struct armed_timer *held = bpf_map_lookup_elem(&armed_timers, &slot);
	if (!held || held->addr != addr)
		return;
	held->addr = 0;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_TIMER_EXPIRE, 0, 0, bpf_ktime_get_ns());
	struct rec_timer *b = (void *)(s->buf + sizeof(*h));
	b->timer = mix(addr);
	b->expires = 0;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

#endif
