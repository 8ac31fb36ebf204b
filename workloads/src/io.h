/* Disk and socket helpers shared by the workloads that write a log or talk over
 * over pipes and loopback (blocking-write, blocking-net, prefork-lock, group-commit,
 * lock-chain, stopped-peer, pipeline-commit, lock-holder-idle). */
#ifndef CAUSEWAY_WORKLOAD_IO_H
#define CAUSEWAY_WORKLOAD_IO_H

#include "common.h"

#include <errno.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

/* --sync-us N: every flush of the log replaced by a sleep of N us (0, the default:
 * the real fsync/fdatasync). An experiment's knob: it changes the length of one wait
 * by a known amount and nothing else, so a predicted gain can be checked by running
 * the program at the other setting. */
static int wl_sync_us;

#define WL_SYNC_US_OPT                                                          \
	{ "sync-us", WL_OPT_INT, &wl_sync_us, 0, 10000000,                      \
	  "replace each flush of the log by a sleep of N us (default 0: flush)" }

/* Flush the log (fdatasync when `data_only`, else fsync), or sleep --sync-us. */
static inline int wl_flush(int fd, int data_only)
{
	if (wl_sync_us > 0) {
		struct timespec ts = { wl_sync_us / 1000000,
				       (long)(wl_sync_us % 1000000) * 1000 };
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		return 0;
	}
	return data_only ? fdatasync(fd) : fsync(fd);
}

/* tmpfs and ramfs: fsync returns at once there, so a log on them never waits. */
static inline int wl_is_memory_fs(const char *dir)
{
	struct statfs sfs;
	if (statfs(dir, &sfs) != 0)
		return 0;
	return sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC;
}

/* The directory for a workload's log: the one asked for (with a warning if it is
 * memory-backed), else the first writable disk-backed one of ., /tmp, /var/tmp. */
static inline const char *wl_log_dir(const char *prog, const char *requested)
{
	if (requested) {
		if (wl_is_memory_fs(requested))
			fprintf(stderr, "%s: warning: %s is tmpfs/ramfs, fsync will not block\n",
				prog, requested);
		return requested;
	}
	static const char *const candidates[] = { ".", "/tmp", "/var/tmp" };
	for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++)
		if (access(candidates[i], W_OK) == 0 && !wl_is_memory_fs(candidates[i]))
			return candidates[i];
	wl_die("%s: no writable disk-backed directory; use --dir", prog);
}

/* The path of this run's temporary log (one per program). */
static inline char *wl_log_path(void)
{
	static char path[4096];
	return path;
}

/* The log must not outlive an interrupted run. */
static inline void wl_log_on_signal(int sig)
{
	if (wl_log_path()[0])
		unlink(wl_log_path());
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Create `dir/causeway-PROG.XXXXXX` for writing, removed again on SIGINT or SIGTERM;
 * returns its descriptor (the path is wl_log_path()). */
static inline int wl_log_create(const char *prog, const char *dir)
{
	char *path = wl_log_path();
	snprintf(path, 4096, "%s/causeway-%s.XXXXXX", dir, prog);
	int fd = mkstemp(path);
	if (fd < 0) {
		int e = errno;
		path[0] = 0;
		wl_die("%s: cannot create a file in %s: %s", prog, dir, strerror(e));
	}
	signal(SIGINT, wl_log_on_signal);
	signal(SIGTERM, wl_log_on_signal);
	return fd;
}

/* Send (out) or receive all `len` bytes: 1 when done, 0 on a clean end of stream
 * before any byte, -1 on an error or a stream cut short. */
static inline int wl_io_full(int fd, void *buf, size_t len, int out)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = out ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL)
				: recv(fd, (char *)buf + done, len - done, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && done == 0 && !out)
			return 0;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 1;
}

/* Serve one-byte requests on fds[first], fds[first + stride], ... in turn (each client
 * has one request in flight, so a blocking read per client in order is a fair round),
 * replying with `serve`, until every one of them reads end-of-file. A client that
 * stops shuts its end for writing (wl_client_done): its socket then leaves the rounds,
 * or the server would wait forever on it while a later client waits for its reply.
 * Returns when all are done or a reply cannot be written. */
static inline void wl_serve_in_turn(const int *fds, int n, int first, int stride,
				    void (*serve)(char *reply, const char *req))
{
	char req[1], reply[1];
	unsigned char done[n > 0 ? n : 1];
	int left = 0;
	for (int i = 0; i < n; i++)
		done[i] = 0;
	for (int i = first; i < n; i += stride)
		left++;
	while (left > 0) {
		for (int i = first; i < n; i += stride) {
			if (done[i])
				continue;
			if (read(fds[i], req, 1) != 1) {
				done[i] = 1;
				left--;
				continue;
			}
			serve(reply, req);
			if (write(fds[i], reply, 1) != 1)
				return;
		}
	}
}

/* A client of wl_serve_in_turn that sends no more requests. */
static inline void wl_client_done(int fd)
{
	shutdown(fd, SHUT_WR);
}

/* Small requests and replies go out at once, not after Nagle's delay. */
static inline void wl_set_nodelay(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Write one 64-bit word to a pipe or socket, or die naming `prog`. */
static inline void wl_put_u64(const char *prog, int fd, uint64_t v)
{
	ssize_t n;
	while ((n = write(fd, &v, sizeof v)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof v)
		wl_die("%s: write: %s", prog, n < 0 ? strerror(errno) : "short");
}

/* Read one 64-bit word: 1, or 0 at end of file; dies on an error or a short read. */
static inline int wl_get_u64(const char *prog, int fd, uint64_t *v)
{
	ssize_t n;
	while ((n = read(fd, v, sizeof *v)) < 0 && errno == EINTR)
		;
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof *v)
		wl_die("%s: read: %s", prog, n < 0 ? strerror(errno) : "short");
	return 1;
}

/* ADDR:PORT (IPv4) as a socket address. Its text always comes from the command line,
 * so anything else is a usage error: a message naming `prog`, exit 2. */
static inline struct sockaddr_in wl_parse_addr(const char *prog, const char *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	char host[64];
	const char *colon = strrchr(s, ':');
	int port = colon ? atoi(colon + 1) : 0;
	if (!colon || colon - s >= (long)sizeof host || port <= 0 || port > 65535)
		wl_usage_error(prog, "bad address %s (want ADDR:PORT)", s);
	memcpy(host, s, colon - s);
	host[colon - s] = 0;
	a.sin_port = htons(port);
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		wl_usage_error(prog, "bad address %s (want ADDR:PORT)", s);
	return a;
}


#endif
