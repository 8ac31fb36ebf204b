/*
 * batch-loop - an event loop serves a batch of peers per wake-up, and one
 * peer's costly request holds up the rest of the batch.
 *
 * Problem (Argus §4.1.1 batching, §4.2.1 per-item splits): a server process
 * whose main thread "bl-loop" runs one epoll loop over a Unix stream socket
 * per client. Like Redis, each pass reads and serves every ready
 * client (serve_request) and only then writes all the replies
 * (flush_replies) before it waits again. The client process "bl-clients"
 * has --clients threads "client-0..N-1" sending cheap requests (~20 us
 * each) back to back, and one thread "bl-heavy" that every --gap-ms
 * (default 40) sends a costly one (--heavy-ms, default 20 ms of CPU in
 * heavy_request). The cheap clients served in the same pass wait for it.
 *
 * Expected diagnosis: the loop's long run is LongRunning in heavy_request,
 * and sliced back it leads over the data edge of the request it read to
 * "bl-heavy" (the item that did the work), not to the client whose request
 * happened to wake the loop for that pass; a cheap client's longest wait
 * has the loop's heavy item as its culprit.
 *
 * --fixed: costly requests go to a worker thread ("bl-worker") that
 * computes and replies itself; the loop keeps serving cheap requests.
 * Throughput counts cheap requests served per second; the cheap requests'
 * maximum latency goes to stderr.
 */
#include "common.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CLIENTS 16

static int nclients = 3;  /* cheap client threads */
static int heavy_ms = 20; /* CPU of a costly request */
static int gap_ms = 40;   /* bl-heavy's pause between costly requests */
static int light_us = 20; /* CPU of a cheap request */

static struct wl_args args;

enum kind { REQ_LIGHT, REQ_HEAVY };

struct msg {
	uint32_t kind;
	uint32_t seq;
	int64_t sent_ns;
};

/* Server side [0] and client side [1] of each connection; the last is bl-heavy's. */
static int conn[MAX_CLIENTS + 1][2];

static int write_full(int fd, const void *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

/* 1: a whole message; 0: the peer closed; -1: error. */
static int read_full(int fd, void *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 0;
		got += (size_t)r;
	}
	return 1;
}

/* ---- server: the worker of the fixed variant --------------------- */

#define JOBQ_CAP 8

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct {
		int fd;
		struct msg m;
	} jobs[JOBQ_CAP];
	unsigned head, count;
	int quit;
} jobq = { .lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static __attribute__((noinline)) void heavy_request(void)
{
	wl_burn_ns(heavy_ms * WL_NS_PER_MS);
}

static __attribute__((noinline)) void light_request(void)
{
	wl_burn_ns(light_us * WL_NS_PER_US);
}

static void *worker_main(void *unused)
{
	(void)unused;
	wl_name_thread("bl-worker");
	for (;;) {
		pthread_mutex_lock(&jobq.lock);
		while (jobq.count == 0 && !jobq.quit)
			pthread_cond_wait(&jobq.cv, &jobq.lock);
		if (jobq.count == 0) {
			pthread_mutex_unlock(&jobq.lock);
			break;
		}
		int fd = jobq.jobs[jobq.head].fd;
		struct msg m = jobq.jobs[jobq.head].m;
		jobq.head = (jobq.head + 1) % JOBQ_CAP;
		jobq.count--;
		pthread_mutex_unlock(&jobq.lock);
		heavy_request();
		write_full(fd, &m, sizeof m); /* the client may be gone at the end */
	}
	return NULL;
}

static void offload(int fd, const struct msg *m)
{
	pthread_mutex_lock(&jobq.lock);
	if (jobq.count < JOBQ_CAP) { /* one costly request in flight at a time */
		jobq.jobs[(jobq.head + jobq.count) % JOBQ_CAP].fd = fd;
		jobq.jobs[(jobq.head + jobq.count) % JOBQ_CAP].m = *m;
		jobq.count++;
		pthread_cond_signal(&jobq.cv);
	}
	pthread_mutex_unlock(&jobq.lock);
}

/* ---- server: the loop --------------------------------------------- */

static uint64_t served_light;
static int64_t max_light_ns;

/* Serve one request; returns 1 if a reply is now pending for it. */
static __attribute__((noinline)) int serve_request(int fd, const struct msg *m)
{
	if (m->kind == REQ_HEAVY) {
		if (args.fixed) {
			offload(fd, m);
			return 0;
		}
		heavy_request(); /* the problem: inline, in the middle of a batch */
		return 1;
	}
	light_request();
	int64_t lat = wl_now_ns() - m->sent_ns;
	if (lat > max_light_ns)
		max_light_ns = lat;
	served_light++;
	return 1;
}

/* Redis-style: the replies of a pass go out together, just before the next wait. */
static __attribute__((noinline)) void flush_replies(const int *fds, const struct msg *replies,
						    int n)
{
	for (int i = 0; i < n; i++)
		write_full(fds[i], &replies[i], sizeof replies[i]);
}

static void run_loop(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		wl_die("batch-loop: epoll_create1: %s", strerror(errno));
	int open_conns = nclients + 1;
	for (int i = 0; i <= nclients; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = conn[i][0] };
		if (epoll_ctl(ep, EPOLL_CTL_ADD, conn[i][0], &ev) != 0)
			wl_die("batch-loop: epoll_ctl: %s", strerror(errno));
	}
	pthread_t worker;
	WL_CHECK_PT(pthread_create(&worker, NULL, worker_main, NULL));
	while (open_conns > 0) {
		struct epoll_event evs[MAX_CLIENTS + 1];
		int n = epoll_wait(ep, evs, MAX_CLIENTS + 1, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			wl_die("batch-loop: epoll_wait: %s", strerror(errno));
		int fds[MAX_CLIENTS + 1];
		struct msg replies[MAX_CLIENTS + 1];
		int pending = 0;
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			struct msg m;
			int r = read_full(fd, &m, sizeof m);
			if (r <= 0) {
				epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
				open_conns--;
				continue;
			}
			if (serve_request(fd, &m)) {
				fds[pending] = fd;
				replies[pending++] = m;
			}
		}
		flush_replies(fds, replies, pending);
	}
	pthread_mutex_lock(&jobq.lock);
	jobq.quit = 1;
	pthread_cond_signal(&jobq.cv);
	pthread_mutex_unlock(&jobq.lock);
	WL_CHECK_PT(pthread_join(worker, NULL));
	close(ep);
}

/* ---- clients ------------------------------------------------------ */

static void *client_main(void *arg)
{
	int idx = (int)(intptr_t)arg;
	int heavy = idx == nclients;
	if (heavy)
		wl_name_thread("bl-heavy");
	else
		wl_name_thread_idx("client", idx);
	int fd = conn[idx][1];
	for (uint32_t seq = 0; !wl_time_up(&args); seq++) {
		if (heavy)
			wl_sleep_ns(gap_ms * WL_NS_PER_MS);
		struct msg m = { .kind = heavy ? REQ_HEAVY : REQ_LIGHT,
				 .seq = seq,
				 .sent_ns = wl_now_ns() };
		if (write_full(fd, &m, sizeof m) != 0 || read_full(fd, &m, sizeof m) != 1)
			wl_die("batch-loop: client %d: connection lost", idx);
	}
	shutdown(fd, SHUT_WR); /* the loop reads the end and stops serving us */
	return NULL;
}

static void run_clients(void)
{
	wl_name_process("bl-clients");
	pthread_t t[MAX_CLIENTS + 1];
	for (int i = 0; i <= nclients; i++)
		WL_CHECK_PT(pthread_create(&t[i], NULL, client_main, (void *)(intptr_t)i));
	for (int i = 0; i <= nclients; i++)
		WL_CHECK_PT(pthread_join(t[i], NULL));
}

int main(int argc, char **argv)
{
	static const struct wl_opt opts[] = {
		{ "clients", WL_OPT_INT, &nclients, 1, MAX_CLIENTS,
		  "cheap client threads (default 3)" },
		{ "heavy-ms", WL_OPT_INT, &heavy_ms, 1, 1000,
		  "CPU of a costly request in ms (default 20)" },
		{ "gap-ms", WL_OPT_INT, &gap_ms, 1, 10000,
		  "bl-heavy's pause between costly requests in ms (default 40)" },
		{ NULL, 0, NULL, 0, 0, NULL },
	};
	wl_init(argc, argv, "batch-loop",
		"An epoll loop serves every ready client per pass and replies at the end of\n"
		"the pass; one client's costly request delays the others in its pass.\n"
		"--fixed hands costly requests to a worker thread.",
		opts, &args);
	for (int i = 0; i <= nclients; i++)
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, conn[i]) != 0)
			wl_die("batch-loop: socketpair: %s", strerror(errno));
	fflush(stdout);
	pid_t child = fork();
	if (child < 0)
		wl_die("batch-loop: fork: %s", strerror(errno));
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		for (int i = 0; i <= nclients; i++)
			close(conn[i][0]);
		run_clients();
		_exit(0);
	}
	wl_name_process("bl-loop");
	for (int i = 0; i <= nclients; i++)
		close(conn[i][1]);
	run_loop();
	int status = 0;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		wl_die("batch-loop: client process failed (status %d)", status);
	fprintf(stderr, "batch-loop: cheap requests' max latency %.2f ms\n",
		(double)max_light_ns / (double)WL_NS_PER_MS);
	wl_report(&args, served_light);
	return 0;
}
