// SPDX-License-Identifier: GPL-2.0
/*
 * Function latency by a uprobe/uretprobe pair, aggregated in the kernel into log2
 * slots (OSprof's profile: one add per call, nothing sent to user space per call).
 *
 * Per-CPU slots, so a call costs no atomic operation and no cache line bouncing
 * between CPUs; user space sums the CPUs when it reads.
 *
 * Two ways to attach, the same counts:
 * - a uprobe session (kernel 6.13+, `handle_func_session`): one program runs at the
 *   entry and, for the calls it times, at the return; the entry time is kept in the
 *   call's session cookie and the recursion check in task-local storage, so a call
 *   costs no hash map update or delete;
 * - a uprobe/uretprobe pair (older kernels): the entry time in a per-thread hash map.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "causeway/common.bpf.h"
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

CW_PERCPU_COUNTERS(counters, FUNCLAT_COUNTERS);

static __always_inline void count(__u32 which)
{
	cw_count(&counters, which);
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

/* Kernel functions of uprobe sessions (6.13+; the program is only loaded where they
 * exist). */
extern bool bpf_session_is_return(void) __ksym __weak;
extern __u64 *bpf_session_cookie(void) __ksym __weak;

/* Per-thread recursion state of the session program: the stack pointer at the entry
 * of the call being timed, 0 when none is. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} timed_sp SEC(".maps");

/* Returns 1 at an entry that is not timed: the kernel then skips its return. */
SEC("uprobe.session")
int BPF_UPROBE(handle_func_session)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 *cookie = bpf_session_cookie();

	if (bpf_session_is_return()) {
		__u64 delta = bpf_ktime_get_ns() - *cookie;
		__u64 *sp = bpf_task_storage_get(&timed_sp, task, 0, 0);
		if (sp)
			*sp = 0;
		__u32 slot = log2_u64(delta);
		if (slot >= FUNCLAT_SLOTS)
			slot = FUNCLAT_SLOTS - 1;
		__u64 *c = bpf_map_lookup_elem(&hist, &slot);
		if (c)
			(*c)++;
		return 0;
	}
	if (targ_tgid && (bpf_get_current_pid_tgid() >> 32) != targ_tgid)
		return 1;
	__u64 *sp = bpf_task_storage_get(&timed_sp, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!sp) {
		count(FUNCLAT_TABLE_FULL);
		return 1;
	}
	__u64 now_sp = PT_REGS_SP(ctx);
	/* Below the timed call's frame: a recursive call, folded into the outer one. At or
	 * above it: a new call whose predecessor's return was lost. */
	if (*sp && now_sp < *sp) {
		count(FUNCLAT_NESTED);
		return 1;
	}
	*sp = now_sp;
	*cookie = bpf_ktime_get_ns();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
