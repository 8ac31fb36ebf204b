/*
 * cpu-pinned - a server whose CPU affinity, not its CPU work, is the limit.
 *
 * The process `cp-client` forks `cp-server`, which restricts itself to one CPU
 * (--cpu, 0) with sched_setaffinity, as `taskset -c 0`, a cpuset cgroup or a
 * container's --cpuset-cpus would, on a machine whose other CPUs are otherwise
 * idle. Its workers `worker-0..N-1` (--workers, 2) each serve their share of the
 * clients `client-0..M-1` (--clients, 4) over socket pairs, computing each reply
 * (--work-us, 500, of CPU). The workers take turns on the one CPU: each is
 * runnable about as long as it runs, while the other CPUs idle.
 *
 * --fixed: no affinity set (every online CPU).
 */
#define _GNU_SOURCE
#include "common.h"
#include "io.h"

#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CLIENTS 64
#define MAX_WORKERS 16

static int nclients = 4;
static int nworkers = 2;
static int work_us = 500;
static int cpu;
static struct wl_args args;
static int server_fds[MAX_CLIENTS];

static __attribute__((noinline)) void compute_reply(char *reply, const char *req)
{
	wl_burn_ns(work_us * WL_NS_PER_US);
	reply[0] = req[0];
}

/* A worker: serves clients w, w + nworkers, ... in turn. */
static void *worker_main(void *arg)
{
	int w = (int)(intptr_t)arg;
	wl_name_thread_idx("worker", w);
	wl_serve_in_turn(server_fds, nclients, w, nworkers, compute_reply);
	return NULL;
}

static void server(void)
{
	wl_name_process("cp-server");
	if (!args.fixed) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		/* Before the workers start: they inherit it. */
		if (sched_setaffinity(0, sizeof set, &set) != 0)
			wl_die("cpu-pinned: sched_setaffinity(CPU %d): %s", cpu,
			       strerror(errno));
	}
	pthread_t t[MAX_WORKERS];
	for (int w = 0; w < nworkers; w++)
		WL_CHECK_PT(pthread_create(&t[w], NULL, worker_main, (void *)(intptr_t)w));
	for (int w = 0; w < nworkers; w++)
		pthread_join(t[w], NULL);
	_exit(0);
}

struct client {
	int id, fd;
	pthread_t tid;
	uint64_t requests;
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	wl_name_thread_idx("client", c->id);
	char req[1] = { 'a' }, reply[1];
	while (!wl_time_up(&args)) {
		if (write(c->fd, req, 1) != 1 || read(c->fd, reply, 1) != 1)
			wl_die("cpu-pinned: client %d: connection lost", c->id);
		c->requests++;
	}
	wl_client_done(c->fd);
	return NULL;
}

int main(int argc, char **argv)
{
	const struct wl_opt opts[] = {
		{ "clients", WL_OPT_INT, &nclients, 1, MAX_CLIENTS,
		  "client threads, one request in flight each (default 4)" },
		{ "workers", WL_OPT_INT, &nworkers, 1, MAX_WORKERS,
		  "the server's worker threads (default 2)" },
		{ "work-us", WL_OPT_INT, &work_us, 1, 1000000,
		  "CPU time per request in us (default 500)" },
		{ "cpu", WL_OPT_INT, &cpu, 0, 1023,
		  "the one CPU the server may run on (default 0)" },
		{ 0 },
	};
	wl_init(argc, argv, "cpu-pinned",
		"a server restricted to one CPU (sched_setaffinity) with two "
		"workers, on otherwise idle CPUs; clients wait for its replies.\n"
		"--fixed: no affinity.",
		opts, &args);
	wl_name_process("cp-client");

	struct client clients[MAX_CLIENTS];
	for (int i = 0; i < nclients; i++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
			wl_die("cpu-pinned: socketpair: %s", strerror(errno));
		clients[i] = (struct client){ .id = i, .fd = sv[0] };
		server_fds[i] = sv[1];
	}
	pid_t child = fork();
	if (child < 0)
		wl_die("cpu-pinned: fork: %s", strerror(errno));
	if (child == 0) {
		for (int i = 0; i < nclients; i++)
			close(clients[i].fd);
		server();
	}
	for (int i = 0; i < nclients; i++)
		close(server_fds[i]);
	for (int i = 0; i < nclients; i++)
		WL_CHECK_PT(pthread_create(&clients[i].tid, NULL, client_main,
					   &clients[i]));
	uint64_t total = 0;
	for (int i = 0; i < nclients; i++) {
		pthread_join(clients[i].tid, NULL);
		total += clients[i].requests;
	}
	for (int i = 0; i < nclients; i++)
		close(clients[i].fd);
	waitpid(child, NULL, 0);
	fprintf(stderr, "cpu-pinned: %s mode, CPU %d, %d workers, %d clients, %llu requests\n",
		args.fixed ? "fixed" : "plain", cpu, nworkers, nclients,
		(unsigned long long)total);
	wl_report(&args, total);
	return 0;
}
