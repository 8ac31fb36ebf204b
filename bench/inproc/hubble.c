/*
 * Hubble's trace point microbenchmark (OSDI'22, section 8.1, Listing 1) in C.
 *
 * test(depth, work, sum) loops `work` times over a multiply and a divide, then calls
 * itself with depth - 1; it is called with depth 10. Every call has an entry and an
 * exit trace point, so (time per call with tracing - time per call without) / 2 is
 * the cost of one trace point. Built several ways from this one file:
 *
 *   MODE_BASE     no trace points
 *   MODE_TSC      the bare clock read: rdtsc at entry and at exit, into a sink
 *   MODE_CW       libcauseway's inline trace points (cw_enter / cw_exit of causeway.h);
 *                 on/off and clock mode come from CAUSEWAY_START / CAUSEWAY_CLOCK
 *   MODE_CW + CW_CLOCK_COARSE   the same, built to read only the coarse clock
 *   (none)        built with -finstrument-functions or -pg: the hooks come from what
 *                 it is linked with (a no-op hook, libcauseway, uftrace); or built
 *                 with -fpatchable-function-entry=5 and linked with libcauseway, which
 *                 patches the entries at run time
 *
 * Usage: hubble WORK CALLS  - prints "work calls ns_per_call".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>
#ifdef MODE_CW
#include "causeway.h"
#endif

#define NOINSTR __attribute__((no_instrument_function))

#if defined(MODE_TSC)
static volatile uint64_t tsc_sink;
#define TP_ENTER() (tsc_sink = __rdtsc())
#define TP_EXIT() (tsc_sink = __rdtsc())
#elif defined(MODE_CW)
#define TP_ENTER() cw_enter((uintptr_t)test)
#define TP_EXIT() cw_exit()
#else
#define TP_ENTER() ((void)0)
#define TP_EXIT() ((void)0)
#endif

#ifdef PAD
/* Layout sweep (bench/inproc_layouts.sh): built with -falign-functions=16 and
 * -fno-toplevel-reorder, test() follows this function, which starts on a 64-byte
 * boundary and is PAD + a few bytes long, so test() starts 16, 32, 48 or 64 bytes
 * further as PAD is 0, 16, 32 or 48. The same code then runs at four placements
 * against the instruction fetch blocks. */
#define HUBBLE_STR2(x) #x
#define HUBBLE_STR(x) HUBBLE_STR2(x)
__attribute__((aligned(64), noipa, no_instrument_function)) void hubble_pad(void)
{
#if PAD > 0
    __asm__ volatile(".skip " HUBBLE_STR(PAD) ", 0x90");
#endif
}
#endif

/* noipa: no inlining, cloning or interprocedural shortcuts, so every call is a call. */
__attribute__((noipa)) long test(int depth, int work, long sum)
{
    TP_ENTER();
    for (int i = 0; i < work; i++) {
        sum *= i - 1;
        sum /= i + 2;
    }
    if (depth > 1)
        sum = test(depth - 1, work, sum);
    TP_EXIT();
    return sum;
}

static NOINSTR double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int NOINSTR main(int argc, char **argv)
{
    int work = argc > 1 ? atoi(argv[1]) : 0;
    long long calls = argc > 2 ? atoll(argv[2]) : 100000000LL;
    long long iters = calls / 10;
    long sum = 1;
    /* Warm up (first trace point of the thread takes its buffer). */
    for (int i = 0; i < 1000; i++)
        sum += test(10, work, sum);
    double t0 = now_ns();
    for (long long i = 0; i < iters; i++)
        sum += test(10, work, sum);
    double t1 = now_ns();
    printf("%d %lld %.4f %ld\n", work, iters * 10, (t1 - t0) / (double)(iters * 10), sum & 1);
    return 0;
}
