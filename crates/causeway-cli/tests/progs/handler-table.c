/*
 * A request dispatcher that reaches its work only through function pointers, for
 * `causeway rootpath`'s indirect calls (DARC: resolved at run time).
 *
 * do_operation() looks the request's handler up in a table filled at start-up and
 * calls it through the pointer: every 8th request goes to slow_handler() (a ~300 us
 * sleep under a lock, as a refill done under a lock would), the others to
 * fast_handler() (~20 us of CPU in spin_work()). With one thread the latency of
 * do_operation has two peaks; the disassembly of do_operation names neither handler.
 *
 * Prints "ops N slow N" at the end.
 * Usage: handler-table [--seconds S]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct handler {
    const char *name;
    uint64_t (*run)(uint64_t req);
};

/* Filled in main(), not constant: the compiler cannot turn the calls into direct
 * ones. */
struct handler handlers[2];

static pthread_mutex_t refill_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t iters_per_call;
static volatile uint64_t served, slow_served, sink;

__attribute__((noinline)) uint64_t spin_work(uint64_t n)
{
    uint64_t x = 0x9e3779b97f4a7c15ULL ^ n;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

__attribute__((noinline)) static uint64_t fast_handler(uint64_t req)
{
    return spin_work(iters_per_call) + req;
}

__attribute__((noinline)) static uint64_t slow_handler(uint64_t req)
{
    struct timespec ts = { 0, 300 * 1000 };
    pthread_mutex_lock(&refill_lock);
    clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
    slow_served++;
    pthread_mutex_unlock(&refill_lock);
    return req;
}

/* F0. The work after the call keeps it a call (not a tail jump through the
 * pointer). */
__attribute__((noinline)) uint64_t do_operation(uint64_t req)
{
    const struct handler *h = &handlers[req % 8 == 0];
    uint64_t r = h->run(req);
    served++;
    return r ^ served;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    double seconds = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: handler-table [--seconds S]\n");
            return 2;
        }
    }
    handlers[0] = (struct handler){ "fast", fast_handler };
    handlers[1] = (struct handler){ "slow", slow_handler };
    /* Iterations for 20 us: the fastest of a few short runs. */
    double best = 1e18;
    for (int r = 0; r < 5; r++) {
        int64_t t0 = now_ns();
        sink += spin_work(1000000);
        double ns = (double)(now_ns() - t0);
        if (ns < best)
            best = ns;
    }
    iters_per_call = (uint64_t)(20 * 1000.0 * 1000000.0 / best);
    int64_t end = now_ns() + (int64_t)(seconds * 1e9);
    for (uint64_t req = 1; now_ns() < end; req++)
        sink += do_operation(req);
    printf("ops %llu slow %llu\n", (unsigned long long)served,
           (unsigned long long)slow_served);
    return 0;
}
