// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* User stacks walked in BPF with frame pointers, scoped (Uscope Algorithm 1).
 * Part of recorder.bpf.c, included there in order; not a standalone header. */
#ifndef CAUSEWAY_USTACK_WALK_H
#define CAUSEWAY_USTACK_WALK_H

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
	struct pt_regs *regs = task_regs(task);
	if (!regs) {
		w->flags |= STK_F_USER_FAILED;
		return;
	}
	__u64 ip = regs->ip;
	w->sp = regs->sp;
	w->bp = regs->bp;
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
#endif
