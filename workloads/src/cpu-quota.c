/*
 * cpu-quota - a server whose CPU quota, not its CPU work, is the limit.
 *
 * The process `cq-client` forks `cq-server`, which puts itself into a cgroup of
 * its own with a CPU quota (--quota-ms, 20, per --period-ms, 100: a fifth of one
 * CPU), on a machine whose CPUs are otherwise idle. `client-0..N-1` (--clients, 4)
 * send requests over socket pairs; the server's one worker thread `worker`
 * computes each reply (--work-us, 500, of CPU) and sends it back. The worker is
 * runnable most of the time: not because the CPUs are busy but because its cgroup
 * is throttled once its quota for the period is spent.
 *
 * --fixed: the same cgroup without a quota (cpu.cfs_quota_us -1, cpu.max "max").
 *
 * The cgroup: cgroup v1's cpu controller where it is mounted
 * (/sys/fs/cgroup/cpu), else cgroup v2 (/sys/fs/cgroup, or /sys/fs/cgroup/unified
 * with the cpu controller enabled). Needs root; removed at exit.
 */
#include "common.h"
#include "io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CLIENTS 64

static int nclients = 4;
static int work_us = 500;
static int quota_ms = 20;
static int period_ms = 100;
static struct wl_args args;
static char cgroup_dir[256];

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		wl_die("cpu-quota: writing %s: %s", path, strerror(errno));
	close(fd);
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* Make the cgroup and set its quota; returns its directory. */
static void make_cgroup(void)
{
	char text[64];
	if (exists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")) {
		snprintf(cgroup_dir, sizeof cgroup_dir,
			 "/sys/fs/cgroup/cpu/cw-cpu-quota-%d", (int)getpid());
		if (mkdir(cgroup_dir, 0755) != 0)
			wl_die("cpu-quota: mkdir %s: %s (needs root)", cgroup_dir,
			       strerror(errno));
		snprintf(text, sizeof text, "%d", period_ms * 1000);
		write_file(cgroup_dir, "cpu.cfs_period_us", text);
		snprintf(text, sizeof text, "%d",
			 args.fixed ? -1 : quota_ms * 1000);
		write_file(cgroup_dir, "cpu.cfs_quota_us", text);
		return;
	}
	const char *roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
		char probe[256];
		snprintf(probe, sizeof probe, "%s/cgroup.subtree_control", roots[i]);
		if (!exists(probe))
			continue;
		write_file(roots[i], "cgroup.subtree_control", "+cpu");
		snprintf(cgroup_dir, sizeof cgroup_dir, "%s/cw-cpu-quota-%d",
			 roots[i], (int)getpid());
		if (mkdir(cgroup_dir, 0755) != 0)
			wl_die("cpu-quota: mkdir %s: %s (needs root)", cgroup_dir,
			       strerror(errno));
		if (args.fixed)
			snprintf(text, sizeof text, "max %d", period_ms * 1000);
		else
			snprintf(text, sizeof text, "%d %d", quota_ms * 1000,
				 period_ms * 1000);
		write_file(cgroup_dir, "cpu.max", text);
		return;
	}
	wl_die("cpu-quota: no cgroup cpu controller found (cgroup v1 "
	       "/sys/fs/cgroup/cpu or cgroup v2)");
}

static void enter_cgroup(void)
{
	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	write_file(cgroup_dir, "cgroup.procs", pid);
}

static __attribute__((noinline)) void compute_reply(char *reply, const char *req)
{
	wl_burn_ns(work_us * WL_NS_PER_US);
	reply[0] = req[0];
}

/* The server: one worker serving every client's socket in turn. */
static void server(const int *fds)
{
	wl_name_process("cq-server");
	wl_name_thread("worker");
	enter_cgroup();
	wl_serve_in_turn(fds, nclients, 0, 1, compute_reply);
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
			wl_die("cpu-quota: client %d: connection lost", c->id);
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
		{ "work-us", WL_OPT_INT, &work_us, 1, 1000000,
		  "CPU time per request in us (default 500)" },
		{ "quota-ms", WL_OPT_INT, &quota_ms, 1, 1000,
		  "the server's CPU quota per period in ms (default 20)" },
		{ "period-ms", WL_OPT_INT, &period_ms, 1, 1000,
		  "the quota's period in ms (default 100)" },
		{ 0 },
	};
	wl_init(argc, argv, "cpu-quota",
		"a server in a cgroup with a CPU quota (20 ms per 100 ms) on idle "
		"CPUs; clients wait for its replies.\n--fixed: no quota.",
		opts, &args);
	wl_name_process("cq-client");
	make_cgroup();

	struct client clients[MAX_CLIENTS];
	int server_fds[MAX_CLIENTS];
	for (int i = 0; i < nclients; i++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
			wl_die("cpu-quota: socketpair: %s", strerror(errno));
		clients[i] = (struct client){ .id = i, .fd = sv[0] };
		server_fds[i] = sv[1];
	}
	pid_t child = fork();
	if (child < 0)
		wl_die("cpu-quota: fork: %s", strerror(errno));
	if (child == 0) {
		/* The clients' ends stay with the clients: the server sees
		 * end-of-file when they close them. */
		for (int i = 0; i < nclients; i++)
			close(clients[i].fd);
		server(server_fds);
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

	fprintf(stderr, "cpu-quota: %s mode, cgroup %s, %d clients, %llu requests\n",
		args.fixed ? "fixed" : "plain", cgroup_dir, nclients,
		(unsigned long long)total);
	wl_report(&args, total);
	/* Keep the cgroup for two of a recorder's 100 ms sampling periods after the server
	 * is gone (after the throughput, which counts the run only): its last throttled
	 * period is then sampled, not lost with the cgroup. */
	fflush(stdout);
	wl_sleep_ns(200 * WL_NS_PER_MS);
	rmdir(cgroup_dir);
	return 0;
}
