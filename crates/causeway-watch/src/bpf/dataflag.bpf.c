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
#include "causeway/common.bpf.h"
#include "dataflag.h"

/* The watched process. The probes are bound to it, so this only guards against
 * another process sharing the probed file and address space filter. */
const volatile __u32 targ_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DATAFLAG_RING_BYTES);
} hits SEC(".maps");

/* Hits dropped because the ring was full (index 0), per CPU. */
CW_PERCPU_COUNTERS(lost, 1);

SEC("uprobe")
int handle_access(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	if ((id >> 32) != targ_tgid)
		return 0;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	struct dataflag_hit *h = bpf_ringbuf_reserve(&hits, sizeof(*h), 0);
	if (!h) {
		cw_count(&lost, 0);
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
