// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A task's saved user registers, found with plain loads.
 * Part of recorder.bpf.c, included there in order; not a standalone header. */
#ifndef CAUSEWAY_TASK_REGS_H
#define CAUSEWAY_TASK_REGS_H

/* A kernel pointer as a plain number: a BTF tracepoint's arguments are trusted
 * pointers, on which the verifier refuses arithmetic (the hash in mix()). */
static __always_inline __u64 ptr_value(const void *p)
{
	__u64 v = 0;
	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

/* The user registers a task saved on entering the kernel (0 if unknown). They sit at
 * the top of its kernel stack, at the same distance from task->stack in every task:
 * the distance is taken from the current task (bpf_task_pt_regs) once per CPU and
 * applied with plain loads after that, which spares a helper call per stack on the
 * scheduler's path and works for any task in both tracepoint families (a raw
 * tracepoint's task pointer is not a trusted one). */
static __always_inline struct pt_regs *task_regs(struct task_struct *p)
{
	struct cpu_ctx *cc = get_cpuctx();
	if (!cc)
		return 0;
	if (!cc->regs_off) {
		struct task_struct *cur = bpf_get_current_task_btf();
		struct pt_regs *cr = (struct pt_regs *)bpf_task_pt_regs(cur);
		if (!cr)
			return 0;
		__u64 off = ptr_value(cr) - (__u64)cur->stack;
		if (off > (1 << 20))
			return 0;
		cc->regs_off = off;
	}
	__u64 stack = (__u64)bpf_core_cast(p, struct task_struct)->stack;
	if (!stack)
		return 0;
	return bpf_core_cast((void *)(stack + cc->regs_off), struct pt_regs);
}
#endif
