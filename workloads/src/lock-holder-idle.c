/*
 * lock-holder-idle - a client stalls on a row lock that another session holds while
 * it sits idle in its transaction, waiting for a script that sleeps.
 *
 * Problem: a database-like server made of processes.  The parent ("lh-main")
 * accepts each loopback TCP connection and forks a worker process for it, as
 * a postmaster forks a backend.  The victim client ("lh-victim", one thread)
 * sends a small update to its worker ("lh-worker-0") every --think-ms
 * (default 1) and waits for the reply with ppoll and a 1 s progress timer,
 * printing a line on stderr at each timeout.  Each update takes a row lock (a
 * process-shared mutex in shared memory), updates the row and releases it.
 * The other client ("lh-hold-client": process names stop at 15 characters)
 * runs the statements a script ("lh-script") writes to a pipe, as
 * `script | psql` would: "begin" makes its worker ("lh-worker-1") take the
 * same row lock and update the row, then the script sleeps --sleep-ms
 * (default 5000, never past the time bound) before it writes "commit", and
 * only then is the lock released.  Meanwhile lh-worker-1 is idle in its
 * transaction (waiting for its client), the holder client waits on the
 * pipe, and the victim's update waits for the lock.  The script repeats this
 * after --gap-ms (default 500) until the time is up.
 *
 * Expected diagnosis (diagnose --thread lh-victim): lh-victim (ppoll on the
 * reply) <- lh-worker-0 (socket; it waits on the row lock) <- lh-worker-1,
 * the lock holder (lock; idle in recv) <- lh-hold-client (socket; reading
 * the pipe) <- lh-script (pipe) <- its nanosleep (timer): the end of the
 * chain.
 *
 * --victims N (default 1): N victim clients ("lh-victim", "lh-victim-1", ...),
 * each served by its own worker (lh-worker-0 .. N-1; the holder's worker is
 * then lh-worker-N), all queued on the row lock behind the holder: a lock
 * convoy.  Between transactions the victims' workers contend among themselves,
 * so a worker's earlier short waits on the lock were ended by another victim's
 * worker, while its long wait is ended by the holder's commit.
 *
 * --fixed: the holder client commits at once, before it waits for the
 * script's next statement, so the lock is never held across the sleep.
 * Throughput counts the victims' updates per second.
 */
#include "common.h"
#include "io.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "lock-holder-idle"
#define MAX_VICTIMS 8

/* Requests a client sends to its worker, and statements the script writes. */
enum { CMD_UPDATE = 1, CMD_BEGIN = 2, CMD_COMMIT = 3 };

static int sleep_ms = 5000, gap_ms = 500, think_ms = 1, nvictims = 1;
static struct wl_args args;
static int listen_fd = -1;
static struct sockaddr_in server_addr;

/*
 * The row lock, as a database's lock manager keeps it: a flag in shared memory
 * under a process-shared mutex, with a condition variable that the sessions
 * queued on it wait on.  Its release wakes every waiter (a broadcast), which then
 * compete for it again, as the sessions queued on a transaction's lock are all
 * woken when that transaction ends: each queued waiter's long wait is ended by
 * the holder, while its short waits (the waiters contending among themselves
 * between transactions) are ended by another waiter.  It needs no file (nothing
 * to leave behind); a worker that dies holding it blocks the others only until
 * the parent's death kills them all (PR_SET_PDEATHSIG).
 */
struct shared {
	pthread_mutex_t mutex;
	pthread_cond_t released;
	int held;
	uint64_t row;
};
static struct shared *sh;

/* ---- workers ----------------------------------------------------- */

static __attribute__((noinline)) void lock_row(void)
{
	pthread_mutex_lock(&sh->mutex);
	while (sh->held)
		pthread_cond_wait(&sh->released, &sh->mutex);
	sh->held = 1;
	pthread_mutex_unlock(&sh->mutex);
}

static __attribute__((noinline)) uint64_t update_row(void)
{
	wl_burn_ns(5 * WL_NS_PER_US); /* find the row, change it, log it */
	return ++sh->row;
}

static __attribute__((noinline)) void unlock_row(void)
{
	pthread_mutex_lock(&sh->mutex);
	sh->held = 0;
	pthread_cond_broadcast(&sh->released);
	pthread_mutex_unlock(&sh->mutex);
}

/* Serves one connection until its client goes; a transaction left open by a
 * client that went away is rolled back (the lock released). */
static void worker_main(int idx, int fd)
{
	char name[16];
	snprintf(name, sizeof name, "lh-worker-%d", idx);
	wl_name_process(name);
	uint64_t cmd, reply = 0;
	int in_transaction = 0;
	while (wl_io_full(fd, &cmd, sizeof cmd, 0) == 1) {
		switch (cmd) {
		case CMD_UPDATE: /* one statement, its own transaction */
			lock_row();
			reply = update_row();
			unlock_row();
			break;
		case CMD_BEGIN: /* keep the lock until the commit */
			if (!in_transaction)
				lock_row();
			in_transaction = 1;
			reply = update_row();
			break;
		case CMD_COMMIT:
			if (in_transaction)
				unlock_row();
			in_transaction = 0;
			break;
		default:
			wl_die(PROG ": unknown request %" PRIu64, cmd);
		}
		if (wl_io_full(fd, &reply, sizeof reply, 1) != 1)
			break;
	}
	if (in_transaction)
		unlock_row();
	close(fd);
}

/* ---- clients ----------------------------------------------------- */

static int connect_server(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&server_addr, sizeof server_addr) != 0)
		wl_die(PROG ": connect: %s", strerror(errno));
	wl_set_nodelay(fd);
	return fd;
}

/* The victim's wait: ppoll with a 1 s progress timer, as interactive
 * clients keep one to report that they are still waiting. */
static __attribute__((noinline)) void wait_for_reply(int fd, uint64_t *reply)
{
	const struct timespec progress = { .tv_sec = 1 };
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int waited = 0;
	for (;;) {
		int n = ppoll(&pf, 1, &progress, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			wl_die(PROG ": ppoll: %s", strerror(errno));
		if (n > 0)
			break;
		fprintf(stderr, "lh-victim: still waiting for the reply after %d s\n", ++waited);
	}
	if (wl_io_full(fd, reply, sizeof *reply, 0) != 1)
		wl_die(PROG ": the worker went away");
}

static __attribute__((noinline)) void query_row(int fd)
{
	uint64_t cmd = CMD_UPDATE, reply;
	if (wl_io_full(fd, &cmd, sizeof cmd, 1) != 1)
		wl_die(PROG ": send: %s", strerror(errno));
	wait_for_reply(fd, &reply);
}

static void victim_main(int idx, int out)
{
	char name[16];
	if (idx == 0)
		snprintf(name, sizeof name, "lh-victim");
	else
		snprintf(name, sizeof name, "lh-victim-%d", idx);
	wl_name_process(name);
	int fd = connect_server();
	uint64_t done = 0;
	while (!wl_time_up(&args)) {
		query_row(fd);
		done++;
		if (think_ms)
			wl_sleep_ns(think_ms * WL_NS_PER_MS);
	}
	close(fd);
	if (write(out, &done, sizeof done) != sizeof done)
		wl_die(PROG ": result pipe: %s", strerror(errno));
}

static __attribute__((noinline)) void call_worker(int fd, uint64_t cmd)
{
	uint64_t reply;
	if (wl_io_full(fd, &cmd, sizeof cmd, 1) != 1 || wl_io_full(fd, &reply, sizeof reply, 0) != 1)
		wl_die(PROG ": holder request failed");
}

/* The holder client's idle wait, on the script's next statement. */
static __attribute__((noinline)) int read_statement(int in, uint64_t *stmt)
{
	return wl_get_u64(PROG, in, stmt);
}

static void holder_main(int in)
{
	wl_name_process("lh-hold-client");
	int fd = connect_server();
	uint64_t stmt;
	while (read_statement(in, &stmt)) {
		if (stmt == CMD_BEGIN) {
			call_worker(fd, CMD_BEGIN);
			if (args.fixed)
				call_worker(fd, CMD_COMMIT); /* the fix: never hold it across a wait */
		} else if (stmt == CMD_COMMIT && !args.fixed) {
			call_worker(fd, CMD_COMMIT);
		}
	}
	close(fd);
}

/* ---- script ------------------------------------------------------ */

/* Sleeps `ms`, but never past the time bound. */
static __attribute__((noinline)) void script_sleep(int ms)
{
	int64_t left = args.deadline_ns - wl_now_ns();
	int64_t ns = ms * WL_NS_PER_MS;
	if (ns > left)
		ns = left;
	if (ns > 0)
		wl_sleep_ns(ns);
}

static void script_main(int out)
{
	wl_name_process("lh-script");
	for (;;) {
		script_sleep(gap_ms);
		if (wl_time_up(&args))
			break;
		wl_put_u64(PROG, out, CMD_BEGIN);
		script_sleep(sleep_ms); /* the `sleep 5` between the statements */
		wl_put_u64(PROG, out, CMD_COMMIT);
	}
	close(out);
}

/* ---- parent ------------------------------------------------------ */

static void setup(void)
{
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		wl_die(PROG ": mmap: %s", strerror(errno));
	pthread_mutexattr_t ma;
	WL_CHECK_PT(pthread_mutexattr_init(&ma));
	WL_CHECK_PT(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED));
	WL_CHECK_PT(pthread_mutex_init(&sh->mutex, &ma));
	pthread_mutexattr_destroy(&ma);
	pthread_condattr_t ca;
	WL_CHECK_PT(pthread_condattr_init(&ca));
	WL_CHECK_PT(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED));
	WL_CHECK_PT(pthread_cond_init(&sh->released, &ca));
	pthread_condattr_destroy(&ca);

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		wl_die(PROG ": socket: %s", strerror(errno));
	server_addr.sin_family = AF_INET;
	server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof server_addr;
	if (bind(listen_fd, (struct sockaddr *)&server_addr, sizeof server_addr) ||
	    listen(listen_fd, 8) ||
	    getsockname(listen_fd, (struct sockaddr *)&server_addr, &len))
		wl_die(PROG ": listen: %s", strerror(errno));
}

/* Forks a child that dies with the parent; returns 0 in the child. */
static pid_t spawn(void)
{
	pid_t p = fork();
	if (p < 0)
		wl_die(PROG ": fork: %s", strerror(errno));
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(0);
	}
	return p;
}

/* Accepts the next connection and forks its worker, as a postmaster does:
 * connections come one at a time, so worker-0 serves the victim. */
static pid_t spawn_worker(int idx)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		wl_die(PROG ": accept: %s", strerror(errno));
	wl_set_nodelay(fd);
	pid_t p = spawn();
	if (p == 0) {
		close(listen_fd);
		worker_main(idx, fd);
		_exit(0);
	}
	close(fd);
	return p;
}

int main(int argc, char **argv)
{
	const struct wl_opt extra[] = {
		{ "sleep-ms", WL_OPT_INT, &sleep_ms, 0, 3600000,
		  "the script's sleep inside the transaction, ms (default 5000)" },
		{ "gap-ms", WL_OPT_INT, &gap_ms, 0, 3600000,
		  "the script's pause before each transaction, ms (default 500)" },
		{ "think-ms", WL_OPT_INT, &think_ms, 0, 1000,
		  "the victim's pause between updates, ms (default 1)" },
		{ "victims", WL_OPT_INT, &nvictims, 1, MAX_VICTIMS,
		  "victim clients, each with its own worker queued on the lock (default 1)" },
		{ 0 },
	};
	wl_init(argc, argv, PROG,
		"A victim client's update waits on a row lock held by another worker "
		"process, idle in a transaction until its client gets the script's "
		"commit after a sleep (--fixed: the client commits at once).",
		extra, &args);
	wl_name_process("lh-main");
	setup();

	int res[2];
	if (pipe(res) != 0)
		wl_die(PROG ": pipe: %s", strerror(errno));
	pid_t pids[2 * MAX_VICTIMS + 3];
	int np = 0;
	/* One victim at a time, its connection accepted before the next starts:
	 * worker i serves victim i. */
	for (int i = 0; i < nvictims; i++) {
		if ((pids[np++] = spawn()) == 0) {
			close(res[0]);
			close(listen_fd);
			victim_main(i, res[1]);
			_exit(0);
		}
		pids[np++] = spawn_worker(i);
	}
	close(res[1]); /* later children must not keep the victims' result pipe open */

	/* The script's pipe: only the script may hold its write end, or the
	 * holder client would never see it end. */
	int stmts[2];
	if (pipe(stmts) != 0)
		wl_die(PROG ": pipe: %s", strerror(errno));
	if ((pids[np++] = spawn()) == 0) {
		close(stmts[0]);
		close(res[0]);
		close(listen_fd);
		script_main(stmts[1]);
		_exit(0);
	}
	if ((pids[np++] = spawn()) == 0) {
		close(stmts[1]);
		close(res[0]);
		close(listen_fd);
		holder_main(stmts[0]);
		_exit(0);
	}
	close(stmts[0]);
	close(stmts[1]);
	pids[np++] = spawn_worker(nvictims);

	uint64_t total = 0;
	for (int i = 0; i < nvictims; i++) {
		uint64_t done;
		if (read(res[0], &done, sizeof done) != sizeof done)
			wl_die(PROG ": a victim died");
		total += done;
	}
	for (int i = 0; i < np; i++)
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
	fprintf(stderr, PROG ": %s mode, %" PRIu64 " updates by the victim\n",
		args.fixed ? "fixed" : "plain", total);
	wl_report(&args, total);
	return 0;
}
