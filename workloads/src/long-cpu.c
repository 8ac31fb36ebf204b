/*
 * long-cpu - an event loop runs a long computation inline.
 *
 * Problem (Argus LongRunning): a "sender" thread feeds small inputs over a
 * Unix datagram socketpair to an "event-loop" thread, one every 100 us.
 * Most inputs take a few microseconds to handle, but every 500th input
 * asks for a long computation (~50 ms), which the loop runs inline.  While
 * it computes, nothing else is handled: inputs pile up in the socket, the
 * socket fills (a few datagrams), and the sender blocks in sendto().
 *
 * Expected diagnosis: LongRunning on "event-loop" -- a long on-CPU
 * stretch in long_computation() reached from handle_input(), the slice
 * going back to the sender's datagram that requested it; meanwhile the
 * sender waits on the event loop (socket send buffer full) and inputs
 * see up to ~50 ms of latency.
 *
 * --fixed: the event loop hands the long computation to a "heavy-worker"
 * thread through a queue and goes straight back to its socket, so the
 * loop keeps responding.  Throughput counts inputs handled (answered or
 * dispatched) by the loop per second; input latency (send -> handled) is
 * printed to stderr.
 */
#include "common.h"

#include <sys/socket.h>
#include <unistd.h>

static int period_us = 100;    /* sender: one input every period */
static int heavy_every = 500;  /* every Nth input is long */
static int heavy_ms = 50;      /* CPU of a long input */
static int light_us = 5;       /* CPU of a normal input */

static struct wl_args args;
static int sock[2]; /* [0] sender side, [1] event-loop side */

enum kind { INPUT_LIGHT, INPUT_HEAVY, INPUT_QUIT };

struct input {
	uint64_t seq;
	int64_t sent_ns;
	int kind;
};

/* ---- heavy-worker (--fixed) -------------------------------------- */

#define JOBQ_CAP 64

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	uint64_t jobs[JOBQ_CAP];
	unsigned head, count;
	int quit;
	uint64_t dropped;
} jobq = { .lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static uint64_t heavy_done;

static __attribute__((noinline)) void long_computation(uint64_t seq)
{
	(void)seq;
	wl_burn_ns(heavy_ms * WL_NS_PER_MS);
}

static void *heavy_worker_main(void *unused)
{
	(void)unused;
	wl_name_thread("heavy-worker");
	for (;;) {
		pthread_mutex_lock(&jobq.lock);
		while (jobq.count == 0 && !jobq.quit)
			pthread_cond_wait(&jobq.cv, &jobq.lock);
		if (jobq.quit) {
			/* Unstarted jobs are dropped: the run is over. */
			jobq.dropped += jobq.count;
			pthread_mutex_unlock(&jobq.lock);
			break;
		}
		uint64_t seq = jobq.jobs[jobq.head];
		jobq.head = (jobq.head + 1) % JOBQ_CAP;
		jobq.count--;
		pthread_mutex_unlock(&jobq.lock);

		long_computation(seq);
		heavy_done++;
	}
	return NULL;
}

static void offload(uint64_t seq)
{
	pthread_mutex_lock(&jobq.lock);
	if (jobq.count == JOBQ_CAP) {
		jobq.dropped++; /* never happens with the default rates */
	} else {
		jobq.jobs[(jobq.head + jobq.count) % JOBQ_CAP] = seq;
		jobq.count++;
		pthread_cond_signal(&jobq.cv);
	}
	pthread_mutex_unlock(&jobq.lock);
}

/* ---- event loop -------------------------------------------------- */

static uint64_t handled;
static int64_t lat_sum_ns, lat_max_ns;

static __attribute__((noinline)) void handle_light(void)
{
	wl_burn_ns(light_us * WL_NS_PER_US);
}

static __attribute__((noinline)) void handle_input(const struct input *in)
{
	if (in->kind == INPUT_HEAVY) {
		if (args.fixed)
			offload(in->seq);
		else
			long_computation(in->seq); /* the bug: inline */
	} else {
		handle_light();
	}
	int64_t lat = wl_now_ns() - in->sent_ns;
	lat_sum_ns += lat;
	if (lat > lat_max_ns)
		lat_max_ns = lat;
	handled++;
}

static void *event_loop_main(void *unused)
{
	(void)unused;
	wl_name_thread("event-loop");
	for (;;) {
		struct input in;
		ssize_t n = recv(sock[1], &in, sizeof in, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof in)
			wl_die("long-cpu: recv: %s", n < 0 ? strerror(errno) : "short");
		if (in.kind == INPUT_QUIT)
			break;
		handle_input(&in);
	}
	return NULL;
}

/* ---- sender ------------------------------------------------------ */

static void send_input(uint64_t seq, int kind)
{
	struct input in = { .seq = seq, .sent_ns = wl_now_ns(), .kind = kind };
	ssize_t n;
	/* Blocks while the loop's socket queue is full. */
	while ((n = send(sock[0], &in, sizeof in, 0)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof in)
		wl_die("long-cpu: send: %s", n < 0 ? strerror(errno) : "short");
}

static void *sender_main(void *unused)
{
	(void)unused;
	wl_name_thread("sender");
	/* Precise pacing: the default 50 us timer slack would stretch it. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	int64_t next = wl_now_ns();
	for (uint64_t seq = 1; !wl_time_up(&args); seq++) {
		send_input(seq, seq % (uint64_t)heavy_every == 0 ? INPUT_HEAVY
							       : INPUT_LIGHT);
		/* Fixed input rate, but no catching up on time lost while
		 * blocked: a stalled source does not produce a burst later. */
		next += period_us * WL_NS_PER_US;
		int64_t now = wl_now_ns();
		if (next < now)
			next = now;
		else
			wl_sleep_ns(next - now);
	}
	send_input(0, INPUT_QUIT);
	return NULL;
}

int main(int argc, char **argv)
{
	const struct wl_opt opts[] = {
		{ "period-us", WL_OPT_INT, &period_us, 1, 1000000,
		  "sender: one input every N us (default 100)" },
		{ "heavy-every", WL_OPT_INT, &heavy_every, 1, 1000000,
		  "every Nth input is a long one (default 500)" },
		{ "heavy-ms", WL_OPT_INT, &heavy_ms, 0, 10000,
		  "CPU of a long input in ms (default 50)" },
		{ 0 },
	};
	wl_init(argc, argv, "long-cpu",
		"an event loop runs a ~50 ms computation inline for some inputs."
		"\n--fixed: the computation goes to a worker thread.",
		opts, &args);

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sock) != 0)
		wl_die("long-cpu: socketpair: %s", strerror(errno));

	pthread_t loop, sender, worker;
	if (args.fixed)
		WL_CHECK_PT(pthread_create(&worker, NULL, heavy_worker_main, NULL));
	WL_CHECK_PT(pthread_create(&loop, NULL, event_loop_main, NULL));
	WL_CHECK_PT(pthread_create(&sender, NULL, sender_main, NULL));
	pthread_join(sender, NULL);
	pthread_join(loop, NULL);
	if (args.fixed) {
		pthread_mutex_lock(&jobq.lock);
		jobq.quit = 1;
		pthread_cond_signal(&jobq.cv);
		pthread_mutex_unlock(&jobq.lock);
		pthread_join(worker, NULL);
	}
	close(sock[0]);
	close(sock[1]);

	fprintf(stderr, "long-cpu: %s mode, %llu inputs handled, latency avg "
			"%.3f ms max %.3f ms",
		args.fixed ? "fixed" : "plain", (unsigned long long)handled,
		handled ? (double)lat_sum_ns / (double)handled / 1e6 : 0.0,
		(double)lat_max_ns / 1e6);
	if (args.fixed)
		fprintf(stderr, ", %llu long computations finished by the worker, "
				"%llu dropped at exit",
			(unsigned long long)heavy_done,
			(unsigned long long)jobq.dropped);
	fputc('\n', stderr);
	wl_report(&args, handled);
	return 0;
}
