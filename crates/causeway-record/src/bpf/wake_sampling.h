// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Waker stacks of short waits, sampled: when a recorded thread wakes another from a wait
 * that began less than waker_sample_min_ns ago, the waker's user stack is kept one time
 * in waker_sample_one_in, chosen at random, and marked STACK_KIND_WAKER_SAMPLE so an
 * analysis weighs it by the rate. The wait's start is the wakee's last blocking
 * switch-out, kept per thread id here; the decision needs no helper call.
 * Part of recorder.bpf.c, included there in order; not a standalone header. */
#ifndef CAUSEWAY_WAKE_SAMPLING_H
#define CAUSEWAY_WAKE_SAMPLING_H

/* When each recorded thread last blocked, by thread id (user space sizes it to the
 * kernel's pid_max, so ids never share a slot): an array, whose lookups the verifier
 * inlines. In units of 1024 ns, cut to 32 bits (wrapping every 73 minutes), which is
 * half the memory of full timestamps where pid_max is 4M; 0 is "not known". */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u32);
} blocked_since SEC(".maps");

static __always_inline __u32 coarse_time(__u64 ts)
{
	__u32 c = ts >> 10;
	return c ? c : 1;
}

/* A recorded thread blocks at ts. */
static __always_inline void note_blocked(__u32 tid, __u64 ts)
{
	if (!waker_sample_min_ns)
		return;
	__u32 *slot = bpf_map_lookup_elem(&blocked_since, &tid);
	if (slot)
		*slot = coarse_time(ts);
}

/* Did tid's wait begin less than waker_sample_min_ns before ts? False when unknown (it
 * blocked before the recording began, or its id is past the table), so that wait keeps
 * its stack. */
static __always_inline bool short_wait(__u32 tid, __u64 ts)
{
	__u32 *slot = bpf_map_lookup_elem(&blocked_since, &tid);
	if (!slot || !*slot)
		return false;
	__u32 waited = coarse_time(ts) - *slot;
	return waited < (waker_sample_min_ns >> 10);
}

/* One draw: true one time in waker_sample_one_in. A per-CPU xorshift64, seeded from
 * the kernel's generator on first use: independent of what the program does, so a
 * program that alternates between call sites cannot line up with the sample. */
static __always_inline bool sample_hit(void)
{
	struct cpu_ctx *cc = get_cpuctx();
	__u32 n = waker_sample_one_in;
	if (!cc || n < 2)
		return true;
	__u64 x = cc->rng;
	if (!x)
		x = ((__u64)bpf_get_prandom_u32() << 32) | bpf_get_prandom_u32() | 1;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	cc->rng = x;
	return (__u32)(x >> 32) % n == 0;
}
#endif
