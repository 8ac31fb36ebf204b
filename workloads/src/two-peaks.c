/*
 * two-peaks - an operation whose latency histogram has two peaks.
 *
 * Problem (DARC §2 / OSprof, the FreeBSD fork profile): N "op-i" threads
 * call do_operation() in a loop.  Usually it takes the fast path (~10 us
 * of CPU).  Every 8th call takes the slow path: it refills a shared cache,
 * holding one global mutex while it also sleeps ~200 us (a stand-in for
 * I/O done under a lock).  Slow calls queue behind each other on the
 * mutex, so the latency histogram (log2 buckets, printed to stderr) shows
 * a left peak at ~8-16 us and a right peak at ~0.25-2 ms.
 *
 * Expected diagnosis: two latency peaks; the right one is explained by
 * slow_path(): time blocked in pthread_mutex_lock (futex) behind other
 * threads' refills, plus the nanosleep under the lock.  The left peak is
 * pure CPU in fast_path().
 *
 * --fixed: the refill uses a per-thread cache, so there is no global lock
 * and no sleep -- only the fast path's peak remains.
 */
#include "common.h"

#define MAX_THREADS 64
#define NBUCKETS 40 /* log2(ns) buckets: 1 ns .. ~550 s */

static int nthreads = 4;
static int fast_us = 10;
static int slow_every = 8;
static int slow_sleep_us = 200;

static pthread_mutex_t refill_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t shared_generation; /* under refill_lock */
static struct wl_args args;

struct op_thread {
	pthread_t tid;
	int id;
	uint64_t ops, slow_ops;
	uint64_t local_generation;
	uint64_t hist[NBUCKETS];
} __attribute__((aligned(64)));

static struct op_thread threads[MAX_THREADS];

static __attribute__((noinline)) void fast_path(void)
{
	wl_burn_ns(fast_us * WL_NS_PER_US);
}

/* The bug: a shared refill done under a global lock, sleeping inside. */
static __attribute__((noinline)) void slow_path(struct op_thread *t)
{
	if (args.fixed) {
		t->local_generation++; /* per-thread: nothing to wait for */
		return;
	}
	pthread_mutex_lock(&refill_lock);
	wl_sleep_ns(slow_sleep_us * WL_NS_PER_US);
	shared_generation++;
	pthread_mutex_unlock(&refill_lock);
}

static __attribute__((noinline)) void do_operation(struct op_thread *t)
{
	if (++t->ops % (uint64_t)slow_every == 0) {
		slow_path(t);
		t->slow_ops++;
	}
	fast_path();
}

static int bucket_of(int64_t ns)
{
	int b = 0;
	while (ns > 1 && b < NBUCKETS - 1) {
		ns >>= 1;
		b++;
	}
	return b;
}

static void *op_main(void *arg)
{
	struct op_thread *t = arg;
	wl_name_thread_idx("op", t->id);
	while (!wl_time_up(&args)) {
		int64_t t0 = wl_now_ns();
		do_operation(t);
		t->hist[bucket_of(wl_now_ns() - t0)]++;
	}
	return NULL;
}

static void format_ns(char *buf, size_t len, double ns)
{
	if (ns < 1e3)
		snprintf(buf, len, "%.3gns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.3gus", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.3gms", ns / 1e6);
	else
		snprintf(buf, len, "%.3gs", ns / 1e9);
}

static void print_histogram(const uint64_t *hist)
{
	uint64_t max = 0;
	int lo = NBUCKETS, hi = -1;
	for (int b = 0; b < NBUCKETS; b++) {
		if (hist[b] > max)
			max = hist[b];
		if (hist[b]) {
			if (b < lo)
				lo = b;
			hi = b;
		}
	}
	fprintf(stderr, "two-peaks: latency histogram (log2 buckets)\n");
	for (int b = lo; b <= hi; b++) {
		char from[16], to[16];
		format_ns(from, sizeof from, (double)(1ULL << b));
		format_ns(to, sizeof to, (double)(1ULL << (b + 1)));
		int bar = (int)(hist[b] * 50 / max);
		if (hist[b] && bar == 0)
			bar = 1;
		fprintf(stderr, "  [%7s, %7s) %10llu %.*s\n", from, to,
			(unsigned long long)hist[b], bar,
			"##################################################");
	}
}

int main(int argc, char **argv)
{
	const struct wl_opt opts[] = {
		{ "threads", WL_OPT_INT, &nthreads, 1, MAX_THREADS,
		  "operation threads (default 4)" },
		{ "slow-every", WL_OPT_INT, &slow_every, 1, 1000000,
		  "every Nth operation takes the slow path (default 8)" },
		{ "sleep-us", WL_OPT_INT, &slow_sleep_us, 0, 1000000,
		  "sleep under the lock on the slow path in us (default 200)" },
		{ 0 },
	};
	wl_init(argc, argv, "two-peaks",
		"an operation with a ~10 us fast path and a slow path (1 in 8) "
		"that sleeps under a global lock.\n--fixed: per-thread refill, "
		"no lock, no sleep.",
		opts, &args);

	for (int i = 0; i < nthreads; i++) {
		threads[i].id = i;
		WL_CHECK_PT(pthread_create(&threads[i].tid, NULL, op_main,
					   &threads[i]));
	}
	uint64_t ops = 0, slow = 0, hist[NBUCKETS] = { 0 };
	for (int i = 0; i < nthreads; i++) {
		pthread_join(threads[i].tid, NULL);
		ops += threads[i].ops;
		slow += threads[i].slow_ops;
		for (int b = 0; b < NBUCKETS; b++)
			hist[b] += threads[i].hist[b];
	}

	fprintf(stderr, "two-peaks: %s mode, %d threads, %llu ops, %llu slow-path\n",
		args.fixed ? "fixed" : "plain", nthreads,
		(unsigned long long)ops, (unsigned long long)slow);
	print_histogram(hist);
	wl_report(&args, ops);
	return 0;
}
