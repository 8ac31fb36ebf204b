// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The identity of the kernel object behind a file descriptor (pipe, socket, anonymous inode, file), hashed with a per-recording key.
 * Part of recorder.bpf.c, included there in order; not a standalone header. */
#ifndef CAUSEWAY_FD_IDENTITY_H
#define CAUSEWAY_FD_IDENTITY_H

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
#endif
