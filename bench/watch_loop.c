/*
 * watch_loop - what one access costs through `causeway watch`: reads the 8-byte
 * variable `flag` N times in a loop and prints ns per access. Run it bare, then
 * under `causeway watch --symbol flag --via breakpoint` (a debug trap and a perf
 * sample per access) and `--via uprobe` (an int3, the uprobe's BPF program and a
 * ring record per access): the same loop, the whole recorder path included.
 *
 * Usage: watch_loop [N]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t flag __attribute__((aligned(8)));

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	uint64_t sum = 0, t0 = now_ns();
	for (long i = 0; i < n; i++)
		sum += __atomic_load_n(&flag, __ATOMIC_RELAXED);
	uint64_t t1 = now_ns();
	printf("watch_loop: %ld reads, %.1f ns per access%s\n", n,
	       (double)(t1 - t0) / (double)n, sum == 42 ? " " : "");
	return 0;
}
