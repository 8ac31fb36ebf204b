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
#define ROOTPATH_KIND_SITE 3ULL /* index: indirect call site number */

/* Indirect call sites of the function under study probed at once (the loader counts
 * the others as not probed). */
#define ROOTPATH_MAX_SITES 16
/* Distinct (site, target) pairs kept; more are counted in `site_lost`. */
#define ROOTPATH_MAX_TARGETS 1024

/* How an indirect call site's target is found (struct rootpath_site.how). */
#define ROOTPATH_SITE_REG 1	/* the value of register `base` */
#define ROOTPATH_SITE_MEM 2	/* 8 bytes at base + index * scale + disp */
#define ROOTPATH_SITE_IPREL 3	/* 8 bytes at the call instruction's address + disp */
/* `base` or `index` not used. */
#define ROOTPATH_NO_REG 255

/* One indirect call site; registers numbered as x86 encodes them (rax 0 .. r15 15). */
struct rootpath_site {
	__u8 how;
	__u8 base;
	__u8 index;
	__u8 scale;
	__u32 pad;
	__s64 disp;
};

/* A target seen at a site (key of the `targets` map; the value counts the calls). */
struct rootpath_target {
	__u32 site;
	__u32 pad;
	__u64 addr;
};

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
