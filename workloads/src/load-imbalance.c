/*
 * load-imbalance - phases separated by a barrier, work split unevenly.
 *
 * Problem: N "phase-i" threads process a job in phases; each phase ends
 * in a pthread_barrier_wait.  The per-phase work (40 items of ~100 us CPU
 * each) is split unevenly: one thread gets 3 shares, the others 1 share
 * each, and the heavy role rotates from phase to phase (like wPerf §3.2:
 * A does 3 tasks and B 1 in one phase, the reverse in the next).  Every
 * phase lasts as long as its heaviest thread; the light threads idle at
 * the barrier.
 *
 * Expected diagnosis: because the heavy role alternates, each thread
 * waits for the other(s) at the barrier in some phase, so the wait-for
 * graph has a cycle (a knot) among the phase threads whose edges carry
 * the pthread_barrier_wait -> futex stacks.
 *
 * --fixed: the items are split evenly, so all threads reach the barrier at
 * about the same time and a phase takes (items / N) item-times instead of
 * 3 * items / (N + 2).  For N = 2 that is 1.5x more items per second.
 */
#include "common.h"

#define MAX_THREADS 64

static int nthreads = 2;
static int items_per_phase = 40;
static int item_us = 100;

static pthread_barrier_t barrier;
static struct wl_args args;

/*
 * Stop decision, made by the barrier's serial thread after phase p and
 * read by everyone after phase p + 1.  Alternating slots make the barrier
 * the only synchronisation needed: a slot is written while nobody reads it.
 */
static int stop_after[2];

struct phase_thread {
	pthread_t tid;
	int id;
	uint64_t items;
} __attribute__((aligned(64)));

static struct phase_thread threads[MAX_THREADS];

/* How many items thread `id` processes in phase `phase`. */
static int share_of(int id, uint64_t phase)
{
	int n = nthreads, total = items_per_phase;
	if (n == 1)
		return total;
	if (args.fixed)
		/* Even split; the first (total % n) threads take one extra. */
		return total / n + (id < total % n);

	/* The bug: one heavy thread gets 3 shares, rotating every phase. */
	int heavy = (int)(phase % (uint64_t)n);
	int heavy_items = total * 3 / (n + 2);
	int rest = total - heavy_items;
	if (id == heavy)
		return heavy_items;
	int rank = id < heavy ? id : id - 1; /* index among light threads */
	return rest / (n - 1) + (rank < rest % (n - 1));
}

static __attribute__((noinline)) void process_item(void)
{
	wl_burn_ns(item_us * WL_NS_PER_US);
}

static void *phase_main(void *arg)
{
	struct phase_thread *t = arg;
	wl_name_thread_idx("phase", t->id);

	for (uint64_t phase = 0;; phase++) {
		int n = share_of(t->id, phase);
		for (int i = 0; i < n; i++)
			process_item();
		t->items += (uint64_t)n;

		int rc = pthread_barrier_wait(&barrier);
		if (stop_after[phase & 1])
			break;
		if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
			stop_after[(phase + 1) & 1] = wl_time_up(&args);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const struct wl_opt opts[] = {
		{ "threads", WL_OPT_INT, &nthreads, 1, MAX_THREADS,
		  "phase threads (default 2)" },
		{ "items", WL_OPT_INT, &items_per_phase, 1, 1000000,
		  "work items per phase (default 40)" },
		{ "item-us", WL_OPT_INT, &item_us, 0, 1000000,
		  "CPU per work item in us (default 100)" },
		{ 0 },
	};
	wl_init(argc, argv, "load-imbalance",
		"threads run barrier-separated phases; one thread gets 3x the "
		"work, rotating.\n--fixed: even split.",
		opts, &args);

	WL_CHECK_PT(pthread_barrier_init(&barrier, NULL, (unsigned)nthreads));
	for (int i = 0; i < nthreads; i++) {
		threads[i].id = i;
		WL_CHECK_PT(pthread_create(&threads[i].tid, NULL, phase_main,
					   &threads[i]));
	}
	uint64_t total = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(threads[i].tid, NULL);
		total += threads[i].items;
	}
	pthread_barrier_destroy(&barrier);

	fprintf(stderr, "load-imbalance: %s mode, %d threads, %llu phases\n",
		args.fixed ? "fixed" : "plain", nthreads,
		(unsigned long long)(total / (uint64_t)items_per_phase));
	wl_report(&args, total);
	return 0;
}
