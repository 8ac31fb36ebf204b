/*
 * funclat - a target for measuring the cost of function-latency probes.
 *
 * usage: funclat MODE CALLS [FILE]
 *   MODE empty  op_empty(): returns at once (the probes' own cost per call)
 *        stat   op_stat(): stat("/usr/bin") (memory-bound, like DARC's stat bench)
 *        io     op_io(): a 4 KiB pwrite + fdatasync to FILE (I/O-bound)
 *
 * It waits for SIGUSR1 (so the tools can attach first), makes CALLS calls, and
 * prints "ns_per_call N elapsed_ns N calls N" on stdout.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t go;
static int fd = -1;
static char buf[4096];

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

__attribute__((noinline)) int op_empty(void)
{
	__asm__ volatile("" ::: "memory");
	return 0;
}

__attribute__((noinline)) int op_stat(void)
{
	struct stat st;
	return stat("/usr/bin", &st);
}

__attribute__((noinline)) int op_io(void)
{
	if (pwrite(fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf)
		return -1;
	return fdatasync(fd);
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: funclat empty|stat|io CALLS [FILE]\n");
		return 2;
	}
	int (*op)(void) = NULL;
	if (!strcmp(argv[1], "empty"))
		op = op_empty;
	else if (!strcmp(argv[1], "stat"))
		op = op_stat;
	else if (!strcmp(argv[1], "io") && argc > 3) {
		op = op_io;
		fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0) {
			perror(argv[3]);
			return 1;
		}
	} else {
		fprintf(stderr, "funclat: unknown mode %s (io needs FILE)\n", argv[1]);
		return 2;
	}
	long calls = atol(argv[2]);
	signal(SIGUSR1, on_usr1);
	while (!go)
		pause();
	long long t0 = now_ns();
	for (long i = 0; i < calls; i++)
		op();
	long long dt = now_ns() - t0;
	printf("ns_per_call %.1f elapsed_ns %lld calls %ld\n", (double)dt / calls, dt, calls);
	return 0;
}
