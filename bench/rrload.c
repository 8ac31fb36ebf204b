// Request/response load of many processes for bench/lossless.sh: the shape of a
// pre-forking server under its own benchmark (one server process per client
// connection, as many databases do), with deep user stacks on both sides.
//
//   rrload [--clients N] [--seconds S] [--depth D] [--frame-bytes B] [--work-us W]
//
// The main process listens on a loopback TCP port, forks N client processes
// ("rr-client") and, for each connection it accepts, one server process
// ("rr-server"), then waits. Each client sends a 64-byte request and blocks for
// the 64-byte reply; each server blocks for a request, burns W microseconds of
// CPU and replies. Both make their blocking call at the bottom of a chain of D
// nested calls, each with a B-byte local buffer, so every blocking switch-out
// has a deep user stack to record (D + a few frames).
//
// It runs for S seconds or until SIGTERM / SIGINT. At the end it prints on stdout
//
//   throughput: X ops/s
//
// and on stderr the context switches per second of the whole machine over the
// run (from /proc/stat) and the pids of every process, so a recorder can be
// pointed at them with -p:
//
//   rrload: ops=N wall_s=W switches_per_s=R
//   rrload: pids=P1,P2,...   (on stderr as soon as all are connected)

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MSG 64
#define MAX_CLIENTS 256

static int nclients = 16;
static double seconds = 5.0;
static int depth = 24;
static int frame_bytes = 192;
static int work_us = 5;

// Shared with the children: the start flag and per-client op counters.
struct shared {
	volatile int go;
	volatile int stop;
	volatile uint64_t ops[MAX_CLIENTS];
};
static struct shared *sh;
static volatile sig_atomic_t term;

static void on_term(int sig)
{
	(void)sig;
	term = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "rrload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t machine_switches(void)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[256];
	uint64_t v = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "ctxt %lu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static int full_io(int fd, char *buf, int n, int writing)
{
	int done = 0;
	while (done < n) {
		ssize_t r = writing ? write(fd, buf + done, n - done) : read(fd, buf + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (int)r;
	}
	return 0;
}

static void burn_us(int us)
{
	int64_t end = now_ns() + (int64_t)us * 1000;
	while (now_ns() < end)
		;
}

// One round of a client or server, at the bottom of the call chain.
static __attribute__((noinline)) int client_round(int fd)
{
	char buf[MSG];
	memset(buf, 'q', sizeof buf);
	if (full_io(fd, buf, MSG, 1) || full_io(fd, buf, MSG, 0))
		return -1;
	return 0;
}

static __attribute__((noinline)) int server_round(int fd)
{
	char buf[MSG];
	if (full_io(fd, buf, MSG, 0))
		return -1;
	burn_us(work_us);
	return full_io(fd, buf, MSG, 1);
}

// A chain of `d` nested calls, each with a frame_bytes buffer the compiler cannot
// drop, then one round.
static __attribute__((noinline)) int descend(int d, int fd, int server)
{
	char *pad = alloca(frame_bytes);
	memset(pad, d, frame_bytes);
	__asm__ volatile("" : : "r"(pad) : "memory");
	if (d <= 0)
		return server ? server_round(fd) : client_round(fd);
	int r = descend(d - 1, fd, server);
	__asm__ volatile("" : : "r"(pad) : "memory");
	return r;
}

static void client_main(int idx, int port)
{
	prctl(PR_SET_NAME, "rr-client");
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a))
		die("connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	while (!sh->go)
		usleep(1000);
	while (!sh->stop) {
		if (descend(depth, fd, 0))
			break;
		sh->ops[idx]++;
	}
	close(fd);
	_exit(0);
}

static void server_main(int fd)
{
	prctl(PR_SET_NAME, "rr-server");
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	while (descend(depth, fd, 1) == 0)
		;
	_exit(0);
}

static int parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *k = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(k, "--help")) {
			printf("usage: rrload [--clients N] [--seconds S] [--depth D] [--frame-bytes B] [--work-us W]\n");
			exit(0);
		}
		if (!v) {
			fprintf(stderr, "rrload: %s needs a value\n", k);
			return -1;
		}
		if (!strcmp(k, "--clients"))
			nclients = atoi(v);
		else if (!strcmp(k, "--seconds"))
			seconds = atof(v);
		else if (!strcmp(k, "--depth"))
			depth = atoi(v);
		else if (!strcmp(k, "--frame-bytes"))
			frame_bytes = atoi(v);
		else if (!strcmp(k, "--work-us"))
			work_us = atoi(v);
		else {
			fprintf(stderr, "rrload: unknown option %s\n", k);
			return -1;
		}
		i++;
	}
	if (nclients < 1 || nclients > MAX_CLIENTS || seconds <= 0 || depth < 0 ||
	    frame_bytes < 16 || work_us < 0) {
		fprintf(stderr, "rrload: value out of range\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (parse_args(argc, argv))
		return 2;
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap");
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t alen = sizeof a;
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, MAX_CLIENTS) ||
	    getsockname(ls, (struct sockaddr *)&a, &alen))
		die("listen");
	int port = ntohs(a.sin_port);
	pid_t pids[2 * MAX_CLIENTS];
	int np = 0;
	for (int i = 0; i < nclients; i++) {
		pid_t p = fork();
		if (p < 0)
			die("fork");
		if (p == 0)
			client_main(i, port);
		pids[np++] = p;
		int c = accept(ls, NULL, NULL);
		if (c < 0)
			die("accept");
		p = fork();
		if (p < 0)
			die("fork");
		if (p == 0) {
			close(ls);
			server_main(c);
		}
		close(c);
		pids[np++] = p;
	}
	fprintf(stderr, "rrload: pids=%d", getpid());
	for (int i = 0; i < np; i++)
		fprintf(stderr, ",%d", pids[i]);
	fprintf(stderr, "\n");
	uint64_t sw0 = machine_switches();
	int64_t t0 = now_ns();
	sh->go = 1;
	struct timespec d = {.tv_sec = (time_t)seconds,
			     .tv_nsec = (long)((seconds - (time_t)seconds) * 1e9)};
	// SIGTERM or SIGINT end the run early (a benchmark stops the load when its
	// recording is done); the figures then cover the time it ran.
	struct sigaction sa = {.sa_handler = on_term};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (nanosleep(&d, &d) && errno == EINTR && !term)
		;
	sh->stop = 1;
	int64_t t1 = now_ns();
	uint64_t sw1 = machine_switches();
	uint64_t ops = 0;
	for (int i = 0; i < nclients; i++)
		ops += sh->ops[i];
	for (int i = 0; i < np; i++)
		waitpid(pids[i], NULL, 0);
	double wall = (t1 - t0) / 1e9;
	printf("throughput: %.1f ops/s\n", ops / wall);
	fprintf(stderr, "rrload: ops=%lu wall_s=%.3f switches_per_s=%.0f\n", ops, wall,
		(sw1 - sw0) / wall);
	return 0;
}
