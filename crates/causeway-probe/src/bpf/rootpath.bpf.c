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
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
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
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

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
	if (d > s->callee_max[i])
		s->callee_max[i] = d;
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
	}
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
