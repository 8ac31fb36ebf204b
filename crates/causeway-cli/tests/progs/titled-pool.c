/*
 * titled-pool - pre-forked worker processes that give themselves titles, and one
 * CPU-bound "cruncher" process they all wait for.
 *
 * The parent forks N workers (argv[1], default 6) titled "tp: worker 1".."tp: worker N"
 * (thread name "tp-worker") and one cruncher titled "tp: cruncher" (thread name
 * "tp-cruncher"). Each worker sends its number over one shared pipe and waits for the
 * reply on its own pipe; the cruncher answers each request after ~2 ms of CPU in
 * crunch(). With more workers than the cruncher can serve, requests are always
 * queued: the cruncher waits for nobody, and its own CPU work is the limit.
 * Runs for argv[2] seconds (default 2). Pass a long padding argument last so the argv
 * area has room for the titles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 16

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_title(int argc, char **argv, const char *comm, const char *title)
{
	char *start = argv[0];
	char *end = argv[argc - 1] + strlen(argv[argc - 1]);
	size_t room = (size_t)(end - start);
	prctl(PR_SET_NAME, comm, 0, 0, 0);
	memset(start, 0, room);
	strncpy(start, title, room - 1);
}

/* About 2 ms of arithmetic: the work that limits the program. */
static __attribute__((noinline)) unsigned long crunch(unsigned long x)
{
	volatile unsigned long acc = x;
	for (long i = 0; i < 4000000; i++)
		acc = acc * 6364136223846793005UL + 1442695040888963407UL;
	return acc;
}

static void cruncher(int req, int *rep, int n)
{
	int w;
	while (read(req, &w, sizeof w) == (ssize_t)sizeof w) {
		if (w < 0 || w >= n)
			continue;
		unsigned long r = crunch((unsigned long)w);
		if (write(rep[w], &r, sizeof r) < 0)
			break;
	}
	_exit(0);
}

static void worker(int req, int rep, int w, double until)
{
	unsigned long r;
	while (now() < until) {
		if (write(req, &w, sizeof w) != (ssize_t)sizeof w)
			break;
		if (read(rep, &r, sizeof r) != (ssize_t)sizeof r)
			break;
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 6;
	double seconds = argc > 2 ? atof(argv[2]) : 2.0;
	int req[2], rep[MAX_WORKERS][2], rep_w[MAX_WORKERS];
	if (n < 1 || n > MAX_WORKERS || pipe(req) != 0)
		return 2;
	for (int i = 0; i < n; i++) {
		if (pipe(rep[i]) != 0)
			return 2;
		rep_w[i] = rep[i][1];
	}
	double until = now() + seconds;
	if (fork() == 0) {
		set_title(argc, argv, "tp-cruncher", "tp: cruncher");
		close(req[1]);
		cruncher(req[0], rep_w, n);
	}
	for (int i = 0; i < n; i++) {
		if (fork() == 0) {
			char title[32];
			snprintf(title, sizeof title, "tp: worker %d", i + 1);
			set_title(argc, argv, "tp-worker", title);
			close(req[0]);
			worker(req[1], rep[i][0], i, until);
		}
	}
	close(req[1]);
	while (wait(NULL) > 0)
		;
	return 0;
}
