// SPDX-License-Identifier: GPL-2.0
/*
 * Data-flag accesses by uprobes: one probe on each instruction that loads or stores
 * the watched variable (`causeway watch --via uprobe`, or where hardware watchpoints
 * are unavailable). The loader decoded the instructions; the cookie says which kind
 * each is, so this program only stamps the hit and sends it on. Which reads are kept
 * is decided in user space, as for watchpoint hits, so both paths share one rule.
 *
 * The probe fires before its instruction runs (a watchpoint traps after): a store's
 * time is a few microseconds early, the time the kernel takes to step the probed
 * instruction.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "dataflag.h"

/* The watched process. The probes are bound to it, so this only guards against
 * another process sharing the probed file and address space filter. */
const volatile __u32 targ_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DATAFLAG_RING_BYTES);
} hits SEC(".maps");

/* Hits dropped because the ring was full (index 0), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

SEC("uprobe")
int handle_access(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	if ((id >> 32) != targ_tgid)
		return 0;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	struct dataflag_hit *h = bpf_ringbuf_reserve(&hits, sizeof(*h), 0);
	if (!h) {
		__u32 k = 0;
		__u64 *n = bpf_map_lookup_elem(&lost, &k);
		if (n)
			(*n)++;
		return 0;
	}
	h->ts = bpf_ktime_get_ns();
	h->ip = PT_REGS_IP(ctx) + (cookie & DATAFLAG_LEN_MASK);
	h->tid = (__u32)id;
	h->cpu = bpf_get_smp_processor_id();
	h->write = (cookie & DATAFLAG_WRITE) != 0;
	h->tgid = id >> 32;
	bpf_ringbuf_submit(h, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
