// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* User stacks copied for DWARF unwinding in user space: where a thread's stack ends, the copy, and the stack trailer of a record.
 * Part of recorder.bpf.c, included there in order; not a standalone header. */
#ifndef CAUSEWAY_USTACK_COPY_H
#define CAUSEWAY_USTACK_COPY_H

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

/* ---- the unwind memo ---- */

/* Entries user space wrote after unwinding a copy (struct memo_key / memo_val). A
 * thread blocks at the same few places again and again; when its stack there holds the
 * words the earlier unwind read, the record carries the memo id instead of a copy, so
 * the ring, the reader and the unwinder do nothing per stack. Without preallocation:
 * most recordings use a few dozen entries. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct memo_key);
	__type(value, struct memo_val);
} ustack_memo SEC(".maps");

/* Does the stack from sp hold the words memo entry m checks (and rbp the value it
 * needs)? Reads the entry's span of the stack into buf. */
static __always_inline bool memo_holds(struct memo_val *m, __u8 *buf, __u64 sp, __u64 bp)
{
	if ((m->check & MEMO_CHECK_BP) && m->bp != bp)
		return false;
	__u32 span = m->span;
	if (span == 0 || span > MAX_COPY)
		return false;
	if (bpf_probe_read_user(buf, span, (void *)sp))
		return false;
	for (int i = 0; i < MEMO_WORDS; i++) {
		if (i >= m->n)
			break;
		__u32 off = m->off[i];
		if (off > MAX_COPY - 8)
			return false;
		if (*(__u64 *)(buf + off) != m->val[i])
			return false;
	}
	return true;
}

/* DWARF mode: send the user registers and the stack window above sp as a REC_USTACK
 * record ahead of the record at h (same ts and tid), for user space to unwind; or,
 * when the unwind memo knows this stack, set *memo to its id and the copy flags and
 * send nothing. The window stops where the thread's frames end (stack_end), so a
 * shallow stack costs what it holds, not the whole window. Returns STK_F_* flags for
 * the stack trailer. */
static __always_inline __u32 copy_user(struct rec_hdr *h, __u64 *memo)
{
	struct task_struct *task = bpf_get_current_task_btf();
	if (!task->mm)
		return 0; /* a kernel thread: no user stack, and none missing */
	struct pt_regs *regs = task_regs(task);
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
	b->ip = regs->ip;
	b->sp = regs->sp;
	b->bp = regs->bp;
	/* Most unwinds never reach the copy's end: their entries hold without it, so
	 * the stack's range (stack_end) is not even looked at. */
	struct memo_val *m = 0;
	if (unwind_memo) {
		struct memo_key k = {.tgid = h->tgid, .pad = 0, .ip = b->ip, .sp = b->sp};
		m = bpf_map_lookup_elem(&ustack_memo, &k);
		if (m && !(m->check & MEMO_CHECK_EXTENT) &&
		    memo_holds(m, cb->buf + USTACK_HDR, b->sp, b->bp)) {
			*memo = m->id;
			return STK_F_USER_MEMO;
		}
	}
	__u32 flags = 0;
	struct stack_ranges *r = 0;
	__u64 end = stack_end(task, b->sp, &flags, &r);
	__u64 size = r && r->window ? r->window : stack_window;
	if (end) {
		/* A thread's stack mapping ends with its TLS block and thread descriptor,
		 * which the thread pointer (fsbase) points at: no frame lies above it. */
		__u64 fs = BPF_CORE_READ(task, thread.fsbase);
		/* Either bound leaves only this thread's frames between sp and end. */
		bool bounded = flags & USTK_F_TOP;
		if (fs > b->sp && fs < end) {
			end = fs;
			flags &= ~USTK_F_TOP;
			bounded = true;
		}
		if (end - b->sp < size) {
			size = end - b->sp;
		} else {
			/* The thread's frames go on past the window. Where their top is known
			 * (a thread started while recording, a main thread) or bounded by the
			 * thread descriptor (any thread of a threads library, also those that
			 * existed before the recording), this copy is cut short for certain:
			 * let this thread's next copies take twice the window, up to MAX_COPY.
			 * Threads with neither (the window then runs to the end of the mapping)
			 * keep the window: most of what lies past it is unused stack. */
			if (bounded && r && size < MAX_COPY)
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
	if (m && (m->check & MEMO_CHECK_EXTENT) && end && m->len == size &&
	    m->flags == (flags & (USTK_F_CUT | USTK_F_TOP)) &&
	    memo_holds(m, cb->buf + USTACK_HDR, b->sp, b->bp)) {
		*memo = m->id | ((__u64)flags << 32);
		return STK_F_USER_MEMO;
	}
	/* Copies are most of the ring's bytes: when the reader falls behind, drop them
	 * (counted) before the events themselves have no room. */
	if (reader_behind())
		return STK_F_USER_SKIPPED;
	ch->ts = h->ts;
	ch->type = REC_USTACK;
	ch->flags = 0;
	ch->pad = 0;
	ch->tid = h->tid;
	ch->tgid = h->tgid;
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
			__u64 memo = 0;
			__u32 f = copy_user(h, &memo);
			st->flags |= f;
			__u32 o = w->off;
			if (f & STK_F_USER_MEMO) {
				if (o <= MAX_RECORD - 8) {
					*(__u64 *)(s->buf + o) = memo;
					w->off = o + 8;
				} else {
					st->flags ^= STK_F_USER_MEMO | STK_F_USER_FAILED;
				}
			}
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
#endif
