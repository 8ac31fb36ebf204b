// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Maps, per-CPU record assembly space and the ring buffers records go to.
 * Part of recorder.bpf.c, included there in order; not a standalone header. */
#ifndef CAUSEWAY_RING_H
#define CAUSEWAY_RING_H

/* ---- maps ---- */

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
};

/* One ring buffer per CPU: a single shared one serialises every producer on its lock. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

/* Records that found their ring full: the BPF ring buffer keeps no count itself. */
CW_PERCPU_COUNTERS(lost, 1);

/* Trace Map: tgids being recorded. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tracked SEC(".maps");

/* Trace Map, negative half (MODE_COMM): tgids whose name did not match. Losing an
 * entry only costs one more name comparison, so an LRU is enough. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} negative SEC(".maps");

/* Threads whose name was already sent. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} seen SEC(".maps");

/* Per syscall number: bit 0 record it, bit 1 its first argument is a file descriptor. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 512);
	__type(key, __u32);
	__type(value, __u8);
} syscalls SEC(".maps");

/* Code ranges of a process (one per executable file, index 0 the main binary), written
 * by user space from the process's mappings; Uscope's code range lookup table. */
struct code_ranges {
	__u32 n;
	__u32 pad;
	__u64 start[MAX_RANGES];
	__u64 end[MAX_RANGES];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct code_ranges);
} ranges SEC(".maps");

/* What the CPU is serving: the device IRQ, hrtimer callback or softirq vector being
 * run (kept from their tracepoints; the kernel's preempt count is not reachable from
 * BPF without KALLSYMS_ALL), and how deeply recorder programs are nested. */
#define SEEN_SLOTS 64
#define MINE_SLOTS 8

struct cpu_ctx {
	__u32 irq;
	__u32 in_irq;
	__u32 vec;
	__u32 in_softirq;
	__u32 in_hrtimer;
	__u32 depth;
	/* Counts softirq entries and exits: a socket made ready in one softirq run does
	 * not explain a wake-up in the next. */
	__u32 sirq_gen;
	/* The last socket made ready on this CPU (sk_data_ready), the thread current
	 * then, the softirq generation and the time; the next wake-up in the same
	 * context within a few microseconds is the one it caused. */
	__u32 ready_tid;
	__u32 ready_gen;
	__u32 ready_pad;
	__u64 ready_sk;
	__u64 ready_ts;
	/* Threads whose name this CPU knows was sent (note_task), by tid modulo SEEN_SLOTS:
	 * their tid and start time, so a reused tid is not taken for its predecessor, and
	 * the value of renamed_gen then, so a rename anywhere voids them. Spares the `seen`
	 * lookup on nearly every event. */
	__u32 seen_tid[SEEN_SLOTS];
	__u32 seen_gen[SEEN_SLOTS];
	__u64 seen_start[SEEN_SLOTS];
	/* Processes this CPU found in `tracked`, by tgid modulo MINE_SLOTS, with the
	 * value of untracked_gen then: a later removal from `tracked` voids them all. */
	__u32 mine_tgid[MINE_SLOTS];
	__u32 mine_gen[MINE_SLOTS];
	/* Bytes this CPU sent since it last woke the reader. */
	__u64 unwoken;
	/* Where a task's user registers lie from the base of its kernel stack (a constant
	 * of the kernel, learned once per CPU from the current task; 0 until then). */
	__u64 regs_off;
	/* State of this CPU's xorshift generator for sampling decisions (0 until the
	 * first, which seeds it): a plain load and a few shifts, no helper call. */
	__u64 rng;
};

/* Bumped each time a process leaves `tracked`, after the removal (see cpu_ctx). */
__u32 untracked_gen = 0;
/* Bumped each time a recorded thread is renamed, after it left `seen` (see cpu_ctx). */
__u32 renamed_gen = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_ctx);
} cpuctx SEC(".maps");

/* State of one user stack walk. */
struct walk {
	__u32 off; /* where the next frame goes in buf */
	__u32 n;
	__u32 budget;
	__u32 used_ranges; /* STACK_LIBS: ranges that already gave their call site */
	__u64 app_start;
	__u64 app_end;
	__u32 tgid;
	__u32 pad;
	__u64 sp;
	__u64 bp;
	__u64 scanned_slot;
	__u32 flags;
	__u32 app_seen;
};

/* Record assembly space, one per nesting level so a program interrupting another does
 * not overwrite its record. */
struct scratch {
	__u8 buf[MAX_RECORD];
	__u64 words[64];
	struct walk w;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* Assembly space of REC_USTACK records, one per nesting level like scratch. */
struct copybuf {
	__u8 buf[USTACK_HDR + MAX_COPY];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct copybuf);
} copybufs SEC(".maps");

static __always_inline struct cpu_ctx *get_cpuctx(void);

/* The scratch slot of the current nesting level: every program counts itself in and
 * out of cpu_ctx.depth, so a program interrupting another uses the next slot. */
static __always_inline struct scratch *get_scratch(void)
{
	struct cpu_ctx *cc = get_cpuctx();
	__u32 level = cc && cc->depth ? cc->depth - 1 : 0;
	if (level > 3)
		level = 3;
	return bpf_map_lookup_elem(&scratch, &level);
}

static __always_inline struct cpu_ctx *get_cpuctx(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&cpuctx, &zero);
}

static __always_inline void count_lost(void)
{
	cw_count(&lost, 0);
}

static __always_inline void submit_ring(void *data, __u32 size, __u32 max, bool urgent);

/* Hand a finished record to this CPU's ring. The reader is woken only once an eighth
 * of the ring was written since the last wake-up (it also polls on a timer), so the
 * recorder's own wake-ups do not come once per event; counting the bytes here spares a
 * query of the ring per record. */
static __always_inline void submit(void *data, __u32 size)
{
	submit_ring(data, size, MAX_RECORD, false);
}

static __always_inline void submit_sized(void *data, __u32 size, __u32 max)
{
	submit_ring(data, size, max, false);
}

/* A record user space must act on at once: wake the reader now. A process's mappings
 * changed (it exec'd, or became a target): they are read from /proc, which a process
 * that lives a few milliseconds leaves before the next timed drain. */
static __always_inline void submit_urgent(void *data, __u32 size)
{
	submit_ring(data, size, MAX_RECORD, true);
}

static __always_inline void submit_ring(void *data, __u32 size, __u32 max, bool urgent)
{
	__u32 cpu = bpf_get_smp_processor_id();
	void *rb = bpf_map_lookup_elem(&rings, &cpu);
	if (!rb) {
		count_lost();
		return;
	}
	if (size > max)
		size = max;
	if (size < sizeof(struct rec_hdr))
		return;
	__u64 flags = BPF_RB_NO_WAKEUP;
	struct cpu_ctx *cc = get_cpuctx();
	if (cc) {
		cc->unwoken += size;
		if (urgent || cc->unwoken > ring_bytes / 8) {
			flags = BPF_RB_FORCE_WAKEUP;
			cc->unwoken = 0;
		}
	} else if (urgent) {
		flags = BPF_RB_FORCE_WAKEUP;
	}
	if (bpf_ringbuf_output(rb, data, size, flags))
		count_lost();
}
#endif
