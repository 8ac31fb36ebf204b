// SPDX-License-Identifier: GPL-2.0
/*
 * Function latency by a uprobe/uretprobe pair, aggregated in the kernel into log2
 * slots (OSprof's profile: one add per call, nothing sent to user space per call).
 *
 * Per-CPU slots, so a call costs no atomic operation and no cache line bouncing
 * between CPUs; user space sums the CPUs when it reads.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "funclat.h"

/* Only threads of this process (0: any). The uprobe is attached for every process
 * mapping the binary, so threads created later are covered (a per-thread perf event
 * would not follow new threads). */
const volatile __u32 targ_tgid = 0;

struct start {
	__u64 ts;
	/* Stack pointer at the timed entry: an entry at or above it is a new call whose
	 * predecessor's return was lost (the kernel drops a return instance whose frame
	 * was reused, as by a longjmp), not a recursive one. */
	__u64 sp;
	/* Calls nested in the timed one (recursion): the outermost call is timed. */
	__u32 depth;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct start);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FUNCLAT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FUNCLAT_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);
	if (c)
		(*c)++;
}

/* floor(log2(v)) for v >= 1, 0 for 0; branch-light, no loop for the verifier. */
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

SEC("uprobe")
int BPF_UPROBE(handle_func_entry)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	if (targ_tgid && (id >> 32) != targ_tgid)
		return 0;
	__u64 sp = PT_REGS_SP(ctx);
	struct start *s = bpf_map_lookup_elem(&starts, &tid);
	if (s && sp < s->sp) {
		s->depth++;
		count(FUNCLAT_NESTED);
		return 0;
	}
	struct start n = { .ts = bpf_ktime_get_ns(), .sp = sp };
	if (bpf_map_update_elem(&starts, &tid, &n, BPF_ANY))
		count(FUNCLAT_TABLE_FULL);
	return 0;
}

SEC("uretprobe")
int BPF_URETPROBE(handle_func_return)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	if (targ_tgid && (id >> 32) != targ_tgid)
		return 0;
	struct start *s = bpf_map_lookup_elem(&starts, &tid);
	if (!s) {
		count(FUNCLAT_NO_ENTRY);
		return 0;
	}
	if (s->depth) {
		s->depth--;
		return 0;
	}
	__u64 delta = now - s->ts;
	bpf_map_delete_elem(&starts, &tid);
	__u32 slot = log2_u64(delta);
	if (slot >= FUNCLAT_SLOTS)
		slot = FUNCLAT_SLOTS - 1;
	__u64 *c = bpf_map_lookup_elem(&hist, &slot);
	if (c)
		(*c)++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
