/*
 * prefork-lock - a pre-forked server whose workers sync a log under a shared lock.
 *
 * Problem: the parent ("pl-main") opens a log file, puts a process-shared
 * mutex in shared memory and listens on 127.0.0.1 (ephemeral port), then
 * forks --workers "pl-worker" processes (default 4) and one "pl-client"
 * process with one thread per worker ("client-i"), each holding one
 * connection with two requests in flight.  Each worker serves one connection, like a database backend:
 * per 64-byte request it takes the shared lock and, under it, appends a
 * 4 KiB record (pwrite) and fdatasyncs the log (commit_record), then
 * answers.  Two background processes of the same program wake on timers:
 * "pl-flusher" every 200 ms, "pl-ckpt" every 1 s (each does a little CPU
 * work and goes back to sleep).  All workers serialize on one disk sync at
 * a time, under the lock.
 *
 * Expected diagnosis: knot {pl-worker x N (merged: same program, same
 * parent, same name, same waits), disk}: the workers wait for each other at
 * the lock (a self-loop, pthread_mutex_lock -> futex) and for the disk
 * (commit_record -> fdatasync); the disk idles waiting for their requests.
 * The clients wait for the workers through the loopback device; the flusher
 * and the checkpointer sleep on timers and are background, not findings.
 *
 * --fixed: group commit.  Under the lock a worker only appends; outside it,
 * one worker at a time syncs everything appended so far and the others whose
 * records that sync covered skip theirs.
 */
#include "common.h"
#include "io.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_WORKERS 64
#define REQ_SIZE 64
#define PIPELINE 2
#define REC_SIZE 4096
#define LOG_SLOTS 4096 /* 16 MiB ring */


static int nworkers = 4;
static struct wl_args args;
static int log_fd = -1, listen_fd = -1;
static struct sockaddr_in server_addr;

/* Shared between all processes of the program. */
struct shared {
	pthread_mutex_t lock;      /* the log lock */
	pthread_mutex_t sync_lock; /* --fixed: one sync at a time */
	uint64_t appended;         /* records appended (under lock) */
	uint64_t synced;           /* records known durable (under sync_lock) */
	uint64_t syncs;
};
static struct shared *sh;

/* ---- helpers ----------------------------------------------------- */

/* ---- workers ----------------------------------------------------- */

static __attribute__((noinline)) uint64_t append_record(const unsigned char *rec)
{
	uint64_t seq = sh->appended++;
	off_t off = (off_t)(seq % LOG_SLOTS) * REC_SIZE;
	if (pwrite(log_fd, rec, REC_SIZE, off) != REC_SIZE)
		wl_die("prefork-lock: pwrite: %s", strerror(errno));
	return seq + 1;
}

/* Kept out of line so the sync is an obvious frame in stacks. */
static __attribute__((noinline)) void commit_record(void)
{
	if (wl_flush(log_fd, 1) != 0)
		wl_die("prefork-lock: fdatasync: %s", strerror(errno));
	__atomic_add_fetch(&sh->syncs, 1, __ATOMIC_RELAXED);
}

/* Plain: append and sync under the lock. */
static __attribute__((noinline)) void handle_request(const unsigned char *rec)
{
	pthread_mutex_lock(&sh->lock);
	append_record(rec);
	commit_record();
	pthread_mutex_unlock(&sh->lock);
}

/* Fixed: append under the lock; sync outside it, one sync covering all appended. */
static __attribute__((noinline)) void handle_request_grouped(const unsigned char *rec)
{
	pthread_mutex_lock(&sh->lock);
	uint64_t mine = append_record(rec);
	pthread_mutex_unlock(&sh->lock);
	pthread_mutex_lock(&sh->sync_lock);
	if (sh->synced < mine) {
		pthread_mutex_lock(&sh->lock);
		uint64_t upto = sh->appended;
		pthread_mutex_unlock(&sh->lock);
		commit_record();
		sh->synced = upto;
	}
	pthread_mutex_unlock(&sh->sync_lock);
}

static void worker_main(void)
{
	wl_name_process("pl-worker");
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		wl_die("prefork-lock: accept: %s", strerror(errno));
	wl_set_nodelay(fd);
	unsigned char req[REQ_SIZE], rec[REC_SIZE];
	while (wl_io_full(fd, req, sizeof req, 0) == 1) {
		memset(rec, req[0], sizeof rec);
		if (args.fixed)
			handle_request_grouped(rec);
		else
			handle_request(rec);
		if (wl_io_full(fd, req, sizeof req, 1) != 1)
			break;
	}
	close(fd);
	_exit(0);
}

/* ---- background processes ---------------------------------------- */

static __attribute__((noinline)) void background_pass(void)
{
	wl_burn_ns(50 * WL_NS_PER_US); /* look at counters, write a status line */
}

static void background_main(const char *name, int64_t period_ns)
{
	wl_name_process(name);
	for (;;) { /* until the parent's SIGTERM */
		wl_sleep_ns(period_ns);
		background_pass();
	}
}

/* ---- client ------------------------------------------------------ */

struct client {
	pthread_t tid;
	int id;
	uint64_t requests;
} __attribute__((aligned(64)));

static struct client clients[MAX_WORKERS];

static void *client_thread(void *p)
{
	struct client *c = p;
	wl_name_thread_idx("client", c->id);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&server_addr, sizeof server_addr) != 0)
		wl_die("prefork-lock: connect: %s", strerror(errno));
	wl_set_nodelay(fd);
	char req[REQ_SIZE];
	memset(req, 'a' + c->id % 26, sizeof req);
	/* PIPELINE requests in flight per connection, so a worker finds its next
	 * request waiting and the lock, not the client, paces it. */
	int outstanding = 0;
	while (!wl_time_up(&args) || outstanding > 0) {
		while (outstanding < PIPELINE && !wl_time_up(&args)) {
			if (wl_io_full(fd, req, sizeof req, 1) != 1)
				wl_die("prefork-lock: request failed");
			outstanding++;
		}
		if (wl_io_full(fd, req, sizeof req, 0) != 1)
			wl_die("prefork-lock: response failed");
		outstanding--;
		c->requests++;
	}
	close(fd);
	return NULL;
}

static void client_main(int out)
{
	wl_name_process("pl-client");
	for (int i = 0; i < nworkers; i++) {
		clients[i].id = i;
		if (pthread_create(&clients[i].tid, NULL, client_thread, &clients[i]))
			wl_die("prefork-lock: pthread_create failed");
	}
	uint64_t total = 0;
	for (int i = 0; i < nworkers; i++) {
		pthread_join(clients[i].tid, NULL);
		total += clients[i].requests;
	}
	if (write(out, &total, sizeof total) != sizeof total)
		wl_die("prefork-lock: result pipe: %s", strerror(errno));
	_exit(0);
}

/* ---- parent ------------------------------------------------------ */

static void setup(const char *dir)
{
	log_fd = wl_log_create("prefork-lock", dir);
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		wl_die("prefork-lock: mmap: %s", strerror(errno));
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&sh->lock, &ma);
	pthread_mutex_init(&sh->sync_lock, &ma);
	pthread_mutexattr_destroy(&ma);

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		wl_die("prefork-lock: socket: %s", strerror(errno));
	server_addr.sin_family = AF_INET;
	server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof server_addr;
	if (bind(listen_fd, (struct sockaddr *)&server_addr, sizeof server_addr) ||
	    listen(listen_fd, MAX_WORKERS) ||
	    getsockname(listen_fd, (struct sockaddr *)&server_addr, &len))
		wl_die("prefork-lock: listen: %s", strerror(errno));
}

static pid_t spawn(void (*fn)(void))
{
	pid_t p = fork();
	if (p < 0)
		wl_die("prefork-lock: fork: %s", strerror(errno));
	if (p == 0) {
		/* Do not outlive the parent; keep the parent's log-file cleanup to it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		fn();
		_exit(0);
	}
	return p;
}

static void flusher(void) { background_main("pl-flusher", 200 * WL_NS_PER_MS); }
static void checkpointer(void) { background_main("pl-ckpt", 1000 * WL_NS_PER_MS); }

int main(int argc, char **argv)
{
	const char *dir = NULL;
	const struct wl_opt extra[] = {
		WL_SYNC_US_OPT,
		{ "workers", WL_OPT_INT, &nworkers, 1, MAX_WORKERS,
		  "worker processes and client connections (default 4)" },
		{ "dir", WL_OPT_STR, &dir, 0, 0,
		  "directory for the log file (default . or /tmp, not tmpfs)" },
		{ 0 },
	};
	wl_init(argc, argv, "prefork-lock",
		"Pre-forked worker processes append to a log and fdatasync it under "
		"a process-shared lock, one request at a time (--fixed: group commit "
		"outside the lock).",
		extra, &args);
	wl_name_process("pl-main");
	setup(wl_log_dir("prefork-lock", dir));

	pid_t workers[MAX_WORKERS];
	for (int i = 0; i < nworkers; i++)
		workers[i] = spawn(worker_main);
	pid_t bg[2] = { spawn(flusher), spawn(checkpointer) };
	int res[2];
	if (pipe(res) != 0)
		wl_die("prefork-lock: pipe: %s", strerror(errno));
	pid_t client = fork();
	if (client < 0)
		wl_die("prefork-lock: fork: %s", strerror(errno));
	if (client == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(res[0]);
		client_main(res[1]);
	}
	close(res[1]);
	uint64_t total = 0;
	if (read(res[0], &total, sizeof total) != sizeof total)
		wl_die("prefork-lock: the client died");
	waitpid(client, NULL, 0);
	for (int i = 0; i < nworkers; i++)
		waitpid(workers[i], NULL, 0);
	for (int i = 0; i < 2; i++) {
		kill(bg[i], SIGTERM);
		waitpid(bg[i], NULL, 0);
	}
	fprintf(stderr, "prefork-lock: %" PRIu64 " requests, %" PRIu64 " syncs\n", total,
		sh->syncs);
	unlink(wl_log_path());
	wl_report(&args, total);
	return 0;
}
