/*
 * lock-contention - every worker funnels through one global mutex.
 *
 * Problem: N "worker-i" threads update a shared table.  Each update takes
 * one global mutex and does a long critical section (~30 us of CPU),
 * followed by a little work outside the lock (~5 us).  Only one worker
 * can make progress at a time, so adding threads (or cores) does not
 * help; the rest sleep in futex_wait inside pthread_mutex_lock.
 *
 * Expected diagnosis: the workers wait for each other through the mutex.
 * With the workers merged into one vertex, the wait-for graph shows a
 * self-loop knot on "worker-*" whose edges carry the
 * pthread_mutex_lock -> futex wait / pthread_mutex_unlock -> futex wake
 * stacks (update_table being the critical section).
 *
 * --fixed: the table is striped into 64 shards, each with its own lock
 * chosen by the key, so critical sections on different keys run in
 * parallel and throughput scales with the cores.
 */
#include "common.h"

#define MAX_THREADS 64
#define NSHARDS 64

static int nthreads = 4;
static int cs_us = 30;      /* CPU inside the critical section */
static int outside_us = 5;  /* CPU between critical sections */

/* One cache line per shard so the fixed variant has no false sharing. */
struct shard {
	pthread_mutex_t lock;
	uint64_t value;
} __attribute__((aligned(64)));

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shard shards[NSHARDS];

struct worker {
	pthread_t tid;
	int id;
	uint64_t ops;
} __attribute__((aligned(64)));

static struct worker workers[MAX_THREADS];
static struct wl_args args;

static inline uint64_t next_key(uint64_t *state)
{
	/* xorshift64: cheap per-thread key stream */
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

/* The critical section: must run with the lock for `key` held. */
static __attribute__((noinline)) void update_table(struct shard *s, uint64_t key)
{
	wl_burn_ns(cs_us * WL_NS_PER_US);
	s->value += key;
}

static __attribute__((noinline)) void prepare_update(void)
{
	wl_burn_ns(outside_us * WL_NS_PER_US);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	wl_name_thread_idx("worker", w->id);
	uint64_t rng = 0x243f6a8885a308d3ULL * (uint64_t)(w->id + 1);

	while (!wl_time_up(&args)) {
		prepare_update();
		uint64_t key = next_key(&rng);
		struct shard *s = &shards[key % NSHARDS];
		/* The bug: one lock for the whole table. */
		pthread_mutex_t *lock = args.fixed ? &s->lock : &global_lock;

		pthread_mutex_lock(lock);
		update_table(s, key);
		pthread_mutex_unlock(lock);
		w->ops++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const struct wl_opt opts[] = {
		{ "threads", WL_OPT_INT, &nthreads, 1, MAX_THREADS,
		  "worker threads (default 4)" },
		{ "cs-us", WL_OPT_INT, &cs_us, 0, 1000000,
		  "CPU per critical section in us (default 30)" },
		{ "outside-us", WL_OPT_INT, &outside_us, 0, 1000000,
		  "CPU outside the lock in us (default 5)" },
		{ 0 },
	};
	wl_init(argc, argv, "lock-contention",
		"N workers serialised by one global mutex around a long critical "
		"section.\n--fixed: 64 lock shards picked by key.",
		opts, &args);

	for (int i = 0; i < NSHARDS; i++)
		WL_CHECK_PT(pthread_mutex_init(&shards[i].lock, NULL));

	for (int i = 0; i < nthreads; i++) {
		workers[i].id = i;
		WL_CHECK_PT(pthread_create(&workers[i].tid, NULL, worker_main,
					   &workers[i]));
	}
	uint64_t total = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(workers[i].tid, NULL);
		total += workers[i].ops;
	}

	fprintf(stderr, "lock-contention: %s mode, %d threads:",
		args.fixed ? "fixed" : "plain", nthreads);
	for (int i = 0; i < nthreads; i++)
		fprintf(stderr, " %llu", (unsigned long long)workers[i].ops);
	fprintf(stderr, " ops\n");
	wl_report(&args, total);
	return 0;
}
