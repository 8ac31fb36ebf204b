/*
 * watch_trap - what one watched access costs: a thread reads a variable N times
 * with no watchpoint, with a counting breakpoint (the trap only), and with a
 * sampling breakpoint writing each hit into a perf ring (what `causeway watch`
 * does). The difference between the last two is all a BPF program on the
 * breakpoint could save; the trap itself it cannot.
 *
 * Usage: watch_trap [N]   (as root; prints ns per access for each mode)
 */
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t flag;

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static double per_access(long n)
{
	uint64_t sum = 0, t0 = now_ns();
	for (long i = 0; i < n; i++)
		sum += flag;
	uint64_t t1 = now_ns();
	if (sum == 42)
		puts("");
	return (double)(t1 - t0) / (double)n;
}

static int open_bp(int sampling)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof a;
	a.bp_type = HW_BREAKPOINT_RW;
	a.bp_addr = (uint64_t)(uintptr_t)&flag;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	if (sampling) {
		a.sample_period = 1;
		a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
		a.use_clockid = 1;
		a.clockid = CLOCK_MONOTONIC;
	}
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("perf_event_open (breakpoint)");
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	printf("plain: %.1f ns per access\n", per_access(n * 100));

	int fd = open_bp(0);
	printf("counting breakpoint (trap only): %.1f ns per access\n", per_access(n));
	close(fd);

	fd = open_bp(1);
	/* 512 KiB of data pages, as causeway watch maps per thread; the ring wraps
	 * unread here, which costs the kernel nothing extra. */
	size_t len = (size_t)(128 + 1) * (size_t)sysconf(_SC_PAGESIZE);
	void *ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	printf("sampling breakpoint (trap + sample into the ring): %.1f ns per access\n",
	       per_access(n));
	munmap(ring, len);
	close(fd);
	return 0;
}
