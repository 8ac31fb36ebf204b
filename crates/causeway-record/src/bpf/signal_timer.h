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
 * tracepoint). An entry is taken on expiry; an LRU forgets cancelled ones. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u8);
} armed_timers SEC(".maps");

/* Arms whose timer could not be entered in armed_timers (no free entry, or the map's
 * lock not taken in time): their expiry will be missing from the trace, so user space
 * reports how many. */
CW_PERCPU_COUNTERS(untracked_timers, 1);

/* Running in an interrupt, softirq or timer callback: current is only the interrupted
 * thread, not the one that acts. */
static __always_inline bool in_interrupt_ctx(void)
{
	struct cpu_ctx *cc = get_cpuctx();
	return cc && (cc->in_irq || cc->in_softirq || cc->in_hrtimer);
}

static __always_inline void on_signal_generate(int sig, struct task_struct *task, int group,
					       int result)
{
	if (!(events & EV_SIGNAL))
		return;
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	__u32 target_tgid = BPF_CORE_READ(task, tgid);
	bool from_kernel = in_interrupt_ctx();
	__u32 cur_tgid = from_kernel ? 0 : BPF_CORE_READ(cur, tgid);
	if (!is_mine(target_tgid, task) && (from_kernel || !is_mine(cur_tgid, cur)))
		return;
	__u32 cur_tid = from_kernel ? 0 : BPF_CORE_READ(cur, pid);
	struct scratch *s = get_scratch();
	if (!s)
		return;
	if (!from_kernel)
		note_task(cur, cur_tid, cur_tgid, false, 0);
	struct rec_hdr *h = begin(s, REC_SIGNAL_GENERATE, cur_tid, cur_tgid, bpf_ktime_get_ns());
	struct rec_signal *b = (void *)(s->buf + sizeof(*h));
	b->target_tid = BPF_CORE_READ(task, pid);
	b->target_tgid = target_tgid;
	b->sig = sig;
	b->result = result;
	b->group = group;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

static __always_inline void on_signal_deliver(int sig)
{
	if (!(events & EV_SIGNAL))
		return;
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = BPF_CORE_READ(cur, tgid);
	if (!is_mine(tgid, cur))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	__u32 tid = BPF_CORE_READ(cur, pid);
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
static __always_inline void on_hrtimer_start(struct hrtimer *t)
{
	if (!(events & EV_TIMER) || in_interrupt_ctx())
		return;
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = BPF_CORE_READ(cur, tgid);
	if (!is_mine(tgid, cur))
		return;
	__u64 addr = ptr_value(t);
	__u8 one = 1;
	if (bpf_map_update_elem(&armed_timers, &addr, &one, BPF_ANY))
		cw_count(&untracked_timers, 0);
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h =
		begin(s, REC_TIMER_ARM, BPF_CORE_READ(cur, pid), tgid, bpf_ktime_get_ns());
	struct rec_timer *b = (void *)(s->buf + sizeof(*h));
	b->timer = mix(addr);
	/* Only CLOCK_MONOTONIC expiries are on the trace clock. */
	int clock = BPF_CORE_READ(t, base, clockid);
	b->expires = clock == CLOCK_MONOTONIC_ID ? BPF_CORE_READ(t, node.expires) : -1;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

static __always_inline void on_hrtimer_expire(struct hrtimer *t)
{
	if (!(events & EV_TIMER))
		return;
	__u64 addr = ptr_value(t);
	if (!bpf_map_lookup_elem(&armed_timers, &addr))
		return;
	bpf_map_delete_elem(&armed_timers, &addr);
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
