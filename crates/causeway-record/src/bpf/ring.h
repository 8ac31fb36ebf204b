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

/* Where a CPU's records go first: its element of this array, which user space maps
 * into its memory and reads in place (crates/causeway-record/src/spool.rs). Putting
 * a record there is a bounded copy and one store; bpf_ringbuf_output is a helper call
 * that takes the ring's lock with interrupts off, ~100-140 ns a record on an AMD EPYC
 * host with the SRSO mitigation (bench/RESULTS.md), paid for every event.
 *
 * An element: the producer's offset at SPOOL_HEAD (written by this CPU's programs
 * only), the reader's at SPOOL_TAIL (written by user space only), records from
 * SPOOL_DATA, each 8-byte aligned and starting below spool_bytes; the next starts after
 * it, or at 0 once that is spool_bytes or more. Only the outermost program on a CPU
 * (cpu_ctx.depth 1) writes: one nested in it by an interrupt, or a program running
 * while a uprobe's is preempted, would write at the same offset. Those, the records
 * that must wake the reader at once, and records finding the spool full go to the
 * CPU's BPF ring buffer, which the reader drains in the same pass and merges by time.
 * No BTF types: the value's size is set at load (SPOOL_DATA + spool_bytes +
 * SPOOL_SLACK, rounded up to a page). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 8);
} spools SEC(".maps");

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
	/* Bytes this CPU sent since it last woke the reader: to its BPF ring, to its spool. */
	__u64 unwoken;
	__u64 unwoken_spool;
	/* The spool refused a record of the program running now: its later records go to
	 * the BPF ring too, so a stack copy is never read after the record it goes with. */
	__u32 spool_refused;
	__u32 spool_pad;
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

/* Bytes of this CPU's spool not yet read (about: records running past the end count
 * as if they wrapped), 0 without spools. */
static __always_inline __u64 spool_used(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u8 *sp = bpf_map_lookup_elem(&spools, &cpu);
	if (!sp || !spool_bytes)
		return 0;
	__u64 head = *(volatile __u64 *)(sp + SPOOL_HEAD);
	__u64 tail = *(volatile __u64 *)(sp + SPOOL_TAIL);
	return (head - tail) & (spool_bytes - 1);
}

/* Put a record in this CPU's spool (see spools); false when it has no room. */
static __always_inline bool spool_put(void *data, __u32 size)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u8 *sp = bpf_map_lookup_elem(&spools, &cpu);
	if (!sp)
		return false;
	__u64 head = *(volatile __u64 *)(sp + SPOOL_HEAD);
	__u64 tail = *(volatile __u64 *)(sp + SPOOL_TAIL);
	__u64 len = ((__u64)size + 7) & ~7ULL;
	if (head >= spool_bytes || tail >= spool_bytes || size > SPOOL_SLACK)
		return false;
	/* Unread are tail..head, or tail..past the end and 0..head once head wrapped.
	 * The new head must not land on tail: equal offsets mean an empty spool. */
	if (head < tail ? head + len >= tail : head + len >= spool_bytes && tail == 0)
		return false;
	__u8 *dst = sp + SPOOL_DATA + head;
	if (size <= MAX_RECORD) {
		/* Most records are a few dozen bytes: a word loop beats a helper call. */
		for (int i = 0; i < MAX_RECORD / 8; i++) {
			if (i * 8 >= size)
				break;
			((__u64 *)dst)[i] = ((__u64 *)data)[i];
		}
	} else if (bpf_probe_read_kernel(dst, size, data)) {
		return false;
	}
	/* The record before the offset that shows it: x86 keeps stores in program order,
	 * the compiler must too. */
	asm volatile("" ::: "memory");
	head += len;
	if (head >= spool_bytes)
		head = 0;
	*(volatile __u64 *)(sp + SPOOL_HEAD) = head;
	return true;
}

/* Whether the reader is behind on this CPU: where this program's records go (its
 * spool, or its BPF ring) is over three quarters full. */
static __always_inline bool reader_behind(void)
{
	struct cpu_ctx *cc = get_cpuctx();
	if (spool_bytes && cc && cc->depth == 1 && !cc->spool_refused)
		return spool_used() > spool_bytes / 4 * 3;
	__u32 cpu = bpf_get_smp_processor_id();
	void *rb = bpf_map_lookup_elem(&rings, &cpu);
	return rb && bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) > ring_bytes / 4 * 3;
}

/* Wake the reader for the spools: a bare header (REC_WAKE_READER) in the BPF ring. */
static __always_inline void wake_reader(void *rb)
{
	struct rec_hdr h = {.type = REC_WAKE_READER, .len = sizeof(h)};
	bpf_ringbuf_output(rb, &h, sizeof(h), BPF_RB_FORCE_WAKEUP);
}

static __always_inline void submit_ring(void *data, __u32 size, __u32 max, bool urgent)
{
	if (size > max)
		size = max;
	if (size < sizeof(struct rec_hdr))
		return;
	struct cpu_ctx *cc = get_cpuctx();
	if (!urgent && spool_bytes && cc && cc->depth == 1 && !cc->spool_refused) {
		if (!spool_put(data, size)) {
			cc->spool_refused = 1;
			goto ring;
		}
		/* The reader polls on a timer too; woken when an eighth of the spool filled. */
		cc->unwoken_spool += size;
		if (cc->unwoken_spool > spool_bytes / 8) {
			cc->unwoken_spool = 0;
			__u32 cpu = bpf_get_smp_processor_id();
			void *rb = bpf_map_lookup_elem(&rings, &cpu);
			if (rb)
				wake_reader(rb);
		}
		return;
	}
ring:;
	__u32 cpu = bpf_get_smp_processor_id();
	void *rb = bpf_map_lookup_elem(&rings, &cpu);
	if (!rb) {
		count_lost();
		return;
	}
	__u64 flags = BPF_RB_NO_WAKEUP;
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
