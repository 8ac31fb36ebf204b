/*
 * common.h - tiny shared helpers for the causeway workload zoo.
 *
 * Every workload shares the same command-line contract (--seconds N,
 * --fixed, --help, exit 2 on bad usage), the same timing helpers, a
 * calibrated CPU busy loop and the one-line throughput report that the
 * test harness parses.  Header-only so that each workload is a single
 * translation unit and the Makefile stays trivial.
 */
#ifndef CAUSEWAY_WORKLOADS_COMMON_H
#define CAUSEWAY_WORKLOADS_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define WL_UNUSED __attribute__((unused))

/* ------------------------------------------------------------------ */
/* errors                                                               */
/* ------------------------------------------------------------------ */

/* Fatal runtime error (not a usage error): exit 1. */
WL_UNUSED __attribute__((format(printf, 1, 2), noreturn))
static void wl_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* pthread functions return the error instead of setting errno. */
#define WL_CHECK_PT(call)                                                   \
	do {                                                                \
		int wl_rc_ = (call);                                        \
		if (wl_rc_ != 0)                                            \
			wl_die("%s:%d: %s: %s", __FILE__, __LINE__, #call,  \
			       strerror(wl_rc_));                           \
	} while (0)

/* ------------------------------------------------------------------ */
/* time                                                                 */
/* ------------------------------------------------------------------ */

#define WL_NS_PER_US 1000LL
#define WL_NS_PER_MS 1000000LL
#define WL_NS_PER_S 1000000000LL

static inline int64_t wl_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * WL_NS_PER_S + ts.tv_nsec;
}

static inline struct timespec wl_ts_from_ns(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / WL_NS_PER_S,
			       .tv_nsec = ns % WL_NS_PER_S };
	return ts;
}

/* Relative sleep that survives signal interruptions. */
static inline void wl_sleep_ns(int64_t ns)
{
	struct timespec ts = wl_ts_from_ns(ns);
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* Absolute deadline for pthread_cond_timedwait on a CLOCK_MONOTONIC condvar. */
static inline struct timespec wl_abs_after_ns(int64_t ns)
{
	return wl_ts_from_ns(wl_now_ns() + ns);
}

/* Condvars in the zoo use CLOCK_MONOTONIC so timeouts ignore wall-clock jumps. */
static inline void wl_cond_init(pthread_cond_t *cv)
{
	pthread_condattr_t attr;
	WL_CHECK_PT(pthread_condattr_init(&attr));
	WL_CHECK_PT(pthread_condattr_setclock(&attr, CLOCK_MONOTONIC));
	WL_CHECK_PT(pthread_cond_init(cv, &attr));
	pthread_condattr_destroy(&attr);
}

/* ------------------------------------------------------------------ */
/* calibrated CPU work                                                  */
/* ------------------------------------------------------------------ */

/*
 * Busy work is a fixed number of loop iterations rather than "spin until
 * the clock says N ns passed": a preempted or descheduled thread then
 * really takes longer, exactly like real computation would, which is
 * what an off-CPU analysis has to see.
 */
static double wl_iters_per_ns = 1.0;

WL_UNUSED __attribute__((noinline))
static uint64_t wl_spin_iters(uint64_t iters)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ iters;
	for (uint64_t i = 0; i < iters; i++) {
		/* xorshift step; the empty asm keeps the compiler from
		 * collapsing or vectorising the loop. */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* Burn roughly `ns` nanoseconds of CPU on the calling thread. */
WL_UNUSED static void wl_burn_ns(int64_t ns)
{
	if (ns <= 0)
		return;
	uint64_t r = wl_spin_iters((uint64_t)((double)ns * wl_iters_per_ns));
	__asm__ volatile("" : : "r"(r));
}

/* Best of a few short runs: the fastest run is the least disturbed one. */
static inline void wl_calibrate(void)
{
	const uint64_t probe = 200000;
	int64_t best = INT64_MAX;
	for (int i = 0; i < 5; i++) {
		int64_t t0 = wl_now_ns();
		uint64_t r = wl_spin_iters(probe);
		__asm__ volatile("" : : "r"(r));
		int64_t dt = wl_now_ns() - t0;
		if (dt > 0 && dt < best)
			best = dt;
	}
	if (best != INT64_MAX)
		wl_iters_per_ns = (double)probe / (double)best;
}

/* ------------------------------------------------------------------ */
/* naming                                                               */
/* ------------------------------------------------------------------ */

/* Thread names are what a trace shows; the kernel limit is 15 chars. */
static inline void wl_name_thread(const char *name)
{
	char buf[16];
	snprintf(buf, sizeof buf, "%s", name);
	pthread_setname_np(pthread_self(), buf);
}

static inline void wl_name_thread_idx(const char *prefix, int idx)
{
	char buf[16];
	snprintf(buf, sizeof buf, "%s-%d", prefix, idx);
	pthread_setname_np(pthread_self(), buf);
}

/* Renames the calling thread's comm, i.e. the process name for a main thread. */
static inline void wl_name_process(const char *name)
{
	prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

/* ------------------------------------------------------------------ */
/* argument parsing                                                     */
/* ------------------------------------------------------------------ */

enum wl_opt_type { WL_OPT_INT, WL_OPT_STR };

/* A workload-specific option taking one value ("--name V" or "--name=V"). */
struct wl_opt {
	const char *name; /* without the leading dashes */
	enum wl_opt_type type;
	void *ptr;        /* int * or const char ** */
	int min, max;     /* accepted range for WL_OPT_INT */
	const char *help;
};

struct wl_args {
	double seconds;
	int fixed;
	int64_t start_ns;
	int64_t deadline_ns;
};

static inline void wl_usage(FILE *out, const char *prog, const char *summary,
			    const struct wl_opt *extra)
{
	fprintf(out, "usage: %s [--seconds N] [--fixed]", prog);
	for (const struct wl_opt *o = extra; o && o->name; o++)
		fprintf(out, " [--%s %s]", o->name,
			o->type == WL_OPT_INT ? "N" : "S");
	fprintf(out, "\n\n%s\n\noptions:\n", summary);
	fprintf(out, "  --seconds N         run time in seconds, fractions allowed "
		     "(default 5)\n");
	fprintf(out, "  --fixed             run the fixed variant\n");
	for (const struct wl_opt *o = extra; o && o->name; o++) {
		char lhs[64];
		snprintf(lhs, sizeof lhs, "--%s %s", o->name,
			 o->type == WL_OPT_INT ? "N" : "S");
		fprintf(out, "  %-19s %s\n", lhs, o->help);
	}
	fprintf(out, "  --help              show this text\n\n"
		     "prints one line 'throughput: X ops/s' on stdout; "
		     "diagnostics go to stderr\n");
}

__attribute__((noreturn, format(printf, 2, 3)))
static inline void wl_usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\ntry '%s --help'\n", prog);
	exit(2);
}

static inline int wl_parse_int(const char *prog, const char *name,
			       const char *s, int min, int max)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		wl_usage_error(prog, "--%s: expected an integer in [%d, %d], "
				     "got '%s'", name, min, max, s);
	return (int)v;
}

/* Does the option name `name` (length `nlen`, not terminated) equal `want`? */
static inline int wl_name_is(const char *name, size_t nlen, const char *want)
{
	return strlen(want) == nlen && !strncmp(name, want, nlen);
}

/*
 * Parses argv, then calibrates the busy loop and starts the clock.
 * Usage errors exit 2; --help prints usage and exits 0.
 */
static inline void wl_init(int argc, char **argv, const char *prog,
			   const char *summary, const struct wl_opt *extra,
			   struct wl_args *a)
{
	a->seconds = 5.0;
	a->fixed = 0;

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strncmp(arg, "--", 2) != 0)
			wl_usage_error(prog, "unexpected argument '%s'", arg);
		const char *name = arg + 2;
		const char *eq = strchr(name, '=');
		size_t nlen = eq ? (size_t)(eq - name) : strlen(name);

		if (wl_name_is(name, nlen, "help") || wl_name_is(name, nlen, "fixed")) {
			if (eq)
				wl_usage_error(prog, "option '--%.*s' takes no "
						     "value", (int)nlen, name);
			if (name[0] == 'h') {
				wl_usage(stdout, prog, summary, extra);
				exit(0);
			}
			a->fixed = 1;
			continue;
		}

		/* Everything else takes a value. */
		const struct wl_opt *match = NULL;
		int is_seconds = wl_name_is(name, nlen, "seconds");
		for (const struct wl_opt *o = extra; !is_seconds && o && o->name; o++)
			if (wl_name_is(name, nlen, o->name))
				match = o;
		if (!is_seconds && !match)
			wl_usage_error(prog, "unknown option '%s'", arg);

		const char *val = eq ? eq + 1 : NULL;
		if (!val) {
			if (i + 1 >= argc)
				wl_usage_error(prog, "option '%s' needs a value", arg);
			val = argv[++i];
		}

		if (is_seconds) {
			char *end;
			errno = 0;
			double s = strtod(val, &end);
			if (errno || end == val || *end || !isfinite(s) ||
			    s <= 0 || s > 86400)
				wl_usage_error(prog, "--seconds: expected a positive "
						     "number, got '%s'", val);
			a->seconds = s;
		} else if (match->type == WL_OPT_INT) {
			*(int *)match->ptr = wl_parse_int(prog, match->name, val,
							  match->min, match->max);
		} else {
			*(const char **)match->ptr = val;
		}
	}

	wl_calibrate();
	a->start_ns = wl_now_ns();
	a->deadline_ns = a->start_ns + (int64_t)(a->seconds * (double)WL_NS_PER_S);
}

static inline int wl_time_up(const struct wl_args *a)
{
	return wl_now_ns() >= a->deadline_ns;
}

/* ------------------------------------------------------------------ */
/* reporting                                                            */
/* ------------------------------------------------------------------ */

/* The single stdout line every workload ends with; parsed by test.sh. */
static inline void wl_report(const struct wl_args *a, uint64_t ops)
{
	double secs = (double)(wl_now_ns() - a->start_ns) / (double)WL_NS_PER_S;
	if (secs <= 0)
		secs = 1e-9;
	printf("throughput: %.1f ops/s\n", (double)ops / secs);
	fflush(stdout);
}

#endif /* CAUSEWAY_WORKLOADS_COMMON_H */
