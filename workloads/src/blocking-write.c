/*
 * blocking-write - a consumer that fsync()s every request (wPerf Figure 1).
 *
 * Problem: a "producer" thread builds requests (~10 us of CPU each) and
 * hands them through a bounded queue (mutex + condvar, capacity 16) to a
 * "consumer" thread that encodes each 4 KiB request (~10 us), writes it to
 * a log file and calls fsync() after every single write.  The consumer and
 * the disk take turns: while the disk flushes, the consumer sleeps, and
 * while the consumer works, the disk is idle.  Neither is saturated, yet
 * together they bound throughput.
 *
 * Expected diagnosis: the wait-for graph has a knot {consumer, disk}; the
 * consumer -> disk edge carries the fsync() stack, disk -> consumer is the
 * device waiting for new I/O (not optimisable).  The producer waits
 * longest (blocked on the full queue) but it is outside the knot and is
 * NOT the bottleneck.
 *
 * --fixed: the consumer drains every queued request, writes them all and
 * calls fsync() once per batch (group commit), so the flush cost is shared
 * by up to 16 requests and the consumer's CPU work becomes the limit.
 *
 * The log file lives in --dir (default: the current directory if writable,
 * else /tmp, else /var/tmp -- skipping tmpfs, where fsync is a no-op) and
 * is removed at exit.
 */
#include "common.h"
#include "io.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/statfs.h>
#include <unistd.h>

#define REQ_SIZE 4096
#define QUEUE_CAP 16
/* The log is a 16 MiB ring so a long run never fills the disk. */
#define LOG_SLOTS 4096

static int produce_us = 10; /* producer CPU per request */
/* Consumer CPU per request (wPerf's funB); kept below the fsync cost so the
 * flush dominates the consumer's cycle. */
static int encode_us = 10;

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	unsigned head, count;
	int closed;
	unsigned char slot[QUEUE_CAP][REQ_SIZE];
};

static struct queue q = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.not_empty = PTHREAD_COND_INITIALIZER,
	.not_full = PTHREAD_COND_INITIALIZER,
};

static struct wl_args args;
static int log_fd = -1;

static uint64_t persisted; /* written by the consumer only */
static uint64_t fsync_calls;
static int64_t fsync_ns;

/* ---- log file ---------------------------------------------------- */

static void open_log(const char *dir)
{
	log_fd = wl_log_create("blocking-write", dir);
}

static __attribute__((noinline)) void write_record(const unsigned char *rec,
						  uint64_t seq)
{
	wl_burn_ns(encode_us * WL_NS_PER_US); /* checksum / framing stand-in */
	off_t off = (off_t)(seq % LOG_SLOTS) * REQ_SIZE;
	ssize_t n = pwrite(log_fd, rec, REQ_SIZE, off);
	if (n != REQ_SIZE)
		wl_die("blocking-write: write: %s", n < 0 ? strerror(errno) : "short");
}

/* Kept out of line so the flush is an obvious frame in stacks. */
static __attribute__((noinline)) void flush_log(void)
{
	int64_t t0 = wl_now_ns();
	if (wl_flush(log_fd, 0) != 0)
		wl_die("blocking-write: fsync: %s", strerror(errno));
	fsync_ns += wl_now_ns() - t0;
	fsync_calls++;
}

/*
 * The slow variant (--sync-index N): every N requests the consumer also
 * rewrites an index record at the start of the log and fdatasync()s it, one
 * more disk round trip from a call site the plain run does not have (what
 * `causeway compare` is tested on).
 */
static int index_every;

static __attribute__((noinline)) void sync_index(uint64_t seq)
{
	if (pwrite(log_fd, &seq, sizeof seq, 0) != (ssize_t)sizeof seq)
		wl_die("blocking-write: pwrite: %s", strerror(errno));
	if (fdatasync(log_fd) != 0)
		wl_die("blocking-write: fdatasync: %s", strerror(errno));
}

/* ---- producer ---------------------------------------------------- */

static __attribute__((noinline)) void build_request(unsigned char *req, uint64_t seq)
{
	wl_burn_ns(produce_us * WL_NS_PER_US); /* parsing / validation stand-in */
	memset(req, (int)(seq & 0xff), REQ_SIZE);
	memcpy(req, &seq, sizeof seq);
}

static void *producer_main(void *unused)
{
	(void)unused;
	wl_name_thread("producer");
	unsigned char req[REQ_SIZE];

	for (uint64_t seq = 0; !wl_time_up(&args); seq++) {
		build_request(req, seq);

		pthread_mutex_lock(&q.lock);
		while (q.count == QUEUE_CAP)
			pthread_cond_wait(&q.not_full, &q.lock);
		memcpy(q.slot[(q.head + q.count) % QUEUE_CAP], req, REQ_SIZE);
		q.count++;
		pthread_cond_signal(&q.not_empty);
		pthread_mutex_unlock(&q.lock);
	}

	pthread_mutex_lock(&q.lock);
	q.closed = 1;
	pthread_cond_signal(&q.not_empty);
	pthread_mutex_unlock(&q.lock);
	return NULL;
}

/* ---- consumer ---------------------------------------------------- */

/*
 * Takes up to `max` requests out of the queue into `out`; returns 0 once
 * the producer has closed the queue and it is empty.
 */
static unsigned dequeue(unsigned char (*out)[REQ_SIZE], unsigned max)
{
	pthread_mutex_lock(&q.lock);
	while (q.count == 0 && !q.closed)
		pthread_cond_wait(&q.not_empty, &q.lock);
	unsigned n = q.count < max ? q.count : max;
	for (unsigned i = 0; i < n; i++) {
		memcpy(out[i], q.slot[q.head], REQ_SIZE);
		q.head = (q.head + 1) % QUEUE_CAP;
	}
	q.count -= n;
	if (n)
		pthread_cond_signal(&q.not_full);
	pthread_mutex_unlock(&q.lock);
	return n;
}

static void *consumer_main(void *unused)
{
	(void)unused;
	wl_name_thread("consumer");
	static unsigned char batch[QUEUE_CAP][REQ_SIZE];
	/* The bug: one request per round trip to the disk. */
	unsigned max = args.fixed ? QUEUE_CAP : 1;

	for (;;) {
		unsigned n = dequeue(batch, max);
		if (n == 0)
			break;
		for (unsigned i = 0; i < n; i++)
			write_record(batch[i], persisted + i);
		flush_log();
		if (index_every && (persisted / (uint64_t)index_every !=
				    (persisted + n) / (uint64_t)index_every))
			sync_index(persisted + n);
		persisted += n;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	const struct wl_opt opts[] = {
		WL_SYNC_US_OPT,
		{ "dir", WL_OPT_STR, &dir, 0, 0,
		  "directory for the log file (default: ., /tmp or /var/tmp, "
		  "not tmpfs)" },
		{ "produce-us", WL_OPT_INT, &produce_us, 0, 1000000,
		  "producer CPU work per request in us (default 10)" },
		{ "encode-us", WL_OPT_INT, &encode_us, 0, 1000000,
		  "consumer CPU work per request in us (default 10)" },
		{ "sync-index", WL_OPT_INT, &index_every, 0, 1000000,
		  "slow variant: also pwrite() and fdatasync() an index record "
		  "every N requests (default 0: never)" },
		{ 0 },
	};
	wl_init(argc, argv, "blocking-write",
		"producer -> bounded queue -> consumer that write()s and fsync()s "
		"every 4 KiB request.\n--fixed: group commit, one fsync per "
		"drained batch.",
		opts, &args);

	open_log(wl_log_dir("blocking-write", dir));

	pthread_t prod, cons;
	WL_CHECK_PT(pthread_create(&cons, NULL, consumer_main, NULL));
	WL_CHECK_PT(pthread_create(&prod, NULL, producer_main, NULL));
	pthread_join(prod, NULL);
	pthread_join(cons, NULL);

	close(log_fd);
	unlink(wl_log_path());

	fprintf(stderr, "blocking-write: %s mode, file %s, %llu requests, "
			"%llu fsyncs, avg fsync %.1f us, avg batch %.1f\n",
		args.fixed ? "fixed" : "plain", wl_log_path(),
		(unsigned long long)persisted, (unsigned long long)fsync_calls,
		fsync_calls ? (double)fsync_ns / (double)fsync_calls / 1e3 : 0.0,
		fsync_calls ? (double)persisted / (double)fsync_calls : 0.0);
	if (fsync_calls && fsync_ns / (int64_t)fsync_calls < 20000)
		fprintf(stderr, "blocking-write: warning: fsync averages under "
				"20 us; it probably does not reach a device\n");
	wl_report(&args, persisted);
	return 0;
}
