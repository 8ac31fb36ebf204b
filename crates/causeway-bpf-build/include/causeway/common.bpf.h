/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by causeway's BPF programs (the recorder's and the live probes').
 * Include after vmlinux.h and bpf_helpers.h.
 */
#ifndef CAUSEWAY_COMMON_BPF_H
#define CAUSEWAY_COMMON_BPF_H

/* floor(log2(v)) for v >= 1, 0 for 0: the slot of a latency histogram whose slot b
 * holds [2^b, 2^(b+1)). Branch-light, no loop for the verifier. */
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

/* A per-CPU array of N 64-bit counters named NAME: one add per event, no atomic
 * operation; user space sums the CPUs when it reads. */
#define CW_PERCPU_COUNTERS(NAME, N)                  \
	struct {                                     \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); \
		__uint(max_entries, N);              \
		__type(key, __u32);                  \
		__type(value, __u64);                \
	} NAME SEC(".maps")

/* Add one to counter `which` of a CW_PERCPU_COUNTERS map. */
static __always_inline void cw_count(void *map, __u32 which)
{
	__u64 *c = bpf_map_lookup_elem(map, &which);
	if (c)
		(*c)++;
}

#endif
