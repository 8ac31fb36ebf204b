// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Sockets: which thread's data ended a wait. A send by a recorded thread is recorded
 * with its socket's two ends (sock_send_length); when the network stack tells a socket
 * that data arrived (sk_data_ready), the next wake-up in the same context is the one
 * that data caused, and it is followed by a record naming the socket from the
 * receiver's side. User space pairs the two (the ends swapped, and for TCP the
 * sequence numbers), so a wake-up run by a softirq on loopback or by ksoftirqd names
 * the thread that sent the data. Part of recorder.bpf.c, included after
 * fd_identity.h (it uses mix()); not a standalone header. */
#ifndef CAUSEWAY_SOCKETS_H
#define CAUSEWAY_SOCKETS_H

#define SK_AF_UNIX 1
#define SK_AF_INET 2
#define SK_AF_INET6 10
#define SK_IPPROTO_TCP 6
#define SK_IPPROTO_UDP 17
/* How far a wake-up may follow the socket's sk_data_ready in the same context to be
 * taken as its consequence. In a softirq, the generation count already confines the
 * pair to one softirq run, where the two are adjacent in the receive path; the window
 * only bounds a pathological run, and it is wall-clock time, which includes time the
 * virtual CPU did not run: a 3.6 ms stall of a VM fell between a loopback packet's
 * sk_data_ready and its wake-up (nothing else recorded on either CPU meanwhile), and a
 * 1 ms window left that wait to the network stack. In a thread's own context (a Unix
 * socket's send) the two are a microsecond apart, and a later wake-up by the same
 * thread is likely another hand-off. */
#define READY_WINDOW_SOFTIRQ_NS 20000000
#define READY_WINDOW_THREAD_NS 50000

static __always_inline void put_object(__u8 *dst, __u64 id)
{
	__builtin_memcpy(dst, &id, sizeof(id));
}

static __always_inline void put_v4(__u8 *dst, __u32 addr)
{
	dst[10] = 0xff;
	dst[11] = 0xff;
	__builtin_memcpy(dst + 12, &addr, sizeof(addr));
}

/* The source of the newest datagram queued on an unconnected datagram socket: the
 * end that sent the data that just arrived. */
static __always_inline void datagram_source(__u64 skv, struct rec_flow *f)
{
	const struct sock *sk = (const struct sock *)skv;
	__u64 head = skv + bpf_core_field_offset(struct sock, sk_receive_queue);
	__u64 skb = (__u64)BPF_CORE_READ(sk, sk_receive_queue.prev);
	if (!skb || skb == head)
		return;
	const struct sk_buff *b = (const struct sk_buff *)skb;
	unsigned char *base = BPF_CORE_READ(b, head);
	__u16 nh = BPF_CORE_READ(b, network_header);
	__u16 th = BPF_CORE_READ(b, transport_header);
	__u8 ver = 0;
	__u16 sport = 0;
	bpf_probe_read_kernel(&ver, 1, base + nh);
	bpf_probe_read_kernel(&sport, 2, base + th);
	if (ver >> 4 == 4) {
		__u32 a = 0;
		bpf_probe_read_kernel(&a, 4, base + nh + 12);
		__builtin_memset(f->remote_addr, 0, sizeof(f->remote_addr));
		put_v4(f->remote_addr, a);
	} else if (ver >> 4 == 6) {
		bpf_probe_read_kernel(f->remote_addr, 16, base + nh + 8);
	} else {
		return;
	}
	f->remote_port = bpf_ntohs(sport);
}

/* The ends of a socket (given as a number) from its own side; false for families
 * other than Unix, IPv4 and IPv6. */
static __always_inline bool read_flow(__u64 skv, struct rec_flow *f, bool ready)
{
	/* Direct loads through a cast pointer (the verifier guards them against faults as
	 * a probe read would), not probe-read helper calls: a dozen of those per record
	 * were most of a socket record's cost. */
	struct sock *sk = bpf_core_cast((void *)skv, struct sock);
	__builtin_memset(f, 0, sizeof(*f));
	__u16 family = sk->__sk_common.skc_family;
	f->family = family;
	if (family == SK_AF_UNIX) {
		f->proto = sk->sk_type;
		__u64 peer = ptr_value(bpf_core_cast((void *)skv, struct unix_sock)->peer);
		put_object(f->local_addr, mix(skv));
		if (peer)
			put_object(f->remote_addr, mix(peer));
		return true;
	}
	if (family != SK_AF_INET && family != SK_AF_INET6)
		return false;
	f->proto = sk->sk_protocol;
	f->local_port = sk->__sk_common.skc_num;
	f->remote_port = bpf_ntohs(sk->__sk_common.skc_dport);
	if (family == SK_AF_INET) {
		put_v4(f->local_addr, sk->__sk_common.skc_rcv_saddr);
		put_v4(f->remote_addr, sk->__sk_common.skc_daddr);
	} else {
		__builtin_memcpy(f->local_addr, &sk->__sk_common.skc_v6_rcv_saddr,
				 sizeof(f->local_addr));
		__builtin_memcpy(f->remote_addr, &sk->__sk_common.skc_v6_daddr,
				 sizeof(f->remote_addr));
	}
	if (ready && f->proto == SK_IPPROTO_UDP && f->remote_port == 0)
		datagram_source(skv, f);
	return true;
}

static __always_inline void on_sock_send(struct sock *sk, int ret)
{
	if (!(events & EV_SOCK) || ret <= 0)
		return;
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 tgid = cur->tgid;
	if (!is_mine(tgid, cur))
		return;
	__u32 tid = cur->pid;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_SOCK_SEND, tid, tgid, bpf_ktime_get_ns());
	struct rec_sock_send *b = (void *)(s->buf + sizeof(*h));
	__u64 skv = ptr_value(sk);
	if (!read_flow(skv, &b->flow, false))
		return;
	b->bytes = ret;
	b->seq = 0;
	b->has_seq = 0;
	b->pad = 0;
	if (b->flow.proto == SK_IPPROTO_TCP && b->flow.family != SK_AF_UNIX) {
		b->seq = bpf_core_cast((void *)skv, struct tcp_sock)->write_seq;
		b->has_seq = 1;
	}
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}

static __always_inline void on_sk_data_ready(const struct sock *sk)
{
	if (!(events & EV_SOCK))
		return;
	struct cpu_ctx *cc = get_cpuctx();
	if (!cc)
		return;
	cc->ready_sk = ptr_value(sk);
	cc->ready_tid = (__u32)bpf_get_current_pid_tgid();
	cc->ready_gen = cc->sirq_gen;
	cc->ready_ts = bpf_ktime_get_ns();
}

/* The system call a woken thread is blocked in (x86-64 orig_ax), or -1 if unknown. */
static __always_inline long wakee_syscall(struct task_struct *p)
{
	struct pt_regs *r = task_regs(p);
	return r ? r->orig_ax : -1;
}

/* Whether a thread blocked in system call `nr` can be woken by data arriving on a
 * socket: a read or receive, a wait for readiness (poll, select, epoll), an accept, a
 * splice from a socket or io_uring. A thread in any other call (a futex, a sleep, a
 * child wait) was woken by something else: the mark is not its cause. Unknown (-1)
 * is let through. */
static __always_inline bool waits_for_data(long nr)
{
	switch (nr) {
	case -1:
	case 0:   /* read */
	case 7:   /* poll */
	case 19:  /* readv */
	case 23:  /* select */
	case 43:  /* accept */
	case 45:  /* recvfrom */
	case 47:  /* recvmsg */
	case 232: /* epoll_wait */
	case 270: /* pselect6 */
	case 271: /* ppoll */
	case 275: /* splice */
	case 281: /* epoll_pwait */
	case 288: /* accept4 */
	case 299: /* recvmmsg */
	case 426: /* io_uring_enter */
	case 441: /* epoll_pwait2 */
		return true;
	default:
		return false;
	}
}

/* After a wake-up record at `ts` by the context of `cur_tid`: if a socket was made
 * ready just before in the same context, say which (once: the socket's first
 * wake-up is the waiter its data was for). The waiter must be blocked in a call that
 * waits for data: data processed from a socket's backlog when its owner releases it
 * (release_sock, in that thread's own context) wakes nobody, and the owner's next
 * wake-up of another thread (handing the request to a worker through a queue) must
 * not be taken for it. */
static __always_inline void emit_sock_ready(struct task_struct *wakee, __u32 wakee_tid,
					    __u32 cur_tid, __u32 cur_tgid, __u64 ts)
{
	if (!(events & EV_SOCK))
		return;
	struct cpu_ctx *cc = get_cpuctx();
	if (!cc || !cc->ready_sk)
		return;
	__u64 skv = cc->ready_sk;
	__u64 window = cc->in_softirq ? READY_WINDOW_SOFTIRQ_NS : READY_WINDOW_THREAD_NS;
	bool same = cc->ready_tid == cur_tid && cc->ready_gen == cc->sirq_gen &&
		    ts - cc->ready_ts < window;
	cc->ready_sk = 0;
	if (!same || !waits_for_data(wakee_syscall(wakee)))
		return;
	struct scratch *s = get_scratch();
	if (!s)
		return;
	struct rec_hdr *h = begin(s, REC_SOCK_READY, cur_tid, cur_tgid, ts);
	struct rec_sock_ready *b = (void *)(s->buf + sizeof(*h));
	if (!read_flow(skv, &b->flow, true))
		return;
	b->wakee_tid = wakee_tid;
	b->seq = 0;
	b->has_seq = 0;
	b->pad = 0;
	if (b->flow.proto == SK_IPPROTO_TCP && b->flow.family != SK_AF_UNIX) {
		b->seq = bpf_core_cast((void *)skv, struct tcp_sock)->rcv_nxt;
		b->has_seq = 1;
	}
	h->len = sizeof(*h) + sizeof(*b);
	submit(s->buf, h->len);
}
#endif
