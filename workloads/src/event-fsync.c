/*
 * event-fsync - a single-threaded event-loop server that makes every round's writes
 * durable before it replies (an append-only log flushed at every round, as Redis
 * with `appendfsync always`), and closed-loop clients over loopback.
 *
 * Problem: each round the server reads the requests that arrived (epoll), appends
 * them to its log, writes and fdatasyncs the log, then replies to each client. The
 * clients wait for the server, the server waits for the disk once per round: the
 * knot is {server, disk}, the edge server -> disk carries fdatasync under
 * flush_append_log.
 *
 * Expected what-if: removing that edge's waits (`--edge`, `--waits-on` the disk, or
 * `--site flush_append_log` / `--site fdatasync`: the same waits) predicts the rate
 * of the --fixed variant.
 *
 * --fixed: the log is written but not flushed in the loop (Redis's `everysec`
 * takes the flush to another thread once a second; here the flush goes, which is
 * what the loop sees of it).
 *
 * The server is a child process ("ef-server"); the clients are threads ("client-N")
 * of the parent, which prints the clients' replies per second.
 */
#include "common.h"
#include "io.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define REQ 64
#define MAX_CLIENTS 32

static int nclients = 4;
static int request_us = 5;
static const char *dir;
static struct wl_args args;

/* The server's state for one round. */
static char aof[MAX_CLIENTS * REQ];
static size_t aof_len;
static int pending[MAX_CLIENTS];
static int npending;
static int log_fd = -1;

static __attribute__((noinline)) void flush_append_log(void)
{
	if (!aof_len)
		return;
	if (write(log_fd, aof, aof_len) != (ssize_t)aof_len)
		wl_die("event-fsync: write: %s", strerror(errno));
	aof_len = 0;
	if (!args.fixed && wl_flush(log_fd, 1) != 0)
		wl_die("event-fsync: fdatasync: %s", strerror(errno));
}

static __attribute__((noinline)) void reply_pending(void)
{
	static const char ok[5] = "+OK\r\n";
	for (int i = 0; i < npending; i++)
		if (write(pending[i], ok, sizeof ok) != (ssize_t)sizeof ok)
			pending[i] = -1; /* a client that left */
	npending = 0;
}

static __attribute__((noinline)) void process_request(int fd, const char *req, ssize_t n)
{
	wl_burn_ns(request_us * WL_NS_PER_US); /* parsing and the command itself */
	memcpy(aof + aof_len, req, (size_t)n);
	aof_len += (size_t)n;
	pending[npending++] = fd;
}

static __attribute__((noreturn)) void serve(int lfd)
{
	wl_name_process("ef-server");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = lfd };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) != 0)
		wl_die("event-fsync: epoll: %s", strerror(errno));
	struct epoll_event evs[MAX_CLIENTS + 1];
	char req[REQ];
	for (;;) {
		/* Before waiting for more: make the round durable, then answer it. */
		flush_append_log();
		reply_pending();
		int n = epoll_wait(ep, evs, MAX_CLIENTS + 1, 100);
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == lfd) {
				int c = accept(lfd, NULL, NULL);
				if (c < 0)
					continue;
				wl_set_nodelay(c);
				struct epoll_event e = { .events = EPOLLIN, .data.fd = c };
				epoll_ctl(ep, EPOLL_CTL_ADD, c, &e);
				continue;
			}
			ssize_t r = read(fd, req, REQ);
			if (r <= 0) {
				close(fd);
				continue;
			}
			process_request(fd, req, r);
		}
	}
}

static int port;
static volatile int stopping;
static uint64_t replies[MAX_CLIENTS];

static void *client_main(void *arg)
{
	long id = (long)arg;
	wl_name_thread_idx("client-", (int)id);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0)
		wl_die("event-fsync: connect: %s", strerror(errno));
	wl_set_nodelay(s);
	char req[REQ], rep[5];
	memset(req, 'x', sizeof req);
	while (!stopping) {
		if (wl_io_full(s, req, sizeof req, 1) != 1)
			break;
		if (wl_io_full(s, rep, sizeof rep, 0) != 1)
			break;
		__atomic_add_fetch(&replies[id], 1, __ATOMIC_RELAXED);
	}
	close(s);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct wl_opt opts[] = {
		{ "clients", WL_OPT_INT, &nclients, 1, MAX_CLIENTS,
		  "client threads, each with one request outstanding (default 4)" },
		{ "request-us", WL_OPT_INT, &request_us, 0, 1000000,
		  "server CPU per request, us (default 5)" },
		{ "dir", WL_OPT_STR, &dir, 0, 0,
		  "directory for the log (default: ., /tmp or /var/tmp)" },
		WL_SYNC_US_OPT,
		{ 0 },
	};
	wl_init(argc, argv, "event-fsync",
		"A single-threaded event-loop server that fdatasyncs its log every round "
		"before replying, and closed-loop clients over loopback; --fixed does not "
		"flush in the loop.",
		opts, &args);
	log_fd = wl_log_create("event-fsync", wl_log_dir("event-fsync", dir));
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 64) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) != 0)
		wl_die("event-fsync: listen: %s", strerror(errno));
	port = ntohs(a.sin_port);
	pid_t server = fork();
	if (server < 0)
		wl_die("event-fsync: fork: %s", strerror(errno));
	if (server == 0)
		serve(lfd);
	close(lfd);
	pthread_t th[MAX_CLIENTS];
	for (long i = 0; i < nclients; i++)
		WL_CHECK_PT(pthread_create(&th[i], NULL, client_main, (void *)i));
	while (!wl_time_up(&args))
		wl_sleep_ns(10 * WL_NS_PER_MS);
	uint64_t total = 0;
	for (int i = 0; i < nclients; i++)
		total += __atomic_load_n(&replies[i], __ATOMIC_RELAXED);
	wl_report(&args, total);
	/* The clients stop when the server goes: their next read ends. */
	stopping = 1;
	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
	for (int i = 0; i < nclients; i++)
		pthread_join(th[i], NULL);
	close(log_fd);
	unlink(wl_log_path());
	return 0;
}
