// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Page reclaim timed per thread: direct reclaim (an allocation that found no free
 * page) and a cgroup's reclaim at its memory limit, from the vmscan begin/end
 * tracepoints. Reclaim is rare next to scheduler events (at most thousands a second
 * under a tight limit), so each recorded thread's total is summed here and read by
 * user space every 100 ms (causeway_cgroups), not sent as records.
 * Part of recorder.bpf.c, included there in order; not a standalone header. */
#ifndef CAUSEWAY_RECLAIM_H
#define CAUSEWAY_RECLAIM_H

struct reclaim_time {
	__u64 start; /* of the reclaim under way, 0 when none */
	__u64 ns; /* summed over the ended ones */
	__u64 count;
	__u32 tgid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* tid */
	__type(value, struct reclaim_time);
} reclaim_times SEC(".maps");

static __always_inline void on_reclaim(bool begin)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 tgid = cur->tgid;
	if (!is_mine(tgid, cur))
		return;
	__u32 tid = cur->pid;
	__u64 now = bpf_ktime_get_ns();
	struct reclaim_time *r = bpf_map_lookup_elem(&reclaim_times, &tid);
	if (!r) {
		if (!begin)
			return;
		struct reclaim_time fresh = { .start = now, .tgid = tgid };
		/* A full table loses this thread's reclaim time; user space counts the
		 * threads it read, and the table holds 8192. */
		bpf_map_update_elem(&reclaim_times, &tid, &fresh, BPF_NOEXIST);
		return;
	}
	if (begin) {
		/* cgroup reclaim can run inside direct reclaim's allocation: the outer one
		 * times both. */
		if (!r->start)
			r->start = now;
		return;
	}
	if (r->start) {
		__sync_fetch_and_add(&r->ns, now - r->start);
		__sync_fetch_and_add(&r->count, 1);
		r->start = 0;
	}
}

#endif
