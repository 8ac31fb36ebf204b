/*
 * stopped-peer - clients wait on a server that a third process has stopped.
 *
 * Problem: the parent, "sp-client", runs client threads "client-0..N-1"; each
 * sends small requests over its own pipe to a server process, "sp-server"
 * (forked child, one thread "server-i" per client), and blocks reading the
 * reply.  A third process, "sp-stopper" (another child), now and then stops
 * the server with SIGSTOP and continues it with SIGCONT --stop-ms later
 * (default 1000 ms), like a debugger, a job-control shell or a watchdog that
 * freezes a service.  Meanwhile every client waits.
 *
 * Expected diagnosis: the clients' long read of the reply <- the server
 * thread, stopped (state T) for --stop-ms <- sp-stopper, whose SIGCONT woke
 * it and which sent the SIGSTOP before its sleep.
 *
 * --fixed: the stopper never stops the server.
 */
#include "common.h"
#include "io.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CLIENTS 8

static int nclients = 2;
static int stop_ms = 1000;
static int gap_ms = 200;
static struct wl_args args;

struct client {
	int idx;
	int req_fd, resp_fd;
	uint64_t done;
};

/* ---- server (child process) -------------------------------------- */

struct serve_arg {
	int idx, req_fd, resp_fd;
};

static __attribute__((noinline)) void handle_request(void)
{
	wl_burn_ns(20 * WL_NS_PER_US);
}

static void *serve(void *p)
{
	struct serve_arg *a = p;
	wl_name_thread_idx("server", a->idx);
	uint64_t v;
	while (wl_get_u64("stopped-peer", a->req_fd, &v)) {
		handle_request();
		wl_put_u64("stopped-peer", a->resp_fd, v);
	}
	return NULL;
}

static void server_main(struct serve_arg *sa)
{
	wl_name_process("sp-server");
	pthread_t th[MAX_CLIENTS];
	for (int i = 0; i < nclients; i++)
		WL_CHECK_PT(pthread_create(&th[i], NULL, serve, &sa[i]));
	for (int i = 0; i < nclients; i++)
		pthread_join(th[i], NULL);
}

/* ---- stopper (child process) -------------------------------------- */

static __attribute__((noinline)) void freeze_server(pid_t server)
{
	kill(server, SIGSTOP);
}

static __attribute__((noinline)) void thaw_server(pid_t server)
{
	kill(server, SIGCONT);
}

static void stopper_main(pid_t server)
{
	wl_name_process("sp-stopper");
	while (!wl_time_up(&args)) {
		wl_sleep_ns(gap_ms * WL_NS_PER_MS);
		if (wl_time_up(&args) || args.fixed)
			continue;
		freeze_server(server);
		/* Never hold the server past the time bound. */
		int64_t left = args.deadline_ns - wl_now_ns();
		int64_t stop = stop_ms * WL_NS_PER_MS;
		wl_sleep_ns(stop < left ? stop : (left > 0 ? left : 0));
		thaw_server(server);
	}
	thaw_server(server);
}

/* ---- clients (parent) --------------------------------------------- */

static __attribute__((noinline)) int ask_server(struct client *c, uint64_t seq)
{
	uint64_t reply;
	wl_put_u64("stopped-peer", c->req_fd, seq);
	return wl_get_u64("stopped-peer", c->resp_fd, &reply) && reply == seq;
}

static void *client_main(void *p)
{
	struct client *c = p;
	wl_name_thread_idx("client", c->idx);
	for (uint64_t seq = 0; !wl_time_up(&args); seq++) {
		if (!ask_server(c, seq))
			wl_die("stopped-peer: bad reply");
		c->done++;
		wl_sleep_ns(500 * WL_NS_PER_US);
	}
	return NULL;
}

static pid_t fork_child(void)
{
	pid_t pid = fork();
	if (pid < 0)
		wl_die("stopped-peer: fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() == 1)
			_exit(0);
	}
	return pid;
}

int main(int argc, char **argv)
{
	const struct wl_opt opts[] = {
		{ "clients", WL_OPT_INT, &nclients, 1, MAX_CLIENTS,
		  "client threads (default 2)" },
		{ "stop-ms", WL_OPT_INT, &stop_ms, 1, 60000,
		  "how long the server stays stopped, ms (default 1000)" },
		{ "gap-ms", WL_OPT_INT, &gap_ms, 1, 60000,
		  "running time between stops, ms (default 200)" },
		{ 0 },
	};
	wl_init(argc, argv, "stopped-peer",
		"client threads wait on a server process that sp-stopper stops "
		"with SIGSTOP for --stop-ms at a time.\n--fixed: the server is "
		"never stopped.",
		opts, &args);
	struct client cl[MAX_CLIENTS];
	struct serve_arg sa[MAX_CLIENTS];
	for (int i = 0; i < nclients; i++) {
		int req[2], resp[2];
		if (pipe(req) || pipe(resp))
			wl_die("stopped-peer: pipe: %s", strerror(errno));
		cl[i] = (struct client){ .idx = i, .req_fd = req[1], .resp_fd = resp[0] };
		sa[i] = (struct serve_arg){ .idx = i, .req_fd = req[0], .resp_fd = resp[1] };
	}
	pid_t server = fork_child();
	if (server == 0) {
		for (int i = 0; i < nclients; i++) {
			close(cl[i].req_fd);
			close(cl[i].resp_fd);
		}
		server_main(sa);
		_exit(0);
	}
	for (int i = 0; i < nclients; i++) {
		close(sa[i].req_fd);
		close(sa[i].resp_fd);
	}
	pid_t stopper = fork_child();
	if (stopper == 0) {
		stopper_main(server);
		_exit(0);
	}
	wl_name_process("sp-client");
	pthread_t th[MAX_CLIENTS];
	for (int i = 0; i < nclients; i++)
		WL_CHECK_PT(pthread_create(&th[i], NULL, client_main, &cl[i]));
	uint64_t total = 0;
	for (int i = 0; i < nclients; i++) {
		pthread_join(th[i], NULL);
		total += cl[i].done;
	}
	int status;
	while (waitpid(stopper, &status, 0) < 0 && errno == EINTR)
		;
	kill(server, SIGCONT);
	for (int i = 0; i < nclients; i++)
		close(cl[i].req_fd);
	while (waitpid(server, &status, 0) < 0 && errno == EINTR)
		;
	for (int i = 0; i < nclients; i++)
		close(cl[i].resp_fd);
	fprintf(stderr, "stopped-peer: %s mode, %llu requests\n",
		args.fixed ? "fixed" : "plain", (unsigned long long)total);
	wl_report(&args, total);
	return 0;
}
