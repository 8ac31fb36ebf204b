/*
 * circular-timeout - two processes wait on each other; a timeout breaks it.
 *
 * Problem (Argus §3.4, the Chromium/IME spinning cursor): the process
 * forks.  The parent, "ct-client", sends a request to the child,
 * "ct-server", over a pipe and waits for the reply with poll() and a
 * 20 ms timeout.  To answer, the server needs a "go" token from the client
 * (think: the renderer needs the browser's help to finish the job), but
 * the client only sends that token after its own wait has completed or
 * timed out.  So client and server wait on each other in a circle; only
 * the client's timeout breaks it, turning a deadlock into a livelock that
 * costs 20 ms per request.
 *
 * Expected diagnosis: a long wait in ct-client (poll on the reply pipe)
 * that always ends by timer expiry rather than by a wakeup from
 * ct-server, while ct-server is blocked reading the "go" pipe that only
 * ct-client writes: a circular wait between the two processes, broken by
 * the timeout (timer).  Both processes descend from one launch (fork).
 *
 * --fixed: the client sends the token together with the request, before
 * it starts waiting, so the server never blocks on it and each request
 * completes in a few microseconds without ever hitting the timeout.
 */
#include "common.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static int timeout_ms = 20;
static int work_us = 20; /* CPU per request on each side */
static struct wl_args args;

struct msg {
	uint64_t seq;
};

static void write_msg(int fd, uint64_t seq)
{
	struct msg m = { .seq = seq };
	ssize_t n;
	while ((n = write(fd, &m, sizeof m)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof m)
		wl_die("circular-timeout: pipe write: %s",
		       n < 0 ? strerror(errno) : "short");
}

/* Returns 0 at end of file (the peer is gone). */
static int read_msg(int fd, struct msg *m)
{
	ssize_t n;
	while ((n = read(fd, m, sizeof *m)) < 0 && errno == EINTR)
		;
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof *m)
		wl_die("circular-timeout: pipe read: %s",
		       n < 0 ? strerror(errno) : "short");
	return 1;
}

/* ---- server (child process) -------------------------------------- */

static __attribute__((noinline)) void serve_request(void)
{
	wl_burn_ns(work_us * WL_NS_PER_US);
}

static __attribute__((noinline)) int wait_for_go_token(int go_fd)
{
	struct msg token;
	return read_msg(go_fd, &token);
}

static void server_main(int req_fd, int go_fd, int resp_fd)
{
	wl_name_process("ct-server");
	struct msg req;
	while (read_msg(req_fd, &req)) {
		serve_request();
		/* Needs the client's help before it can answer. */
		if (!wait_for_go_token(go_fd))
			break;
		write_msg(resp_fd, req.seq);
	}
}

/* ---- client (parent process) ------------------------------------- */

static __attribute__((noinline)) void prepare_request(void)
{
	wl_burn_ns(work_us * WL_NS_PER_US);
}

/* Returns 1 if the reply arrived, 0 on timeout. */
static __attribute__((noinline)) int wait_for_reply(int resp_fd)
{
	struct pollfd p = { .fd = resp_fd, .events = POLLIN };
	int rc;
	while ((rc = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
		;
	if (rc < 0)
		wl_die("circular-timeout: poll: %s", strerror(errno));
	return rc > 0;
}

int main(int argc, char **argv)
{
	const struct wl_opt opts[] = {
		{ "timeout-ms", WL_OPT_INT, &timeout_ms, 1, 60000,
		  "client reply timeout in ms (default 20)" },
		{ "work-us", WL_OPT_INT, &work_us, 0, 1000000,
		  "CPU per request on each side in us (default 20)" },
		{ 0 },
	};
	wl_init(argc, argv, "circular-timeout",
		"ct-client (parent) and ct-server (child) wait on each other; "
		"a poll timeout breaks the cycle.\n--fixed: the client sends the "
		"server's go token before waiting.",
		opts, &args);

	int req[2], go[2], resp[2];
	if (pipe(req) || pipe(go) || pipe(resp))
		wl_die("circular-timeout: pipe: %s", strerror(errno));

	pid_t pid = fork();
	if (pid < 0)
		wl_die("circular-timeout: fork: %s", strerror(errno));
	if (pid == 0) {
		/* Do not outlive a killed client. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() == 1)
			_exit(0);
		close(req[1]);
		close(go[1]);
		close(resp[0]);
		server_main(req[0], go[0], resp[1]);
		_exit(0);
	}

	wl_name_process("ct-client");
	close(req[0]);
	close(go[0]);
	close(resp[1]);

	uint64_t completed = 0, timeouts = 0;
	int64_t worst_ns = 0;
	for (uint64_t seq = 0; !wl_time_up(&args); seq++) {
		int64_t t0 = wl_now_ns();
		prepare_request();
		write_msg(req[1], seq);
		if (args.fixed)
			write_msg(go[1], seq); /* the fix: help first, then wait */

		if (!wait_for_reply(resp[0]))
			timeouts++;
		/* The bug: the server's token only goes out after our wait. */
		if (!args.fixed)
			write_msg(go[1], seq);

		struct msg reply;
		if (!read_msg(resp[0], &reply))
			wl_die("circular-timeout: server exited early");
		if (reply.seq != seq)
			wl_die("circular-timeout: reply %llu for request %llu",
			       (unsigned long long)reply.seq,
			       (unsigned long long)seq);
		completed++;
		if (wl_now_ns() - t0 > worst_ns)
			worst_ns = wl_now_ns() - t0;
	}

	/* EOF on the request pipe tells the server to exit. */
	close(req[1]);
	close(go[1]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	close(resp[0]);

	fprintf(stderr, "circular-timeout: %s mode, %llu requests, %llu timeouts, "
			"worst latency %.2f ms\n",
		args.fixed ? "fixed" : "plain", (unsigned long long)completed,
		(unsigned long long)timeouts, (double)worst_ns / 1e6);
	wl_report(&args, completed);
	return 0;
}
