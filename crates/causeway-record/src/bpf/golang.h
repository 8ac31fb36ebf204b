// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Goroutines of Go programs, from uprobes on the runtime's scheduler: which goroutine
 * a thread runs (runtime.execute), which one parks and why (runtime.gopark), and
 * which one readies which (runtime.ready, runtime.injectglist). Go's register ABI
 * (amd64, Go 1.17+) passes the first arguments in RAX, RBX, RCX and keeps the current
 * goroutine in R14; the field offsets come per binary from user space (its DWARF),
 * selected by the uprobe's cookie. The probes are bound to the recorded processes,
 * so every hit is theirs. Part of recorder.bpf.c, not a standalone header. */
#ifndef CAUSEWAY_GOLANG_H
#define CAUSEWAY_GOLANG_H

static __always_inline void nest(int d);

/* Threads of followed Go programs: 1 while the thread runs a goroutine (from its
 * runtime.execute to its gopark), 0 while it is in the scheduler. A thread in the
 * scheduler that blocks or wakes another is the runtime's business (idle, spinning,
 * polling, handing work over): its user stack is the scheduler's and is not taken,
 * the largest part of the cost of a Go program's switches (the goroutine view drops
 * those waits anyway). Threads of other programs are not in the map. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} go_carrying SEC(".maps");

/* Set once a thread enters go_carrying: until then (no Go program followed, the
 * common case) the scheduler probes skip the map lookup, a call on every switch-out
 * and wake-up that takes a stack. */
__u32 go_threads_seen = 0;

static __always_inline bool go_idle(__u32 tid)
{
	if (!go_threads_seen)
		return false;
	__u8 *v = bpf_map_lookup_elem(&go_carrying, &tid);
	return v && !*v;
}

static __always_inline void go_set_carrying(__u32 tid, __u8 on)
{
	bpf_map_update_elem(&go_carrying, &tid, &on, BPF_ANY);
	if (!go_threads_seen)
		go_threads_seen = 1;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GO_MAX_BINARIES);
	__type(key, __u32);
	__type(value, struct go_layout);
} go_layouts SEC(".maps");

static __always_inline __u64 go_word(__u64 addr)
{
	__u64 v = 0;
	if (addr)
		bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

static __always_inline struct go_layout *go_layout_of(struct pt_regs *ctx, __u32 *slot)
{
	*slot = (__u32)bpf_get_attach_cookie(ctx);
	return bpf_map_lookup_elem(&go_layouts, slot);
}

/* The user goroutine the current thread carries (g.m.curg from the g in R14, which
 * is the thread's g0 on the system stack); 0 when it carries none. */
static __always_inline __u64 go_current(struct pt_regs *ctx, struct go_layout *l)
{
	__u64 m = go_word(ctx->r14 + l->g_m);
	__u64 curg = m ? go_word(m + l->m_curg) : 0;
	return curg ? go_word(curg + l->g_goid) : 0;
}

static __always_inline bool go_enabled(__u32 *tid, __u32 *tgid)
{
	if (!(events & EV_GO))
		return false;
	__u64 id = bpf_get_current_pid_tgid();
	*tid = (__u32)id;
	*tgid = id >> 32;
	return true;
}

static __always_inline void go_emit_ready(__u32 tid, __u32 tgid, __u64 ts, __u64 goid,
					  __u64 by)
{
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_GO_READY, tid, tgid, ts);
	struct rec_go_ready *b = (void *)(s->buf + sizeof(*h));
	b->goid = goid;
	b->by_goid = by;
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

/* Where the goroutine parks: its user stack, walked by the kernel through Go's frame
 * pointers (every Go build keeps them), without gopark's own frame (its entry is not
 * a return address, and it is always gopark). Sent as the record's stack trailer, as
 * a switch-out stack is. */
static __always_inline void go_park_stack(struct pt_regs *ctx, struct scratch *s,
					  struct rec_hdr *h, __u32 body)
{
	__u32 base = sizeof(struct rec_hdr) + body;
	if (base > 64)
		return;
	struct rec_stack *st = (void *)(s->buf + base);
	st->kind = STACK_KIND_SWITCH_OUT;
	st->flags = 0;
	st->n_user = 0;
	st->n_kernel = 0;
	st->pad = 0;
	long got = bpf_get_stack(ctx, s->buf + base + sizeof(*st), GO_PARK_FRAMES * 8,
				 BPF_F_USER_STACK | 1);
	if (got <= 0)
		return;
	__u32 n = got / 8;
	if (n >= GO_PARK_FRAMES) {
		n = GO_PARK_FRAMES;
		st->flags |= STK_F_USER_TRUNCATED;
	}
	st->n_user = n;
	h->flags |= REC_F_STACK;
	h->len = base + sizeof(*st) + n * 8;
}

/* The socket behind file descriptor `fd` of the current process (0 if none). */
static __always_inline __u64 go_sock_of_fd(__u64 fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return 0;
	__u16 mode = BPF_CORE_READ(f, f_inode, i_mode);
	if ((mode & S_IFMT) != S_IFSOCK)
		return 0;
	struct socket *sock = BPF_CORE_READ(f, private_data);
	return ptr_value(BPF_CORE_READ(sock, sk));
}

/* A park for network reads: which socket, and (TCP) the next byte expected, so that
 * user space can name the send that carried the byte the goroutine waits for. gopark
 * gets &pd.rg for a read (&pd.wg for a write, not followed); pd.self points back at
 * the descriptor, which confirms which. */
static __always_inline void go_netwait(struct pt_regs *ctx, struct go_layout *l, __u32 tid,
				       __u32 tgid, __u64 ts, __u64 goid)
{
	if (l->pd_fd == GO_NO_FIELD || !ctx->bx)
		return;
	__u64 pd = ctx->bx - l->pd_rg;
	if (go_word(pd + l->pd_self) != pd)
		return;
	__u64 skv = go_sock_of_fd(go_word(pd + l->pd_fd));
	struct scratch *s = get_scratch();
	if (!skv || !s)
		return;
	struct rec_hdr *h = begin(s, REC_GO_NETWAIT, tid, tgid, ts);
	struct rec_go_netwait *b = (void *)(s->buf + sizeof(*h));
	if (!read_flow(skv, &b->flow, true))
		return;
	b->goid = goid;
	b->seq = 0;
	b->has_seq = 0;
	if (b->flow.proto == SK_IPPROTO_TCP && b->flow.family != SK_AF_UNIX) {
		b->seq = BPF_CORE_READ((struct tcp_sock *)skv, rcv_nxt);
		b->has_seq = 1;
	}
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

static __always_inline void go_execute_body(struct pt_regs *ctx)
{
	__u32 tid, tgid, slot;
	if (!go_enabled(&tid, &tgid))
		return;
	struct go_layout *l = go_layout_of(ctx, &slot);
	if (!l)
		return;
	__u64 gp = ctx->ax;
	go_set_carrying(tid, 1);
	struct scratch *s = get_scratch();
	if (!gp || !s)
		return;
	struct rec_hdr *h = begin(s, REC_GO_RUN, tid, tgid, bpf_ktime_get_ns());
	struct rec_go_run *b = (void *)(s->buf + sizeof(*h));
	b->goid = go_word(gp + l->g_goid);
	b->parent_goid = l->g_parent_goid == GO_NO_FIELD ? 0 : go_word(gp + l->g_parent_goid);
	b->start_pc = go_word(gp + l->g_startpc);
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
	return;
}

static __always_inline void go_park_body(struct pt_regs *ctx)
{
	__u32 tid, tgid, slot;
	if (!go_enabled(&tid, &tgid))
		return;
	struct go_layout *l = go_layout_of(ctx, &slot);
	go_set_carrying(tid, 0);
	struct scratch *s = get_scratch();
	if (!l || !s)
		return;
	struct rec_hdr *h = begin(s, REC_GO_PARK, tid, tgid, bpf_ktime_get_ns());
	struct rec_go_park *b = (void *)(s->buf + sizeof(*h));
	/* gopark runs on the goroutine's own stack: R14 is the goroutine. */
	b->goid = go_word(ctx->r14 + l->g_goid);
	b->reason = ctx->cx & 0xff;
	b->slot = slot;
	h->len = sizeof(*h) + sizeof(*b);
	__u64 goid = b->goid, ts = h->ts;
	if (stack_on & STACK_ON_SWITCH)
		go_park_stack(ctx, s, h, sizeof(*b));
	submit(s->buf, h->len);
	if ((ctx->cx & 0xff) == l->io_wait && (events & EV_SOCK))
		go_netwait(ctx, l, tid, tgid, ts, goid);
	return;
}

static __always_inline void go_ready_body(struct pt_regs *ctx)
{
	__u32 tid, tgid, slot;
	if (!go_enabled(&tid, &tgid))
		return;
	struct go_layout *l = go_layout_of(ctx, &slot);
	if (!l || !ctx->ax)
		return;
	go_emit_ready(tid, tgid, bpf_ktime_get_ns(), go_word(ctx->ax + l->g_goid),
		      go_current(ctx, l));
	return;
}

static __always_inline void go_inject_body(struct pt_regs *ctx)
{
	__u32 tid, tgid, slot;
	if (!go_enabled(&tid, &tgid))
		return;
	struct go_layout *l = go_layout_of(ctx, &slot);
	if (!l || !ctx->ax)
		return;
	__u64 ts = bpf_ktime_get_ns();
	__u64 by = go_current(ctx, l);
	__u64 gp = go_word(ctx->ax + l->glist_head);
	for (int i = 0; i < GO_MAX_INJECT && gp; i++) {
		go_emit_ready(tid, tgid, ts, go_word(gp + l->g_goid), by);
		gp = go_word(gp + l->g_schedlink);
	}
	return;
}
/* Each program counts itself into the CPU's nesting depth, as the tracepoint programs
 * do, so that an interrupt's program that runs meanwhile builds its record in the next
 * scratch slot rather than over this one. */
#define GO_PROBE(name)                                                                    \
	SEC("uprobe") int name(struct pt_regs *ctx)                                        \
	{                                                                                  \
		nest(1);                                                                   \
		name##_body(ctx);                                                          \
		nest(-1);                                                                  \
		return 0;                                                                  \
	}

GO_PROBE(go_execute)
GO_PROBE(go_park)
GO_PROBE(go_ready)
GO_PROBE(go_inject)
#endif
