/* Shared between rootpath.bpf.c and the Rust loader (src/rootpath.rs). */
#ifndef ROOTPATH_H
#define ROOTPATH_H

/* Callees of the function under study measured at once (the loader refuses more). */
#define ROOTPATH_MAX_CALLEES 32
#define ROOTPATH_SLOTS 64
/* Distinct preempting threads and IRQ numbers told apart within one call of F0; time
 * from more goes to the totals only. */
#define ROOTPATH_CULPRITS 4
#define ROOTPATH_COMM 16

/* Attach cookie: kind in the high 32 bits, index in the low ones. */
#define ROOTPATH_KIND_F0 0ULL
#define ROOTPATH_KIND_PATH 1ULL /* index: level on the path, 1..level */
#define ROOTPATH_KIND_CALLEE 2ULL /* index: callee number */

/* One call of F0 whose latency fell in the peak. */
struct rootpath_sample {
	__u64 f0_ns;
	/* Longest call of the function under study (F0 itself at level 0). */
	__u64 function_ns;
	/* Longest call of each callee, 0 if not called. */
	__u64 callee_ns[ROOTPATH_MAX_CALLEES];
	/* DARC §3.6, inside the function under study: time preempted (switched out while
	 * runnable, until switched in again) and time in hard IRQ handlers on its CPU. Both
	 * are taken out of the callee they fell in. */
	__u64 preempt_ns;
	__u64 irq_ns;
	/* The thread that took the CPU for the most of preempt_ns, and the IRQ with the
	 * most of irq_ns (valid when the matching time is not 0). */
	__u32 preemptor_tid;
	__u32 irq;
	char preemptor_comm[ROOTPATH_COMM];
	char irq_name[ROOTPATH_COMM];
};

#endif
