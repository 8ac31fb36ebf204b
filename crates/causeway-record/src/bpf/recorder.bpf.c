// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* causeway's kernel recorder.
 *
 * Scheduler, wake-up, process, interrupt, block, network and syscall events of the
 * target processes go to one BPF ring buffer per CPU, with scoped user stacks (Uscope
 * §III) and optional kernel stacks. Which processes are targets is kept in a tgid map
 * that follows fork and exec (the Trace Map), decided by name once per process.
 *
 * Every program is compiled twice, as a BTF tracepoint (tp_btf) and as a raw
 * tracepoint; user space loads one family (tp_btf first). Bodies read kernel memory
 * only through BPF_CORE_READ so they verify in both.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "records.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- configuration, set by user space before load ---- */

#define MODE_FOLLOW 0 /* tracked map filled by user space (-p, -- CMD), follows fork */
#define MODE_COMM 1 /* any process with target_comm, decided at its first event */
#define MODE_ALL 2 /* system-wide */

#define EV_SCHED 1
#define EV_PROC 2
#define EV_IRQ 4
#define EV_SOFTIRQ 8
#define EV_BLOCK 16
#define EV_NET 32
#define EV_SYSCALL 64

#define STACK_NONE 0
#define STACK_APP 1
#define STACK_APP_ALL 2
#define STACK_LIBS 3
#define STACK_ALL 4

#define STACK_ON_SWITCH 1
#define STACK_ON_WAKER 2
#define STACK_ON_SYSCALL 4

const volatile __u32 self_tgid = 0;
const volatile __u32 mode = MODE_FOLLOW;
const volatile char target_comm[COMM_LEN] = {};
const volatile __u32 events = 0;
const volatile __u32 stack_mode = STACK_APP_ALL;
const volatile __u32 stack_depth = 8;
const volatile __u32 stack_on = STACK_ON_SWITCH | STACK_ON_WAKER | STACK_ON_SYSCALL;
#define KSTACK_NONE 0
#define KSTACK_AUTO 1 /* where the kernel side explains the wait: D-state switch-outs,
		       * wakers in interrupt context or kernel threads */
#define KSTACK_ALL 2
const volatile __u32 kernel_stacks = KSTACK_AUTO;
const volatile __u64 obj_key = 0;
#define UNWIND_FP 0 /* walk frame pointers in BPF */
#define UNWIND_DWARF 1 /* copy the stack window; user space unwinds with DWARF CFI */
const volatile __u32 unwind = UNWIND_FP;

/* Every record layout, kept in the object's BTF (and so in the generated Rust
 * skeleton's types) though no program reads it: the user-space parser in records.rs
 * is tested against these sizes and field offsets, so the two sides cannot drift. */
struct abi_layouts {
	struct rec_hdr hdr;
	struct rec_switch switch_;
	struct rec_wake wake;
	struct rec_fork fork;
	struct rec_exec exec;
	struct rec_irq irq;
	struct rec_softirq softirq;
	struct rec_block block;
	struct rec_net net;
	struct rec_sys_enter sys_enter;
	struct rec_sys_exit sys_exit;
	struct rec_task task;
	struct rec_maps_changed maps_changed;
	struct rec_stack stack;
	struct rec_ustack ustack;
};
const volatile struct abi_layouts abi_layouts __attribute__((used)) = {};
const volatile __u32 stack_window = 8192; /* bytes, a power of two <= MAX_COPY */

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
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

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

#define MAX_RANGES 8
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
struct cpu_ctx {
	__u32 irq;
	__u32 in_irq;
	__u32 vec;
	__u32 in_softirq;
	__u32 in_hrtimer;
	__u32 depth;
};

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
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&lost, &zero);
	if (n)
		*n += 1;
}

static __always_inline void submit_sized(void *data, __u32 size, __u32 max);

/* Hand a finished record to this CPU's ring. The reader is woken only once a quarter
 * of the ring is filled (it also polls on a timer), so the recorder's own wake-ups do
 * not come once per event. */
static __always_inline void submit(void *data, __u32 size)
{
	submit_sized(data, size, MAX_RECORD);
}

static __always_inline void submit_sized(void *data, __u32 size, __u32 max)
{
	__u32 cpu = bpf_get_smp_processor_id();
	void *rb = bpf_map_lookup_elem(&rings, &cpu);
	if (!rb) {
		count_lost();
		return;
	}
	__u64 avail = bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA);
	__u64 rsize = bpf_ringbuf_query(rb, BPF_RB_RING_SIZE);
	__u64 flags = avail > rsize / 4 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	if (size > max)
		size = max;
	if (size < sizeof(struct rec_hdr))
		return;
	if (bpf_ringbuf_output(rb, data, size, flags))
		count_lost();
}

/* ---- the Trace Map ---- */

static __always_inline bool comm_matches(const char *comm)
{
	for (int i = 0; i < COMM_LEN; i++) {
		if (comm[i] != target_comm[i])
			return false;
		if (comm[i] == 0)
			return true;
	}
	return true;
}

static __always_inline void emit_maps_changed(__u32 tid, __u32 tgid, __u32 reason);

/* Is this process recorded? Constant time after the first event of a process. */
static __always_inline bool is_mine(__u32 tgid, struct task_struct *task)
{
	if (tgid == 0 || tgid == self_tgid)
		return false;
	if (mode == MODE_ALL)
		return true;
	if (bpf_map_lookup_elem(&tracked, &tgid))
		return true;
	if (mode != MODE_COMM || !task)
		return false;
	if (bpf_map_lookup_elem(&negative, &tgid))
		return false;
	char comm[COMM_LEN] = {};
	BPF_CORE_READ_STR_INTO(&comm, task, group_leader, comm);
	__u8 one = 1;
	if (comm_matches(comm)) {
		bpf_map_update_elem(&tracked, &tgid, &one, BPF_ANY);
		emit_maps_changed(tgid, tgid, 3);
		return true;
	}
	bpf_map_update_elem(&negative, &tgid, &one, BPF_ANY);
	return false;
}

static __always_inline bool task_is_mine(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	return is_mine(tgid, task);
}

/* ---- record building ---- */

static __always_inline struct rec_hdr *begin(struct scratch *s, __u16 type, __u32 tid,
					     __u32 tgid, __u64 ts)
{
	struct rec_hdr *h = (struct rec_hdr *)s->buf;
	h->ts = ts;
	h->type = type;
	h->len = 0;
	h->flags = 0;
	h->pad = 0;
	h->tid = tid;
	h->tgid = tgid;
	return h;
}

static __always_inline void emit_maps_changed(__u32 tid, __u32 tgid, __u32 reason)
{
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_MAPS_CHANGED, tid, tgid, bpf_ktime_get_ns());
	struct rec_maps_changed *b = (void *)(s->buf + sizeof(*h));
	b->reason = reason;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

/* Send a thread's name the first time it appears (and after renames), so threads that
 * live for a few milliseconds still have names when the trace is read. */
static __always_inline void note_task(struct task_struct *task, __u32 tid, __u32 tgid, bool force)
{
	if (tid == 0)
		return;
	if (!force && bpf_map_lookup_elem(&seen, &tid))
		return;
	__u8 one = 1;
	bpf_map_update_elem(&seen, &tid, &one, BPF_ANY);
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_TASK, tid, tgid, bpf_ktime_get_ns());
	struct rec_task *b = (void *)(s->buf + sizeof(*h));
	BPF_CORE_READ_STR_INTO(&b->comm, task, comm);
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

/* ---- scoped user stack walking (Uscope Algorithm 1) ---- */

#define MAX_WALK 32

/* Index of the library code range holding addr (1..), MAX_RANGES for an address in
 * no known range (one shared bucket), -1 for 0. */
static __always_inline int lib_range(__u32 tgid, __u64 addr)
{
	if (!addr)
		return -1;
	struct code_ranges *cr = bpf_map_lookup_elem(&ranges, &tgid);
	if (!cr)
		return MAX_RANGES;
	for (int i = 1; i < MAX_RANGES; i++) {
		if (i >= cr->n)
			break;
		if (addr >= cr->start[i] && addr < cr->end[i])
			return i;
	}
	return MAX_RANGES;
}

static __always_inline bool put_frame(struct scratch *s, __u64 addr)
{
	struct walk *w = &s->w;
	if (w->n >= w->budget || w->n >= MAX_USER_FRAMES)
		return false;
	__u32 o = w->off;
	if (o > MAX_RECORD - 8)
		return false;
	*(__u64 *)(s->buf + o) = addr;
	w->off = o + 8;
	w->n += 1;
	return true;
}

/* Does the mode keep this frame? Updates the per-range budget (Uscope's A map). */
static __always_inline bool keep(struct walk *w, __u64 addr)
{
	if (stack_mode == STACK_ALL)
		return addr != 0;
	bool in_app = addr >= w->app_start && addr < w->app_end;
	if (stack_mode == STACK_LIBS) {
		int r = in_app ? 0 : lib_range(w->tgid, addr);
		if (r < 0)
			return false;
		__u32 bit = 1u << (r & 31);
		if (w->used_ranges & bit)
			return false;
		w->used_ranges |= bit;
		return true;
	}
	if (!in_app)
		return false;
	if (stack_mode == STACK_APP && w->app_seen)
		return false;
	w->app_seen = 1;
	return true;
}

/* Is the instruction before addr a call (x86-64)? A return address always follows one;
 * a function pointer or stale value found on the stack usually does not. Checks a
 * direct call (E8 rel32) and the indirect forms (FF /2 with 2 to 7 bytes). */
__noinline int after_call(__u64 addr)
{
	__u8 b[8];
	if (addr < 8 || bpf_probe_read_user(b, sizeof(b), (void *)(addr - 8)))
		return 0;
	if (b[3] == 0xe8)
		return 1;
	for (int p = 1; p <= 6; p++) {
		if (b[p] == 0xff && ((b[p + 1] >> 3) & 7) == 2)
			return 1;
	}
	return 0;
}

static __always_inline bool walk_done(struct walk *w)
{
	if (w->n >= w->budget)
		return true;
	return stack_mode == STACK_APP && w->app_seen;
}

/* The walk state lives in the scratch map value, not on the BPF stack: the verifier
 * then treats it as data rather than tracking every value through the loops, which
 * keeps verification small. Callbacks get the scratch pointer through this. */
struct walk_ctx {
	struct scratch *s;
};

/* One word of the stack top scan (bpf_loop callback). */
static long scan_word(__u64 i, void *ctx)
{
	struct scratch *s = ((struct walk_ctx *)ctx)->s;
	struct walk *w = &s->w;
	__u64 v = s->words[i & 63];
	if (v >= w->app_start && v < w->app_end && after_call(v)) {
		w->app_seen = 1;
		if (stack_mode == STACK_LIBS)
			w->used_ranges |= 1;
		put_frame(s, v);
		w->flags |= STK_F_SCANNED;
		w->scanned_slot = w->sp + (i & 63) * 8;
		return 1;
	}
	return 0;
}

/* One step along the frame pointer chain (bpf_loop callback). */
static long fp_step(__u64 i, void *ctx)
{
	struct scratch *s = ((struct walk_ctx *)ctx)->s;
	struct walk *w = &s->w;
	if (walk_done(w)) {
		w->flags |= STK_F_USER_TRUNCATED;
		return 1;
	}
	/* A zero frame pointer or return address ends the chain where the program's entry
	 * point or thread start put it; anything else that stops the walk means the chain
	 * broke (code without frame pointers uses rbp for data), so the stack is marked
	 * cut short rather than passed off as whole. */
	__u64 bp = w->bp;
	if (bp == 0)
		return 1;
	if (bp & 7) {
		w->flags |= STK_F_USER_TRUNCATED;
		return 1;
	}
	__u64 pair[2];
	if (bpf_probe_read_user(pair, sizeof(pair), (void *)bp)) {
		w->flags |= STK_F_USER_TRUNCATED;
		return 1;
	}
	__u64 ret = pair[1];
	if (ret == 0)
		return 1;
	if (bp + 8 != w->scanned_slot && after_call(ret) && keep(w, ret))
		put_frame(s, ret);
	if (pair[0] == 0)
		return 1;
	if (pair[0] <= bp) {
		w->flags |= STK_F_USER_TRUNCATED;
		return 1;
	}
	w->bp = pair[0];
	if (i == MAX_WALK - 1)
		w->flags |= STK_F_USER_TRUNCATED;
	return 0;
}

/* Walk the current thread's user stack; frames go to s->buf from s->w.off on. */
static __always_inline void walk_user(struct scratch *s)
{
	struct walk *w = &s->w;
	struct task_struct *task = bpf_get_current_task_btf();
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	if (!mm)
		return; /* a kernel thread: no user stack, and none missing */
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs) {
		w->flags |= STK_F_USER_FAILED;
		return;
	}
	__u64 ip = BPF_CORE_READ(regs, ip);
	w->sp = BPF_CORE_READ(regs, sp);
	w->bp = BPF_CORE_READ(regs, bp);
	w->app_start = BPF_CORE_READ(mm, start_code);
	w->app_end = BPF_CORE_READ(mm, end_code);
	w->tgid = BPF_CORE_READ(task, tgid);

	if (keep(w, ip))
		put_frame(s, ip);
	if (walk_done(w)) {
		w->flags |= STK_F_USER_TRUNCATED;
		return;
	}
	struct walk_ctx wc = {.s = s};
	/* A thread blocked in a C library built without frame pointers has the library's
	 * frames above it and the frame pointer chain starts at its caller's caller: scan
	 * the top of the stack for the first return address into the program, which is
	 * the call site the user wants first (Uscope Mode 1). */
	if (stack_mode != STACK_ALL && !w->app_seen &&
	    bpf_probe_read_user(s->words, sizeof(s->words), (void *)w->sp) == 0)
		bpf_loop(64, scan_word, &wc, 0);
	bpf_loop(MAX_WALK, fp_step, &wc, 0);
}

/* ---- where a thread's stack ends ---- */

#define STACK_SLOTS 4

/* The stack mappings a thread was seen on, each learned with one bpf_find_vma. That
 * helper is the fixed cost of a copy when called from the scheduler tracepoints: they
 * run with interrupts off, where it releases the mmap lock through irq_work, a
 * self-interrupt per call (~2.5-5 µs in a VM, bench/RESULTS.md). Kept in task storage,
 * so an entry lives and dies with its thread and a reused thread id starts empty.
 * Several slots, so a thread that alternates between stacks (a signal stack, a few
 * coroutines) does not look its mapping up on every copy. */
struct stack_ranges {
	__u64 lo[STACK_SLOTS];
	__u64 hi[STACK_SLOTS];
	__u64 top[STACK_SLOTS]; /* where the thread's frames end in the range, 0 unknown */
	__u64 mm; /* the address space the ranges belong to: exec starts afresh */
	__u32 next; /* the slot a new range replaces */
	__u32 window; /* this thread's copy window in bytes, 0 for stack_window */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct stack_ranges);
} stack_ranges SEC(".maps");

/* The stack pointer a thread started with (clone's stack argument), by thread id,
 * noted when a recorded process creates it: its outermost frame (the C library's
 * clone, whose caller is undefined) lies just below, and above it only the thread's
 * TLS block and descriptor (~2 KB with glibc) that no unwinding needs. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} thread_tops SEC(".maps");

#define NR_CLONE 56
#define NR_CLONE3 435

/* At fork, in the parent: the child's starting stack pointer from the clone or clone3
 * arguments, when it was given one (a thread, or a process spawned on its own stack). */
static __always_inline void note_thread_top(__u32 child_tid)
{
	if (unwind != UNWIND_DWARF || stack_mode == STACK_NONE)
		return;
	struct task_struct *cur = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(cur);
	if (!regs)
		return;
	long nr = BPF_CORE_READ(regs, orig_ax);
	__u64 top = 0;
	if (nr == NR_CLONE) {
		top = BPF_CORE_READ(regs, si);
	} else if (nr == NR_CLONE3) {
		/* struct clone_args: stack at 40, stack_size at 48; the kernel starts the
		 * child at stack + stack_size. */
		__u64 st[2];
		__u64 args = BPF_CORE_READ(regs, di);
		if (bpf_probe_read_user(st, sizeof(st), (void *)(args + 40)) == 0 && st[0])
			top = st[0] + st[1];
	}
	if (top)
		bpf_map_update_elem(&thread_tops, &child_tid, &top, BPF_ANY);
}

/* Where the thread's frames end in the stack mapping [lo, hi): the main thread's
 * starting stack pointer (argc sits there, the program's arguments and environment
 * above), a thread's starting one; 0 if unknown (the copy then stops at fsbase or the
 * mapping's end). */
static __always_inline __u64 frames_top(struct task_struct *task, __u64 lo, __u64 hi)
{
	__u32 tid = BPF_CORE_READ(task, pid);
	if (tid == BPF_CORE_READ(task, tgid)) {
		__u64 s = BPF_CORE_READ(task, mm, start_stack);
		if (s > lo && s < hi)
			return s;
	}
	__u64 *t = bpf_map_lookup_elem(&thread_tops, &tid);
	if (t && *t > lo && *t <= hi)
		return *t;
	return 0;
}

/* The end of a copy from sp in a range ending at hi whose frames end at top. */
static __always_inline __u64 below_top(__u64 sp, __u64 top, __u64 hi, __u32 *flags)
{
	if (top && sp < top) {
		*flags |= USTK_F_TOP;
		return top;
	}
	return hi;
}

struct vma_ctx {
	__u64 start;
	__u64 end;
};

static long vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_ctx *v = data;
	v->start = BPF_CORE_READ(vma, vm_start);
	v->end = BPF_CORE_READ(vma, vm_end);
	return 0;
}

/* Where the copy from sp ends: the top of the thread's frames (*flags gets USTK_F_TOP)
 * or the end of the mapping holding sp; 0 if unknown. *flags gets USTK_F_RANGE_* for
 * what it took. A kept range is trusted while sp lies in it: a main thread stack only
 * grows down (sp below the kept start is a miss, and the range is learned again), a
 * thread stack is a fixed mapping, and a range whose memory went away is dropped when
 * the copy fails (stack_range_stale). */
static __always_inline __u64 stack_end(struct task_struct *task, __u64 sp, __u32 *flags,
					 struct stack_ranges **kept)
{
	struct stack_ranges *r =
		bpf_task_storage_get(&stack_ranges, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u64 mm = (__u64)BPF_CORE_READ(task, mm);
	if (r && r->mm != mm) {
		__builtin_memset(r, 0, sizeof(*r));
		r->mm = mm;
	}
	*kept = r;
	if (r) {
		for (int i = 0; i < STACK_SLOTS; i++) {
			if (sp >= r->lo[i] && sp < r->hi[i])
				return below_top(sp, r->top[i], r->hi[i], flags);
		}
	}
	struct vma_ctx v = {};
	*flags |= USTK_F_RANGE_LOOKUP;
	if (bpf_find_vma(task, sp, vma_cb, &v, 0) || v.end <= sp)
		return 0;
	__u64 top = frames_top(task, v.start, v.end);
	if (r) {
		__u32 i = r->next % STACK_SLOTS;
		r->lo[i] = v.start;
		r->hi[i] = v.end;
		r->top[i] = top;
		r->next = i + 1;
	}
	return below_top(sp, top, v.end, flags);
}

/* Forget the kept range holding sp: the copy inside it failed. */
static __always_inline void stack_range_stale(struct task_struct *task, __u64 sp)
{
	struct stack_ranges *r = bpf_task_storage_get(&stack_ranges, task, 0, 0);
	if (!r)
		return;
	for (int i = 0; i < STACK_SLOTS; i++) {
		if (sp >= r->lo[i] && sp < r->hi[i]) {
			r->lo[i] = 0;
			r->hi[i] = 0;
		}
	}
}

/* DWARF mode: send the user registers and the stack window above sp as a REC_USTACK
 * record ahead of the record at h (same ts and tid), for user space to unwind. The
 * window stops where the thread's frames end (stack_end), so a shallow stack costs
 * what it holds, not the whole window. Returns STK_F_* flags for the stack trailer. */
static __always_inline __u32 copy_user(struct rec_hdr *h)
{
	struct task_struct *task = bpf_get_current_task_btf();
	if (!BPF_CORE_READ(task, mm))
		return 0; /* a kernel thread: no user stack, and none missing */
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return STK_F_USER_FAILED;
	struct cpu_ctx *cc = get_cpuctx();
	__u32 level = cc && cc->depth ? cc->depth - 1 : 0;
	if (level > 3)
		level = 3;
	struct copybuf *cb = bpf_map_lookup_elem(&copybufs, &level);
	if (!cb)
		return STK_F_USER_FAILED;
	struct rec_hdr *ch = (struct rec_hdr *)cb->buf;
	struct rec_ustack *b = (void *)(cb->buf + sizeof(*ch));
	ch->ts = h->ts;
	ch->type = REC_USTACK;
	ch->flags = 0;
	ch->pad = 0;
	ch->tid = h->tid;
	ch->tgid = h->tgid;
	b->ip = BPF_CORE_READ(regs, ip);
	b->sp = BPF_CORE_READ(regs, sp);
	b->bp = BPF_CORE_READ(regs, bp);
	__u32 flags = 0;
	struct stack_ranges *r = 0;
	__u64 end = stack_end(task, b->sp, &flags, &r);
	__u64 size = r && r->window ? r->window : stack_window;
	if (end) {
		/* A thread's stack mapping ends with its TLS block and thread descriptor,
		 * which the thread pointer (fsbase) points at: no frame lies above it. */
		__u64 fs = BPF_CORE_READ(task, thread.fsbase);
		if (fs > b->sp && fs < end) {
			end = fs;
			flags &= ~USTK_F_TOP;
		}
		if (end - b->sp < size) {
			size = end - b->sp;
		} else {
			/* The thread's frames go on past the window. Where their top is known
			 * (a thread started while recording, a main thread), this copy is cut
			 * short for certain: let this thread's next copies take twice the
			 * window, up to MAX_COPY. Threads whose top is unknown (the window then
			 * runs to the end of the mapping) keep the window: most of what lies
			 * past it is unused stack, not frames. */
			if ((flags & USTK_F_TOP) && r && size < MAX_COPY)
				r->window = size * 2 > MAX_COPY ? MAX_COPY : size * 2;
			flags |= USTK_F_CUT;
			flags &= ~USTK_F_TOP;
		}
	} else {
		flags |= USTK_F_NO_VMA;
	}
	if (size > MAX_COPY)
		size = MAX_COPY;
	size &= ~7ULL;
	long err = bpf_probe_read_user(cb->buf + USTACK_HDR, size, (void *)b->sp);
	if (err && end) {
		/* The mapping no longer holds sp..end (unmapped since it was learned, or a
		 * page is not present): look it up again next time. */
		stack_range_stale(task, b->sp);
		flags |= USTK_F_RANGE_STALE;
		flags &= ~USTK_F_TOP;
	}
	/* Without a readable range, shrink until the read stays inside the mapping. */
	for (int i = 0; i < 3 && err; i++) {
		size /= 2;
		if (size > MAX_COPY)
			break;
		err = bpf_probe_read_user(cb->buf + USTACK_HDR, size, (void *)b->sp);
	}
	if (err)
		size = 0;
	b->size = size;
	b->flags = flags;
	__u32 len = USTACK_HDR + size;
	ch->len = len;
	submit_sized(cb->buf, len, USTACK_HDR + MAX_COPY);
	return STK_F_COPIED | (err ? STK_F_USER_FAILED : 0);
}

/* Append a stack trailer to the record at h: kind, kernel frames (written in place by
 * bpf_get_stack at a fixed offset, so no copy loop), then user frames. */
static __always_inline void add_stack(void *ctx, struct scratch *s, struct rec_hdr *h,
				      __u32 body, __u8 kind, bool user, bool kernel)
{
	__u32 base = sizeof(struct rec_hdr) + body;
	if (base > 64)
		return;
	struct rec_stack *st = (void *)(s->buf + base);
	st->kind = kind;
	st->flags = 0;
	st->n_user = 0;
	st->n_kernel = 0;
	st->pad = 0;
	__u32 off = base + sizeof(*st);
	if (kernel) {
		long got = bpf_get_stack(ctx, s->buf + base + sizeof(*st),
					 MAX_KERNEL_FRAMES * 8, 0);
		if (got > 0) {
			__u32 nk = got / 8;
			if (nk >= MAX_KERNEL_FRAMES) {
				nk = MAX_KERNEL_FRAMES;
				st->flags |= STK_F_KERNEL_TRUNCATED;
			}
			st->n_kernel = nk;
			off += nk * 8;
		}
	}
	struct walk *w = &s->w;
	__builtin_memset(w, 0, sizeof(*w));
	w->off = off;
	w->budget = stack_depth;
	if (user && stack_mode != STACK_NONE) {
		if (unwind == UNWIND_DWARF) {
			st->flags |= copy_user(h);
		} else {
			walk_user(s);
			st->flags |= w->flags;
			st->n_user = w->n;
		}
	}
	__u32 end = w->off;
	if (end == base + sizeof(*st) && !st->flags)
		return;
	h->flags |= REC_F_STACK;
	h->len = end;
}

/* ---- handlers ---- */

static __always_inline void on_switch(void *ctx, bool preempt, struct task_struct *prev,
				      struct task_struct *next, unsigned int prev_state)
{
	if (!(events & EV_SCHED))
		return;
	__u32 prev_tgid = BPF_CORE_READ(prev, tgid);
	__u32 next_tgid = BPF_CORE_READ(next, tgid);
	bool prev_mine = is_mine(prev_tgid, prev);
	if (!prev_mine && !is_mine(next_tgid, next))
		return;
	__u32 prev_tid = BPF_CORE_READ(prev, pid);
	__u32 next_tid = BPF_CORE_READ(next, pid);
	note_task(prev, prev_tid, prev_tgid, false);
	note_task(next, next_tid, next_tgid, false);
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_SWITCH, prev_tid, prev_tgid, bpf_ktime_get_ns());
	struct rec_switch *b = (void *)(s->buf + sizeof(*h));
	b->next_tid = next_tid;
	b->next_tgid = next_tgid;
	b->prev_state = prev_state;
	b->prev_exit_state = BPF_CORE_READ(prev, exit_state);
	b->preempt = preempt;
	h->len = sizeof(*h) + sizeof(*b);
	/* A blocking switch-out of a recorded thread: where it waits. */
	if (prev_mine && !preempt && prev_state != 0 && (stack_on & STACK_ON_SWITCH)) {
		/* TASK_UNINTERRUPTIBLE without TASK_NOLOAD: disk and other kernel waits. */
		bool d_state = (prev_state & 0x2) && !(prev_state & 0x400);
		bool kern = kernel_stacks == KSTACK_ALL || (kernel_stacks == KSTACK_AUTO && d_state);
		add_stack(ctx, s, h, sizeof(*b), STACK_KIND_SWITCH_OUT, true, kern);
	}
	submit(s->buf, h->len);
}

static __always_inline void on_wake(void *ctx, struct task_struct *p, __u16 type)
{
	if (!(events & EV_SCHED))
		return;
	__u32 wakee_tgid = BPF_CORE_READ(p, tgid);
	if (wakee_tgid == self_tgid)
		return;
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	__u32 cur_tgid = BPF_CORE_READ(cur, tgid);
	__u32 kind = WAKER_THREAD;
	__u32 what = 0;
	struct cpu_ctx *cc = get_cpuctx();
	if (cc && cc->in_irq) {
		kind = WAKER_IRQ;
		what = cc->irq;
	} else if (cc && cc->in_hrtimer) {
		kind = WAKER_TIMER;
	} else if (cc && cc->in_softirq) {
		kind = WAKER_SOFTIRQ;
		what = cc->vec;
	}
	bool waker_mine = kind == WAKER_THREAD && is_mine(cur_tgid, cur);
	if (!is_mine(wakee_tgid, p) && !waker_mine)
		return;
	__u32 wakee_tid = BPF_CORE_READ(p, pid);
	__u32 cur_tid = BPF_CORE_READ(cur, pid);
	note_task(p, wakee_tid, wakee_tgid, false);
	if (kind == WAKER_THREAD)
		note_task(cur, cur_tid, cur_tgid, false);
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, type, cur_tid, cur_tgid, bpf_ktime_get_ns());
	struct rec_wake *b = (void *)(s->buf + sizeof(*h));
	b->wakee_tid = wakee_tid;
	b->wakee_tgid = wakee_tgid;
	b->target_cpu = BPF_CORE_READ(p, wake_cpu);
	b->waker_kind = kind;
	b->irq_or_vec = what;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	if (stack_on & STACK_ON_WAKER) {
		bool kthread = kind == WAKER_THREAD && !BPF_CORE_READ(cur, mm);
		bool kern = kernel_stacks == KSTACK_ALL ||
			    (kernel_stacks == KSTACK_AUTO && (kind != WAKER_THREAD || kthread));
		add_stack(ctx, s, h, sizeof(*b), STACK_KIND_WAKER, kind == WAKER_THREAD, kern);
	}
	submit(s->buf, h->len);
}

static __always_inline void on_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	if (!is_mine(ptgid, parent))
		return;
	__u32 ctid = BPF_CORE_READ(child, pid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	note_thread_top(ctid);
	if (ctgid != ptgid) {
		__u8 one = 1;
		bpf_map_update_elem(&tracked, &ctgid, &one, BPF_ANY);
		bpf_map_delete_elem(&negative, &ctgid);
	}
	if (!(events & EV_PROC))
		return;
	note_task(child, ctid, ctgid, true);
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h =
		begin(s, REC_FORK, BPF_CORE_READ(parent, pid), ptgid, bpf_ktime_get_ns());
	struct rec_fork *b = (void *)(s->buf + sizeof(*h));
	b->child_tid = ctid;
	b->child_tgid = ctgid;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
	if (ctgid != ptgid)
		emit_maps_changed(ctid, ctgid, 3);
}

static __always_inline void on_exec(struct task_struct *p, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u32 tid = BPF_CORE_READ(p, pid);
	if (mode == MODE_COMM && !bpf_map_lookup_elem(&tracked, &tgid)) {
		/* A new program: decide again by its new name. */
		bpf_map_delete_elem(&negative, &tgid);
	}
	bpf_map_delete_elem(&thread_tops, &tid);
	if (!is_mine(tgid, p))
		return;
	bpf_map_delete_elem(&ranges, &tgid);
	if (events & EV_PROC) {
		struct scratch *s = get_scratch();
		if (!s)
			return;
		struct rec_hdr *h = begin(s, REC_EXEC, tid, tgid, bpf_ktime_get_ns());
		struct rec_exec *b = (void *)(s->buf + sizeof(*h));
		BPF_CORE_READ_STR_INTO(&b->comm, p, comm);
		const char *fname = BPF_CORE_READ(bprm, filename);
		bpf_probe_read_kernel_str(b->filename, sizeof(b->filename), fname);
		h->len = sizeof(*h) + sizeof(*b);
		submit(s->buf, h->len);
	}
	note_task(p, tid, tgid, true);
	emit_maps_changed(tid, tgid, 1);
}

static __always_inline void on_exit(struct task_struct *p)
{
	if (!(events & EV_PROC))
		return;
	__u32 tgid = BPF_CORE_READ(p, tgid);
	if (!is_mine(tgid, p))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_EXIT, BPF_CORE_READ(p, pid), tgid, bpf_ktime_get_ns());
	h->len = sizeof(*h);
	submit(s->buf, h->len);
}

/* The process is gone for good (its last switch is past): forget it, so a later
 * process reusing the number is decided afresh. */
static __always_inline void on_free(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	__u32 tgid = BPF_CORE_READ(p, tgid);
	bpf_map_delete_elem(&seen, &tid);
	bpf_map_delete_elem(&thread_tops, &tid);
	if (tid == tgid) {
		bpf_map_delete_elem(&tracked, &tgid);
		bpf_map_delete_elem(&negative, &tgid);
		bpf_map_delete_elem(&ranges, &tgid);
	}
}

static __always_inline void on_rename(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	if (!is_mine(tgid, task))
		return;
	/* The tracepoint fires before the new name is copied: the record is sent after a
	 * short delay by marking the thread unseen; its next event carries the name. */
	__u32 tid = BPF_CORE_READ(task, pid);
	bpf_map_delete_elem(&seen, &tid);
}

/* Interrupt records: kept when they interrupt a recorded thread or an idle CPU (where
 * completions of the target's I/O land), or everywhere with -a. */
static __always_inline bool irq_interesting(void)
{
	if (mode == MODE_ALL)
		return true;
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	__u32 pid = BPF_CORE_READ(cur, pid);
	if (pid == 0)
		return true;
	return task_is_mine(cur);
}

static __always_inline void on_irq(struct irqaction *action, int irq, int ret, bool entry)
{
	struct cpu_ctx *cc = get_cpuctx();
	if (cc) {
		cc->irq = irq;
		cc->in_irq = entry;
	}
	if (!(events & EV_IRQ) || !irq_interesting())
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, entry ? REC_IRQ_ENTRY : REC_IRQ_EXIT, 0, 0,
				  bpf_ktime_get_ns());
	struct rec_irq *b = (void *)(s->buf + sizeof(*h));
	b->irq = irq;
	b->ret = ret;
	if (entry) {
		const char *name = BPF_CORE_READ(action, name);
		bpf_probe_read_kernel_str(b->name, sizeof(b->name), name);
	} else {
		b->name[0] = 0;
	}
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

static __always_inline void on_softirq(unsigned int vec, bool entry)
{
	struct cpu_ctx *cc = get_cpuctx();
	if (cc) {
		cc->vec = vec;
		cc->in_softirq = entry;
	}
	if (!(events & EV_SOFTIRQ) || !irq_interesting())
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, entry ? REC_SOFTIRQ_ENTRY : REC_SOFTIRQ_EXIT, 0, 0,
				  bpf_ktime_get_ns());
	struct rec_softirq *b = (void *)(s->buf + sizeof(*h));
	b->vec = vec;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

/* Block requests are recorded for every process: the disk is shared, and its busy
 * time is what the disk pseudo thread of the wait-for graph needs. */
static __always_inline void on_block(struct request *rq, int error, unsigned int nr_bytes,
				     bool issue)
{
	if (!(events & EV_BLOCK))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	struct rec_hdr *h = begin(s, issue ? REC_BLOCK_ISSUE : REC_BLOCK_COMPLETE,
				  BPF_CORE_READ(cur, pid), BPF_CORE_READ(cur, tgid),
				  bpf_ktime_get_ns());
	struct rec_block *b = (void *)(s->buf + sizeof(*h));
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);
	__u32 major = 0, minor = 0;
	if (disk) {
		major = BPF_CORE_READ(disk, major);
		minor = BPF_CORE_READ(disk, first_minor);
	}
	b->dev = major << 20 | minor;
	/* As the block tracepoints print it: a request without a position (a flush)
	 * reports sector 0. */
	__u64 sector = BPF_CORE_READ(rq, __sector);
	b->sector = sector == (__u64)-1 ? 0 : sector;
	b->bytes = issue ? BPF_CORE_READ(rq, __data_len) : nr_bytes;
	b->cmd_flags = BPF_CORE_READ(rq, cmd_flags);
	b->error = error;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

static __always_inline void on_net(struct net_device *dev, __u32 len, bool xmit)
{
	if (!(events & EV_NET))
		return;
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	struct cpu_ctx *cc = get_cpuctx();
	bool in_softirq = cc && cc->in_softirq;
	if (mode != MODE_ALL && !task_is_mine(cur) && !(!xmit && in_softirq))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, xmit ? REC_NET_XMIT : REC_NET_RECV, BPF_CORE_READ(cur, pid),
				  BPF_CORE_READ(cur, tgid), bpf_ktime_get_ns());
	struct rec_net *b = (void *)(s->buf + sizeof(*h));
	BPF_CORE_READ_STR_INTO(&b->dev, dev, name);
	b->bytes = len;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

/* ---- kernel object identity behind a file descriptor ---- */

static __always_inline __u64 mix(__u64 x)
{
	x ^= obj_key;
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x ? x : 1;
}

#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define S_IFIFO 0010000
#define S_IFREG 0100000
#define ANON_INODE_FS_MAGIC 0x09041934

/* Both ends of a pipe, a Unix socket pair or a TCP connection get the same identity,
 * so an analysis can pair a write with the read it unblocks. Pointers are hashed with
 * a per-recording key: the trace never holds kernel addresses. */
static __always_inline __u64 object_of(struct task_struct *task, int fd, __u32 *kind)
{
	*kind = OBJ_NONE;
	if (fd < 0)
		return 0;
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt)
		return 0;
	unsigned int max = BPF_CORE_READ(fdt, max_fds);
	if ((unsigned int)fd >= max)
		return 0;
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return 0;
	struct inode *inode = BPF_CORE_READ(f, f_inode);
	__u16 imode = BPF_CORE_READ(inode, i_mode);
	void *priv = BPF_CORE_READ(f, private_data);
	switch (imode & S_IFMT) {
	case S_IFIFO:
		*kind = OBJ_PIPE;
		return mix((__u64)priv);
	case S_IFSOCK: {
		*kind = OBJ_SOCKET;
		struct socket *sock = priv;
		struct sock *sk = BPF_CORE_READ(sock, sk);
		__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
		if (family == 1 /* AF_UNIX */) {
			struct sock *peer = BPF_CORE_READ((struct unix_sock *)sk, peer);
			__u64 a = (__u64)sk, b = peer ? (__u64)peer : a;
			return mix(a < b ? a * 31 + b : b * 31 + a);
		}
		if (family == 2 || family == 10) {
			__u64 l = (__u64)BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr) << 16 |
				  BPF_CORE_READ(sk, __sk_common.skc_num);
			__u64 r = (__u64)BPF_CORE_READ(sk, __sk_common.skc_daddr) << 16 |
				  bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
			return mix(l < r ? l * 0x9e3779b97f4a7c15ULL + r
					 : r * 0x9e3779b97f4a7c15ULL + l);
		}
		return mix((__u64)sk);
	}
	default:
		break;
	}
	unsigned long magic = BPF_CORE_READ(inode, i_sb, s_magic);
	if (magic == ANON_INODE_FS_MAGIC) {
		*kind = OBJ_ANON;
		return mix((__u64)priv);
	}
	*kind = OBJ_FILE;
	return mix((__u64)inode);
}

#define NR_MMAP 9
#define PROT_EXEC 4

static __always_inline void on_sys_enter(void *ctx, struct pt_regs *regs, long id)
{
	if (id < 0 || id >= 512)
		return;
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = BPF_CORE_READ(cur, tgid);
	if (!is_mine(tgid, cur))
		return;
	__u32 tid = BPF_CORE_READ(cur, pid);
	if (id == NR_MMAP && (BPF_CORE_READ(regs, dx) & PROT_EXEC))
		emit_maps_changed(tid, tgid, 2);
	if (!(events & EV_SYSCALL))
		return;
	__u32 key = id;
	__u8 *conf = bpf_map_lookup_elem(&syscalls, &key);
	if (!conf || !(*conf & 1))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_SYS_ENTER, tid, tgid, bpf_ktime_get_ns());
	struct rec_sys_enter *b = (void *)(s->buf + sizeof(*h));
	b->nr = id;
	b->arg0 = BPF_CORE_READ(regs, di);
	b->obj = 0;
	b->obj_kind = OBJ_NONE;
	if (*conf & 2) {
		__u32 k = 0;
		b->obj = object_of(cur, (int)b->arg0, &k);
		b->obj_kind = k;
	}
	h->len = sizeof(*h) + sizeof(*b);
	/* A kernel stack at syscall entry is always the entry path: user frames only. */
	if (stack_on & STACK_ON_SYSCALL)
		add_stack(ctx, s, h, sizeof(*b), STACK_KIND_SYSCALL, true, false);
	submit(s->buf, h->len);
}

static __always_inline void on_sys_exit(struct pt_regs *regs, long ret)
{
	if (!(events & EV_SYSCALL))
		return;
	long id = BPF_CORE_READ(regs, orig_ax);
	if (id < 0 || id >= 512)
		return;
	__u32 key = id;
	__u8 *conf = bpf_map_lookup_elem(&syscalls, &key);
	if (!conf || !(*conf & 1))
		return;
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = BPF_CORE_READ(cur, tgid);
	if (!is_mine(tgid, cur))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h =
		begin(s, REC_SYS_EXIT, BPF_CORE_READ(cur, pid), tgid, bpf_ktime_get_ns());
	struct rec_sys_exit *b = (void *)(s->buf + sizeof(*h));
	b->nr = id;
	b->ret = ret;
	b->pad = 0;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

static __always_inline void on_hrtimer(bool entry)
{
	struct cpu_ctx *cc = get_cpuctx();
	if (cc)
		cc->in_hrtimer = entry;
}

/* ---- entry points: one BTF tracepoint and one raw tracepoint per handler ---- */

static __always_inline void nest(int d)
{
	struct cpu_ctx *cc = get_cpuctx();
	if (cc)
		cc->depth += d;
}

/* ---- on-CPU samples ---- */

/* A periodic sample of whatever runs on this CPU (a software cpu-clock perf event per
 * CPU, opened by user space): kept when it is a recorded thread, with its user stack
 * (copied or walked as for switch-outs) and, unless kernel stacks are off, the kernel
 * frames of the interrupted context (none when it was in user mode). */
static __always_inline void on_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = BPF_CORE_READ(task, tgid);
	if (!is_mine(tgid, task))
		return;
	__u32 tid = BPF_CORE_READ(task, pid);
	note_task(task, tid, tgid, false);
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_SAMPLE, tid, tgid, bpf_ktime_get_ns());
	h->len = sizeof(*h);
	add_stack(ctx, s, h, 0, STACK_KIND_SAMPLE, true, kernel_stacks != KSTACK_NONE);
	submit(s->buf, h->len);
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	nest(1);
	on_sample(ctx);
	nest(-1);
	return 0;
}

#define BOTH(tp, args, body)                                                              \
	SEC("tp_btf/" #tp) int BPF_PROG(btf_##tp, args)                                    \
	{                                                                                  \
		nest(1);                                                                   \
		body;                                                                      \
		nest(-1);                                                                  \
		return 0;                                                                  \
	}                                                                                  \
	SEC("raw_tp/" #tp) int BPF_PROG(raw_##tp, args)                                    \
	{                                                                                  \
		nest(1);                                                                   \
		body;                                                                      \
		nest(-1);                                                                  \
		return 0;                                                                  \
	}

#define ARGS(...) __VA_ARGS__

BOTH(sched_switch, ARGS(bool preempt, struct task_struct *prev, struct task_struct *next,
			unsigned int prev_state),
     on_switch(ctx, preempt, prev, next, prev_state))
BOTH(sched_waking, ARGS(struct task_struct *p), on_wake(ctx, p, REC_WAKING))
BOTH(sched_wakeup_new, ARGS(struct task_struct *p), on_wake(ctx, p, REC_WAKEUP_NEW))
BOTH(sched_process_fork, ARGS(struct task_struct *parent, struct task_struct *child),
     on_fork(parent, child))
BOTH(sched_process_exec, ARGS(struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm),
     on_exec(p, bprm))
BOTH(sched_process_exit, ARGS(struct task_struct *p), on_exit(p))
BOTH(sched_process_free, ARGS(struct task_struct *p), on_free(p))
BOTH(task_rename, ARGS(struct task_struct *task, const char *comm), on_rename(task))
BOTH(irq_handler_entry, ARGS(int irq, struct irqaction *action), on_irq(action, irq, 0, true))
BOTH(irq_handler_exit, ARGS(int irq, struct irqaction *action, int ret),
     on_irq(action, irq, ret, false))
BOTH(hrtimer_expire_entry, ARGS(struct hrtimer *t, ktime_t *now), on_hrtimer(true))
BOTH(hrtimer_expire_exit, ARGS(struct hrtimer *t), on_hrtimer(false))
BOTH(softirq_entry, ARGS(unsigned int vec), on_softirq(vec, true))
BOTH(softirq_exit, ARGS(unsigned int vec), on_softirq(vec, false))
BOTH(block_rq_issue, ARGS(struct request *rq), on_block(rq, 0, 0, true))
BOTH(block_rq_complete, ARGS(struct request *rq, int error, unsigned int nr_bytes),
     on_block(rq, error, nr_bytes, false))
BOTH(net_dev_xmit, ARGS(struct sk_buff *skb, int rc, struct net_device *dev, unsigned int len),
     on_net(dev, len, true))
BOTH(netif_receive_skb, ARGS(struct sk_buff *skb),
     on_net(BPF_CORE_READ(skb, dev), BPF_CORE_READ(skb, len), false))
BOTH(sys_enter, ARGS(struct pt_regs *regs, long id), on_sys_enter(ctx, regs, id))
BOTH(sys_exit, ARGS(struct pt_regs *regs, long ret), on_sys_exit(regs, ret))
