/*
 * funclat - a target for measuring the cost of function-latency probes.
 *
 * usage: funclat MODE CALLS [FILE]
 *   MODE empty  op_empty(): returns at once (the probes' own cost per call)
 *        stat   op_stat(): stat("/usr/bin") (memory-bound, like DARC's stat bench)
 *        io     op_io(): a 4 KiB pwrite + fdatasync to FILE (I/O-bound, writes)
 *        dread  op_dread(): a 4 KiB O_DIRECT pread of FILE at the next of 4096
 *               offsets (I/O-bound, reads: the page cache is bypassed, so every
 *               call waits for the device; FILE is filled first, 16 MiB)
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

#define DREAD_BLOCKS 4096
static char *dbuf;
static long dnext;

__attribute__((noinline)) int op_dread(void)
{
	/* A stride that is not a power of two, so the device's own read-ahead does not
	 * serve the next block. */
	off_t off = (off_t)((dnext++ * 617) % DREAD_BLOCKS) * 4096;
	return pread(fd, dbuf, 4096, off) == 4096 ? 0 : -1;
}

/* Fill FILE with DREAD_BLOCKS blocks, flush it, and reopen it O_DIRECT. */
static int dread_open(const char *path)
{
	int w = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (w < 0)
		return -1;
	memset(buf, 'x', sizeof buf);
	for (int i = 0; i < DREAD_BLOCKS; i++)
		if (write(w, buf, sizeof buf) != (ssize_t)sizeof buf)
			return -1;
	fsync(w);
	close(w);
	if (posix_memalign((void **)&dbuf, 4096, 4096))
		return -1;
	return open(path, O_RDONLY | O_DIRECT);
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
		fprintf(stderr, "usage: funclat empty|stat|io|dread CALLS [FILE]\n");
		return 2;
	}
	/* First: dread's file setup takes a while, and SIGUSR1 may come during it. */
	signal(SIGUSR1, on_usr1);
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
	} else if (!strcmp(argv[1], "dread") && argc > 3) {
		op = op_dread;
		fd = dread_open(argv[3]);
		if (fd < 0) {
			perror(argv[3]);
			return 1;
		}
	} else {
		fprintf(stderr, "funclat: unknown mode %s (io and dread need FILE)\n", argv[1]);
		return 2;
	}
	long calls = atol(argv[2]);
	while (!go)
		pause();
	long long t0 = now_ns();
	for (long i = 0; i < calls; i++)
		op();
	long long dt = now_ns() - t0;
	printf("ns_per_call %.1f elapsed_ns %lld calls %ld\n", (double)dt / calls, dt, calls);
	return 0;
}
