/*
 * spin-flag - a thread waits for a flag in a sched_yield() loop.
 *
 * Problem (Argus RepeatedYield): each "waiter-i" hands a job to its
 * "setter-i" and then waits for the result with
 *     while (!done) sched_yield();
 * The setter needs a few ms of CPU before it sets the flag.  The waiter
 * never blocks: it stays runnable, bouncing in and out of the kernel, and
 * steals CPU time from the setters it is waiting for.  With more runnable
 * threads than cores (default: 2 pairs = 4 threads on 2 cores) that slows
 * every round down.
 *
 * Expected diagnosis: RepeatedYield on the waiter threads -- a long
 * on-CPU stretch dominated by the sched_yield syscall that ends when the
 * data flag (the `done` word) is written by the setter; the setter is the
 * real work.
 *
 * --fixed: the waiter sleeps on a condition variable (futex) that the
 * setter signals, so it uses no CPU while waiting and the setters get the
 * cores.  CPU time used (getrusage) is printed to stderr for comparison.
 */
#include "common.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

#define MAX_PAIRS 32

static int npairs = 2;
static int setter_us = 2000; /* CPU the setter spends before setting the flag */
static int waiter_us = 20;   /* CPU the waiter spends on each result */
static int setter_nice = 0;

struct pair {
	int id;
	pthread_t waiter, setter;
	pthread_mutex_t lock;
	pthread_cond_t job_cv;  /* waiter -> setter: a new round */
	pthread_cond_t done_cv; /* setter -> waiter: only used by --fixed */
	uint64_t request;       /* round number requested (under lock) */
	int quit;               /* under lock */
	_Atomic uint64_t done;  /* the data flag: last round finished */
	uint64_t rounds;
	uint64_t yields;
} __attribute__((aligned(64)));

static struct pair pairs[MAX_PAIRS];
static struct wl_args args;

static __attribute__((noinline)) void compute_result(void)
{
	wl_burn_ns(setter_us * WL_NS_PER_US);
}

static __attribute__((noinline)) void use_result(void)
{
	wl_burn_ns(waiter_us * WL_NS_PER_US);
}

/* The bug: poll the flag, yielding the CPU between checks. */
static __attribute__((noinline)) void spin_until_done(struct pair *p, uint64_t round)
{
	while (atomic_load_explicit(&p->done, memory_order_acquire) != round) {
		sched_yield();
		p->yields++;
	}
}

static __attribute__((noinline)) void sleep_until_done(struct pair *p, uint64_t round)
{
	pthread_mutex_lock(&p->lock);
	while (atomic_load_explicit(&p->done, memory_order_relaxed) != round)
		pthread_cond_wait(&p->done_cv, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

static void *waiter_main(void *arg)
{
	struct pair *p = arg;
	wl_name_thread_idx("waiter", p->id);

	for (uint64_t round = 1;; round++) {
		pthread_mutex_lock(&p->lock);
		if (wl_time_up(&args)) {
			p->quit = 1;
			pthread_cond_signal(&p->job_cv);
			pthread_mutex_unlock(&p->lock);
			break;
		}
		p->request = round;
		pthread_cond_signal(&p->job_cv);
		pthread_mutex_unlock(&p->lock);

		if (args.fixed)
			sleep_until_done(p, round);
		else
			spin_until_done(p, round);
		use_result();
		p->rounds++;
	}
	return NULL;
}

static void *setter_main(void *arg)
{
	struct pair *p = arg;
	wl_name_thread_idx("setter", p->id);
	if (setter_nice)
		setpriority(PRIO_PROCESS, (id_t)gettid(), setter_nice);
	uint64_t served = 0;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		while (p->request == served && !p->quit)
			pthread_cond_wait(&p->job_cv, &p->lock);
		if (p->quit) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		served = p->request;
		pthread_mutex_unlock(&p->lock);

		compute_result();

		if (args.fixed) {
			pthread_mutex_lock(&p->lock);
			atomic_store_explicit(&p->done, served, memory_order_relaxed);
			pthread_cond_signal(&p->done_cv);
			pthread_mutex_unlock(&p->lock);
		} else {
			/* Just raise the flag; the waiter is polling it. */
			atomic_store_explicit(&p->done, served, memory_order_release);
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
		{ "pairs", WL_OPT_INT, &npairs, 1, MAX_PAIRS,
		  "waiter/setter pairs (default 2)" },
		{ "setter-us", WL_OPT_INT, &setter_us, 0, 1000000,
		  "setter CPU per round in us (default 2000)" },
		{ "setter-nice", WL_OPT_INT, &setter_nice, 0, 19,
		  "nice value of the setter threads (default 0)" },
		{ 0 },
	};
	wl_init(argc, argv, "spin-flag",
		"waiters poll a flag with sched_yield() while setters compute "
		"it.\n--fixed: waiters sleep on a condvar.",
		opts, &args);

	for (int i = 0; i < npairs; i++) {
		struct pair *p = &pairs[i];
		p->id = i;
		WL_CHECK_PT(pthread_mutex_init(&p->lock, NULL));
		wl_cond_init(&p->job_cv);
		wl_cond_init(&p->done_cv);
		WL_CHECK_PT(pthread_create(&p->setter, NULL, setter_main, p));
		WL_CHECK_PT(pthread_create(&p->waiter, NULL, waiter_main, p));
	}
	uint64_t rounds = 0, yields = 0;
	for (int i = 0; i < npairs; i++) {
		pthread_join(pairs[i].waiter, NULL);
		pthread_join(pairs[i].setter, NULL);
		rounds += pairs[i].rounds;
		yields += pairs[i].yields;
	}

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double wall = (double)(wl_now_ns() - args.start_ns) / 1e9;
	double cpu = tv_secs(ru.ru_utime) + tv_secs(ru.ru_stime);
	fprintf(stderr, "spin-flag: %s mode, %d pairs, %llu rounds, %llu yields, "
			"CPU %.2f s (user %.2f, sys %.2f) = %.2f cores, "
			"%.1f us CPU per round\n",
		args.fixed ? "fixed" : "plain", npairs,
		(unsigned long long)rounds, (unsigned long long)yields, cpu,
		tv_secs(ru.ru_utime), tv_secs(ru.ru_stime), cpu / wall,
		rounds ? cpu * 1e6 / (double)rounds : 0.0);
	wl_report(&args, rounds);
	return 0;
}
