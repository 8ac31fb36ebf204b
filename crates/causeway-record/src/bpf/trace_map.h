// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The Trace Map (which processes are recorded) and record building.
 * Part of recorder.bpf.c, included there in order; not a standalone header. */
#ifndef CAUSEWAY_TRACE_MAP_H
#define CAUSEWAY_TRACE_MAP_H

/* ---- the Trace Map ---- */

static __always_inline bool comm_matches(const char *comm)
{
	for (int i = 0; i < COMM_LEN; i++) {
		if (comm[i] != target_comm[i])
			return false;
		if (comm[i] == 0)
			return true;
	}
	return true;
}

static __always_inline void emit_maps_changed(__u32 tid, __u32 tgid, __u32 reason);

/* Is this process recorded? Constant time after the first event of a process. */
static __always_inline bool is_mine(__u32 tgid, struct task_struct *task)
{
	if (tgid == 0 || tgid == self_tgid)
		return false;
	if (mode == MODE_ALL)
		return true;
	/* A few recorded processes make most events: this CPU remembers the ones it found
	 * (a hash lookup was ~20 ns, several per scheduler event). */
	struct cpu_ctx *cc = get_cpuctx();
	__u32 slot = tgid & (MINE_SLOTS - 1);
	__u32 gen = *(volatile __u32 *)&untracked_gen;
	if (cc && cc->mine_tgid[slot] == tgid && cc->mine_gen[slot] == gen)
		return true;
	if (bpf_map_lookup_elem(&tracked, &tgid)) {
		if (cc) {
			cc->mine_tgid[slot] = tgid;
			cc->mine_gen[slot] = gen;
		}
		return true;
	}
	if (mode != MODE_COMM || !task)
		return false;
	if (bpf_map_lookup_elem(&negative, &tgid))
		return false;
	char comm[COMM_LEN] = {};
	BPF_CORE_READ_STR_INTO(&comm, task, group_leader, comm);
	__u8 one = 1;
	if (comm_matches(comm)) {
		bpf_map_update_elem(&tracked, &tgid, &one, BPF_ANY);
		emit_maps_changed(tgid, tgid, 3);
		return true;
	}
	bpf_map_update_elem(&negative, &tgid, &one, BPF_ANY);
	return false;
}

/* ---- record building ---- */

static __always_inline struct rec_hdr *begin(struct scratch *s, __u16 type, __u32 tid,
					     __u32 tgid, __u64 ts)
{
	struct rec_hdr *h = (struct rec_hdr *)s->buf;
	h->ts = ts;
	h->type = type;
	h->len = 0;
	h->flags = 0;
	h->pad = 0;
	h->tid = tid;
	h->tgid = tgid;
	return h;
}

static __always_inline void emit_maps_changed(__u32 tid, __u32 tgid, __u32 reason)
{
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_MAPS_CHANGED, tid, tgid, bpf_ktime_get_ns());
	struct rec_maps_changed *b = (void *)(s->buf + sizeof(*h));
	b->reason = reason;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	submit_urgent(s->buf, h->len);
}

/* Send a thread's name the first time it appears (and after renames, `force`), so
 * threads that live for a few milliseconds still have names when the trace is read.
 * `start` is the task's start time as the caller could read it cheaply (0: unknown);
 * with it, a per-CPU cache answers most calls without the `seen` lookup. */
static __always_inline void note_task(struct task_struct *task, __u32 tid, __u32 tgid, bool force,
				      __u64 start)
{
	if (tid == 0)
		return;
	struct cpu_ctx *cc = start ? get_cpuctx() : 0;
	__u32 slot = tid & (SEEN_SLOTS - 1);
	__u32 gen = *(volatile __u32 *)&renamed_gen;
	if (!force && cc && cc->seen_tid[slot] == tid && cc->seen_start[slot] == start &&
	    cc->seen_gen[slot] == gen)
		return;
	if (cc) {
		cc->seen_tid[slot] = tid;
		cc->seen_start[slot] = start;
		cc->seen_gen[slot] = gen;
	}
	if (!force && bpf_map_lookup_elem(&seen, &tid))
		return;
	__u8 one = 1;
	bpf_map_update_elem(&seen, &tid, &one, BPF_ANY);
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_TASK, tid, tgid, bpf_ktime_get_ns());
	struct rec_task *b = (void *)(s->buf + sizeof(*h));
	BPF_CORE_READ_STR_INTO(&b->comm, task, comm);
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}
#endif
