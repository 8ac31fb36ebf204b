/*
 * lock-chain - a request waits on a lock whose holder waits on a slow reply.
 *
 * Problem: in process "lk-app", the "requester" thread takes a mutex for a
 * short update each round.  The "holder" thread takes the same mutex and,
 * while holding it, asks a backend process "lk-backend" (forked child) for
 * data over a pipe and waits for the reply.  The backend (its one thread is "lk-backend")
 * sleeps --sleep-ms (default 30 ms) before each reply, as a slow disk or
 * remote service would.  So each request waits on the lock, the lock waits
 * on the reply, and the reply waits on the sleep.
 *
 * Expected diagnosis: requester LongWait (futex on the mutex) <- holder
 * LongWait (read of the reply, holding the lock) <- backend LongWait
 * (clock_nanosleep, the sleep).  Not a circular wait.
 *
 * --fixed: the holder asks the backend before taking the lock and holds it
 * only to store the answer.
 *
 * --listen ADDR:PORT: the requester serves a remote client instead of its own
 * clock: one update per request on a TCP connection.  --connect ADDR:PORT runs
 * only that client ("lk-client", thread "client"), on another machine or network
 * namespace: the client waits on the requester, which waits on the lock, ... so
 * the chain starts on one host and goes on on the other.  --serve-backend
 * ADDR:PORT runs only the backend, for an lk-app started with --backend
 * ADDR:PORT: the holder's query then crosses to that host too.
 */
#include "common.h"
#include "io.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int sleep_ms = 30;
static struct wl_args args;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t table_value;
static int req_fd = -1, resp_fd = -1;
static const char *listen_at, *connect_to, *backend_at, *serve_backend_at;
static int peer_fd = -1; /* --listen: the remote client's connection */

/* ---- backend (child process) -------------------------------------- */

static __attribute__((noinline)) void slow_lookup(void)
{
	wl_sleep_ns(sleep_ms * WL_NS_PER_MS);
}

static void backend_main(int in, int out)
{
	wl_name_process("lk-backend");
	uint64_t q;
	while (wl_get_u64("lock-chain", in, &q)) {
		slow_lookup();
		wl_put_u64("lock-chain", out, q + 1);
	}
}

/* ---- holder and requester (parent) -------------------------------- */

static __attribute__((noinline)) uint64_t fetch_from_backend(uint64_t q)
{
	uint64_t a;
	wl_put_u64("lock-chain", req_fd, q);
	if (!wl_get_u64("lock-chain", resp_fd, &a))
		wl_die("lock-chain: backend exited early");
	return a;
}

static void *holder_main(void *p)
{
	(void)p;
	wl_name_thread("holder");
	for (uint64_t q = 0; !wl_time_up(&args); q++) {
		if (args.fixed) {
			uint64_t a = fetch_from_backend(q);
			pthread_mutex_lock(&table_lock);
			table_value = a;
			pthread_mutex_unlock(&table_lock);
		} else {
			pthread_mutex_lock(&table_lock);
			table_value = fetch_from_backend(q); /* the bug */
			pthread_mutex_unlock(&table_lock);
		}
		wl_sleep_ns(200 * WL_NS_PER_US);
	}
	return NULL;
}

static __attribute__((noinline)) void update_table(void)
{
	pthread_mutex_lock(&table_lock);
	table_value++;
	wl_burn_ns(5 * WL_NS_PER_US);
	pthread_mutex_unlock(&table_lock);
}

static uint64_t requests;

static void *requester_main(void *p)
{
	(void)p;
	wl_name_thread("requester");
	uint64_t q;
	while (!wl_time_up(&args)) {
		if (peer_fd >= 0 && !wl_get_u64("lock-chain", peer_fd, &q))
			break; /* the client is done */
		update_table();
		requests++;
		if (peer_fd >= 0)
			wl_put_u64("lock-chain", peer_fd, q + 1);
		else
			wl_sleep_ns(1 * WL_NS_PER_MS);
	}
	return NULL;
}

/* --connect: one request at a time, each answered after an update of the table. */
static int connect_to_addr(const char *at)
{
	struct sockaddr_in a = wl_parse_addr("lock-chain", at);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
		wl_die("lock-chain: connect %s: %s", at, strerror(errno));
	wl_set_nodelay(fd);
	return fd;
}

static uint64_t client_main(void)
{
	wl_name_process("lk-client");
	wl_name_thread("client");
	int fd = connect_to_addr(connect_to);
	uint64_t n = 0, r;
	while (!wl_time_up(&args)) {
		wl_put_u64("lock-chain", fd, n);
		if (!wl_get_u64("lock-chain", fd, &r))
			wl_die("lock-chain: the server closed the connection");
		n++;
	}
	close(fd);
	return n;
}

/* Wait for the one peer on `at` (ADDR:PORT). */
static int accept_one(const char *at)
{
	struct sockaddr_in a = wl_parse_addr("lock-chain", at);
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		wl_die("lock-chain: socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 1))
		wl_die("lock-chain: listen %s: %s", at, strerror(errno));
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		wl_die("lock-chain: accept: %s", strerror(errno));
	close(lfd);
	wl_set_nodelay(fd);
	return fd;
}

/* The holder and the requester; the backend is a child (`backend` its pid,
 * queried on req_fd, answering on resp_fd) or a socket (backend < 0, both ends
 * `fd`). */
static int app_main(int fd, pid_t backend)
{
	req_fd = fd;
	if (backend < 0)
		resp_fd = fd;
	wl_name_process("lk-app");
	if (listen_at)
		peer_fd = accept_one(listen_at);
	pthread_t h, r;
	WL_CHECK_PT(pthread_create(&h, NULL, holder_main, NULL));
	WL_CHECK_PT(pthread_create(&r, NULL, requester_main, NULL));
	pthread_join(h, NULL);
	pthread_join(r, NULL);
	close(req_fd);
	int status;
	while (backend > 0 && waitpid(backend, &status, 0) < 0 && errno == EINTR)
		;
	fprintf(stderr, "lock-chain: %s mode, %llu requests\n",
		args.fixed ? "fixed" : "plain", (unsigned long long)requests);
	wl_report(&args, requests);
	return 0;
}

int main(int argc, char **argv)
{
	const struct wl_opt opts[] = {
		{ "sleep-ms", WL_OPT_INT, &sleep_ms, 0, 10000,
		  "backend sleep per reply, ms (default 30)" },
		{ "listen", WL_OPT_STR, &listen_at, 0, 0,
		  "serve the requests of one --connect client on ADDR:PORT" },
		{ "connect", WL_OPT_STR, &connect_to, 0, 0,
		  "run only a client of a --listen lock-chain at ADDR:PORT" },
		{ "backend", WL_OPT_STR, &backend_at, 0, 0,
		  "ask a --serve-backend lock-chain at ADDR:PORT instead of a child" },
		{ "serve-backend", WL_OPT_STR, &serve_backend_at, 0, 0,
		  "run only the backend, for one --backend lock-chain, on ADDR:PORT" },
		{ 0 },
	};
	wl_init(argc, argv, "lock-chain",
		"requester waits on a mutex that holder keeps while it waits on "
		"a backend process that sleeps.\n--fixed: holder asks the "
		"backend before taking the mutex.",
		opts, &args);
	if (connect_to) {
		wl_report(&args, client_main());
		return 0;
	}
	if (serve_backend_at) {
		int fd = accept_one(serve_backend_at);
		backend_main(fd, fd);
		wl_report(&args, 0);
		return 0;
	}
	if (backend_at)
		return app_main(connect_to_addr(backend_at), -1);
	int req[2], resp[2];
	if (pipe(req) || pipe(resp))
		wl_die("lock-chain: pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		wl_die("lock-chain: fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() == 1)
			_exit(0);
		close(req[1]);
		close(resp[0]);
		backend_main(req[0], resp[1]);
		_exit(0);
	}
	close(req[0]);
	close(resp[1]);
	resp_fd = resp[0];
	int status = app_main(req[1], pid);
	close(resp_fd);
	return status;
}
