/* Takes all four x86 debug registers of its threads (four breakpoint events on
 * itself, inherited by the threads it creates), prints "ready", then for the given
 * seconds starts a thread every 10 ms that writes the data flag `flag` once: a
 * watch finds no free debug register and must fall back to uprobes. */
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

long flag __attribute__((aligned(8)));
static long taken[4] __attribute__((aligned(8)));

static void *writer(void *arg)
{
	__atomic_store_n(&flag, (long)arg, __ATOMIC_SEQ_CST);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	for (int i = 0; i < 4; i++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.type = PERF_TYPE_BREAKPOINT;
		a.size = sizeof a;
		a.bp_type = HW_BREAKPOINT_W;
		a.bp_addr = (unsigned long)&taken[i];
		a.bp_len = HW_BREAKPOINT_LEN_8;
		a.exclude_kernel = 1;
		a.inherit = 1;
		if (syscall(SYS_perf_event_open, &a, 0, -1, -1, 0) < 0) {
			perror("perf_event_open");
			return 2;
		}
	}
	printf("ready\n");
	fflush(stdout);
	struct timespec gap = {0, 10000000};
	for (long i = 1; i <= (long)(seconds * 100); i++) {
		pthread_t t;
		pthread_create(&t, NULL, writer, (void *)i);
		pthread_join(t, NULL);
		nanosleep(&gap, NULL);
	}
	return 0;
}
