/*
 * spin-flag - a thread waits for a flag in a sched_yield() loop.
 *
 * Problem (Argus RepeatedYield): every round, the "waiter" thread hands a
 * job to background "helper-i" threads (default 2, running 10 nice levels
 * below the waiter, as batch helpers often do) and then waits for the
 * result with
 *     while (!done) sched_yield();
 * The helpers need ~10 ms of CPU each before the last one raises the flag.
 * The waiter never blocks: it stays runnable and keeps its core busy.
 * sched_yield() only helps threads queued on the *same* CPU, and the load
 * balancer, which balances weight, sees one nice-0 spinner as heavier
 * than both nice-10 helpers together -- so the helpers end up sharing one
 * core while the spinner holds the other (a priority inversion, like the
 * spinning-cursor cases Argus studies).  With equal priorities the effect
 * is much weaker on an EEVDF kernel and varies from run to run.
 *
 * Expected diagnosis: RepeatedYield on "waiter" -- a long on-CPU stretch
 * dominated by the sched_yield syscall (spin_until_done) that ends when
 * the data flag (`done`) is written by the last helper; the helpers'
 * compute_part is the real work on the critical path.
 *
 * --fixed: the waiter sleeps on a condition variable (futex) that the last
 * helper signals, so its core is free for the helpers.  CPU time used
 * (getrusage) is printed to stderr for comparison.
 */
#include "common.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

#define MAX_HELPERS 32

static int nhelpers = 2;
/* CPU per helper per round.  Rounds much shorter than the scheduler tick
 * (4 ms here) would let wake-up placement noise dominate both variants. */
static int helper_us = 10000;
static int helper_nice = 10;
static int waiter_us = 20;   /* CPU the waiter spends on each result */

static struct wl_args args;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_cv;  /* waiter -> helpers: round `job` started */
static pthread_cond_t done_cv; /* last helper -> waiter, --fixed only */
static uint64_t job;           /* under lock */
static int quit;               /* under lock */
static _Atomic int parts_left; /* helpers still working on this round */
static _Atomic uint64_t done;  /* the data flag: last round finished */

static uint64_t rounds, yields;

struct helper {
	pthread_t tid;
	int id;
} __attribute__((aligned(64)));

static struct helper helpers[MAX_HELPERS];

static __attribute__((noinline)) void compute_part(void)
{
	wl_burn_ns(helper_us * WL_NS_PER_US);
}

static __attribute__((noinline)) void use_result(void)
{
	wl_burn_ns(waiter_us * WL_NS_PER_US);
}

/* The bug: poll the flag, yielding the CPU between checks. */
static __attribute__((noinline)) void spin_until_done(uint64_t round)
{
	while (atomic_load_explicit(&done, memory_order_acquire) != round) {
		sched_yield();
		yields++;
	}
}

static __attribute__((noinline)) void sleep_until_done(uint64_t round)
{
	pthread_mutex_lock(&lock);
	while (atomic_load_explicit(&done, memory_order_relaxed) != round)
		pthread_cond_wait(&done_cv, &lock);
	pthread_mutex_unlock(&lock);
}

static void *waiter_main(void *unused)
{
	(void)unused;
	wl_name_thread("waiter");

	for (uint64_t round = 1;; round++) {
		pthread_mutex_lock(&lock);
		if (wl_time_up(&args)) {
			quit = 1;
			pthread_cond_broadcast(&job_cv);
			pthread_mutex_unlock(&lock);
			break;
		}
		atomic_store(&parts_left, nhelpers);
		job = round;
		pthread_cond_broadcast(&job_cv);
		pthread_mutex_unlock(&lock);

		if (args.fixed)
			sleep_until_done(round);
		else
			spin_until_done(round);
		use_result();
		rounds++;
	}
	return NULL;
}

static void *helper_main(void *arg)
{
	struct helper *h = arg;
	wl_name_thread_idx("helper", h->id);
	/* Background priority for the helpers: nice is per-thread on Linux,
	 * and relative to the process so that running under nice(1) keeps
	 * the gap to the waiter. */
	errno = 0;
	int base = getpriority(PRIO_PROCESS, 0);
	if (errno == 0 && helper_nice > 0) {
		int nice = base + helper_nice > 19 ? 19 : base + helper_nice;
		setpriority(PRIO_PROCESS, (id_t)gettid(), nice);
	}
	uint64_t served = 0;

	for (;;) {
		pthread_mutex_lock(&lock);
		while (job == served && !quit)
			pthread_cond_wait(&job_cv, &lock);
		if (quit) {
			pthread_mutex_unlock(&lock);
			break;
		}
		served = job;
		pthread_mutex_unlock(&lock);

		compute_part();
		if (atomic_fetch_sub(&parts_left, 1) != 1)
			continue; /* not the last one */

		if (args.fixed) {
			pthread_mutex_lock(&lock);
			atomic_store_explicit(&done, served, memory_order_relaxed);
			pthread_cond_signal(&done_cv);
			pthread_mutex_unlock(&lock);
		} else {
			/* Just raise the flag; the waiter is polling it. */
			atomic_store_explicit(&done, served, memory_order_release);
		}
	}
	return NULL;
}

static double tv_secs(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	const struct wl_opt opts[] = {
		{ "helpers", WL_OPT_INT, &nhelpers, 1, MAX_HELPERS,
		  "helper threads (default 2)" },
		{ "helper-us", WL_OPT_INT, &helper_us, 0, 1000000,
		  "helper CPU per round in us (default 10000)" },
		{ "helper-nice", WL_OPT_INT, &helper_nice, 0, 19,
		  "helpers run N nice levels below the waiter (default 10)" },
		{ 0 },
	};
	wl_init(argc, argv, "spin-flag",
		"a waiter polls a flag with sched_yield() while background "
		"helpers compute it.\n--fixed: the waiter sleeps on a condvar.",
		opts, &args);

	wl_cond_init(&job_cv);
	wl_cond_init(&done_cv);
	for (int i = 0; i < nhelpers; i++) {
		helpers[i].id = i;
		WL_CHECK_PT(pthread_create(&helpers[i].tid, NULL, helper_main,
					   &helpers[i]));
	}
	pthread_t waiter;
	WL_CHECK_PT(pthread_create(&waiter, NULL, waiter_main, NULL));
	pthread_join(waiter, NULL);
	for (int i = 0; i < nhelpers; i++)
		pthread_join(helpers[i].tid, NULL);

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double wall = (double)(wl_now_ns() - args.start_ns) / 1e9;
	double cpu = tv_secs(ru.ru_utime) + tv_secs(ru.ru_stime);
	fprintf(stderr, "spin-flag: %s mode, %d helpers, %llu rounds, %llu yields, "
			"CPU %.2f s (user %.2f, sys %.2f) = %.2f cores, "
			"%.0f us CPU per round\n",
		args.fixed ? "fixed" : "plain", nhelpers,
		(unsigned long long)rounds, (unsigned long long)yields, cpu,
		tv_secs(ru.ru_utime), tv_secs(ru.ru_stime), cpu / wall,
		rounds ? cpu * 1e6 / (double)rounds : 0.0);
	wl_report(&args, rounds);
	return 0;
}
