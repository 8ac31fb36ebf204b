/*
 * group-commit - a server whose single sync thread commits one request per fdatasync.
 *
 * Problem: the server process ("gc-server") listens on 127.0.0.1 (ephemeral
 * port) and runs one "net-i" thread per connection, a single "sync" thread
 * and a "runtime" thread.  A net thread reads a 64-byte request, hands it to
 * the sync thread (a mutex + condvar queue) and waits until it is durable
 * before it answers.  The sync thread takes one request at a time, appends a
 * 4 KiB record to a log (pwrite) and fdatasyncs it (sync_request), then
 * wakes the requester.  Every 50 ms the runtime thread stops the world for a
 * moment, like a managed runtime's safepoint: it takes a writer-preferring
 * rwlock that every other thread holds (as a reader) around its in-memory
 * work, runs ~1 ms (runtime_safepoint), releases it and sleeps on a timer.
 * The client process ("gc-client", forked) runs --clients "client-i" threads
 * (default 16), each with one connection, in a request -> response loop.
 *
 * Expected diagnosis: knot {sync, disk} with the fdatasync stack
 * (sync_request -> fdatasync): the net threads wait for the sync thread, the
 * clients for the net threads through the loopback device.  Not the runtime
 * thread (everyone waits for it briefly, spread over the run) and not the
 * timer it sleeps on.
 *
 * --fixed: group commit: the sync thread takes every pending request, appends
 * them all and syncs once for the batch.
 *
 * --listen ADDR:PORT runs the server alone on that address, and --connect
 * ADDR:PORT the clients alone against it: the two halves on two machines (or
 * two network namespaces), each reporting its own throughput.
 */
#include "common.h"
#include "io.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CLIENTS 256
#define REQ_SIZE 64
#define REC_SIZE 4096
#define LOG_SLOTS 4096 /* 16 MiB ring */


static int nclients = 16;
static struct wl_args args;
static int log_fd = -1, listen_fd = -1;
static struct sockaddr_in server_addr;
static const char *listen_at, *connect_to;

/* One pending request: its net thread waits on `done` (its own semaphore, so a
 * commit wakes exactly the requesters it covers, not every net thread). */
struct request {
	struct request *next;
	unsigned char data[REQ_SIZE];
	sem_t done;
};

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv;
static struct request *q_head, **q_tail = &q_head;
static int stopping;
static uint64_t seq, syncs;

/* The safepoint: held for reading around in-memory work, for writing by the runtime. */
static pthread_rwlock_t world;

/* ---- helpers ----------------------------------------------------- */

/* ---- sync thread ------------------------------------------------- */

static __attribute__((noinline)) void append_request(const struct request *r)
{
	unsigned char rec[REC_SIZE];
	memset(rec, r->data[0], sizeof rec);
	off_t off = (off_t)(seq++ % LOG_SLOTS) * REC_SIZE;
	if (pwrite(log_fd, rec, REC_SIZE, off) != REC_SIZE)
		wl_die("group-commit: pwrite: %s", strerror(errno));
}

/* Kept out of line so the sync is an obvious frame in stacks. */
static __attribute__((noinline)) void sync_request(void)
{
	if (wl_flush(log_fd, 1) != 0)
		wl_die("group-commit: fdatasync: %s", strerror(errno));
	syncs++;
}

/* Takes one request (or, fixed, all pending ones); NULL when stopping. */
static struct request *take_requests(void)
{
	pthread_mutex_lock(&q_lock);
	while (!q_head && !stopping)
		pthread_cond_wait(&q_cv, &q_lock);
	struct request *batch = q_head;
	if (batch) {
		if (args.fixed) {
			q_head = NULL;
			q_tail = &q_head;
		} else {
			q_head = batch->next;
			if (!q_head)
				q_tail = &q_head;
			batch->next = NULL;
		}
	}
	pthread_mutex_unlock(&q_lock);
	return batch;
}

static void *sync_main(void *arg)
{
	(void)arg;
	wl_name_thread("sync");
	struct request *batch;
	while ((batch = take_requests())) {
		pthread_rwlock_rdlock(&world);
		for (struct request *r = batch; r; r = r->next)
			append_request(r);
		pthread_rwlock_unlock(&world);
		sync_request(); /* in the kernel: at a safepoint */
		for (struct request *r = batch, *next; r; r = next) {
			next = r->next; /* r may be reused once posted */
			sem_post(&r->done);
		}
	}
	return NULL;
}

/* ---- net threads ------------------------------------------------- */

static __attribute__((noinline)) void submit_and_wait(struct request *r)
{
	pthread_mutex_lock(&q_lock);
	r->next = NULL;
	*q_tail = r;
	q_tail = &r->next;
	pthread_cond_signal(&q_cv);
	pthread_mutex_unlock(&q_lock);
	while (sem_wait(&r->done) != 0 && errno == EINTR)
		;
}

static void *net_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct request r;
	sem_init(&r.done, 0, 0);
	while (wl_io_full(fd, r.data, sizeof r.data, 0) == 1) {
		pthread_rwlock_rdlock(&world); /* parse the request */
		wl_burn_ns(5 * WL_NS_PER_US);
		pthread_rwlock_unlock(&world);
		submit_and_wait(&r);
		if (wl_io_full(fd, r.data, sizeof r.data, 1) != 1)
			break;
	}
	close(fd);
	return NULL;
}

static void *net_spawn(int idx, int fd)
{
	pthread_t t;
	if (pthread_create(&t, NULL, net_main, (void *)(intptr_t)fd))
		wl_die("group-commit: pthread_create failed");
	char name[16];
	snprintf(name, sizeof name, "net-%d", idx);
	pthread_setname_np(t, name);
	return (void *)t;
}

/* ---- runtime thread ---------------------------------------------- */

static __attribute__((noinline)) void runtime_safepoint(void)
{
	pthread_rwlock_wrlock(&world);
	wl_burn_ns(1000 * WL_NS_PER_US); /* walk the heap, patch code ... */
	pthread_rwlock_unlock(&world);
}

static void *runtime_main(void *arg)
{
	(void)arg;
	wl_name_thread("runtime");
	while (!__atomic_load_n(&stopping, __ATOMIC_RELAXED)) {
		wl_sleep_ns(50 * WL_NS_PER_MS);
		runtime_safepoint();
	}
	return NULL;
}

/* ---- client process ---------------------------------------------- */

struct client {
	pthread_t tid;
	int id;
	uint64_t requests;
} __attribute__((aligned(64)));

static struct client clients[MAX_CLIENTS];

static void *client_thread(void *p)
{
	struct client *c = p;
	wl_name_thread_idx("client", c->id);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&server_addr, sizeof server_addr) != 0)
		wl_die("group-commit: connect: %s", strerror(errno));
	wl_set_nodelay(fd);
	char req[REQ_SIZE];
	memset(req, 'a' + c->id % 26, sizeof req);
	while (!wl_time_up(&args)) {
		if (wl_io_full(fd, req, sizeof req, 1) != 1 || wl_io_full(fd, req, sizeof req, 0) != 1)
			wl_die("group-commit: request failed");
		c->requests++;
	}
	close(fd);
	return NULL;
}

static uint64_t run_clients(void)
{
	for (int i = 0; i < nclients; i++) {
		clients[i].id = i;
		if (pthread_create(&clients[i].tid, NULL, client_thread, &clients[i]))
			wl_die("group-commit: pthread_create failed");
	}
	uint64_t total = 0;
	for (int i = 0; i < nclients; i++) {
		pthread_join(clients[i].tid, NULL);
		total += clients[i].requests;
	}
	return total;
}

static void client_main(int out)
{
	wl_name_process("gc-client");
	uint64_t total = run_clients();
	if (write(out, &total, sizeof total) != sizeof total)
		wl_die("group-commit: result pipe: %s", strerror(errno));
	_exit(0);
}

/* ---- server ------------------------------------------------------ */

static void setup(const char *dir)
{
	log_fd = wl_log_create("group-commit", dir);
	wl_cond_init(&q_cv);
	pthread_rwlockattr_t ra;
	pthread_rwlockattr_init(&ra);
	/* A waiting safepoint holds new readers back, as a runtime's does. */
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&world, &ra);
	pthread_rwlockattr_destroy(&ra);

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		wl_die("group-commit: socket: %s", strerror(errno));
	if (!listen_at) {
		server_addr.sin_family = AF_INET;
		server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	int one = 1;
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	socklen_t len = sizeof server_addr;
	if (bind(listen_fd, (struct sockaddr *)&server_addr, sizeof server_addr) ||
	    listen(listen_fd, MAX_CLIENTS) ||
	    getsockname(listen_fd, (struct sockaddr *)&server_addr, &len))
		wl_die("group-commit: listen: %s", strerror(errno));
}

/* Serve --clients connections until they close: the sync, runtime and net
 * threads.  The count is the forked client's, reported on `res` (res >= 0), or
 * the server's own (--listen, res < 0). */
static uint64_t serve(int res, pid_t client)
{
	pthread_t sync_t, runtime_t, nets[MAX_CLIENTS];
	if (pthread_create(&sync_t, NULL, sync_main, NULL) ||
	    pthread_create(&runtime_t, NULL, runtime_main, NULL))
		wl_die("group-commit: pthread_create failed");
	for (int i = 0; i < nclients; i++) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			wl_die("group-commit: accept: %s", strerror(errno));
		wl_set_nodelay(fd);
		nets[i] = (pthread_t)net_spawn(i, fd);
	}
	uint64_t total = 0;
	if (res >= 0) {
		if (read(res, &total, sizeof total) != sizeof total)
			wl_die("group-commit: the client died");
		waitpid(client, NULL, 0);
	}
	for (int i = 0; i < nclients; i++)
		pthread_join(nets[i], NULL);
	pthread_mutex_lock(&q_lock);
	__atomic_store_n(&stopping, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&q_cv);
	pthread_mutex_unlock(&q_lock);
	pthread_join(sync_t, NULL);
	pthread_join(runtime_t, NULL);
	return res >= 0 ? total : __atomic_load_n(&seq, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	const struct wl_opt extra[] = {
		WL_SYNC_US_OPT,
		{ "clients", WL_OPT_INT, &nclients, 1, MAX_CLIENTS,
		  "client threads, one connection each (default 16)" },
		{ "dir", WL_OPT_STR, &dir, 0, 0,
		  "directory for the log file (default . or /tmp, not tmpfs)" },
		{ "listen", WL_OPT_STR, &listen_at, 0, 0,
		  "run only the server, on ADDR:PORT, until --clients connections close" },
		{ "connect", WL_OPT_STR, &connect_to, 0, 0,
		  "run only the clients, against a --listen server at ADDR:PORT" },
		{ 0 },
	};
	wl_init(argc, argv, "group-commit",
		"A single sync thread appends and fdatasyncs one request at a time "
		"for many network threads, with a runtime thread that stops the "
		"world every 50 ms (--fixed: one sync per batch of pending requests).",
		extra, &args);
	if (connect_to) {
		server_addr = wl_parse_addr("group-commit", connect_to);
		wl_name_process("gc-client");
		wl_report(&args, run_clients());
		return 0;
	}
	if (listen_at)
		server_addr = wl_parse_addr("group-commit", listen_at);
	wl_name_process("gc-server");
	setup(wl_log_dir("group-commit", dir));
	if (listen_at) {
		uint64_t total = serve(-1, 0);
		unlink(wl_log_path());
		wl_report(&args, total);
		return 0;
	}

	int res[2];
	if (pipe(res) != 0)
		wl_die("group-commit: pipe: %s", strerror(errno));
	pid_t client = fork();
	if (client < 0)
		wl_die("group-commit: fork: %s", strerror(errno));
	if (client == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		close(res[0]);
		client_main(res[1]);
	}
	close(res[1]);
	uint64_t total = serve(res[0], client);
	fprintf(stderr, "group-commit: %" PRIu64 " requests, %" PRIu64 " syncs\n", total,
		syncs);
	unlink(wl_log_path());
	wl_report(&args, total);
	return 0;
}
