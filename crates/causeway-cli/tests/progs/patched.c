/*
 * Built with -fpatchable-function-entry=5: libcauseway patches the entries at run time.
 * Checks what the test cannot see from outside and prints one JSON line:
 * - the entry bytes: five one-byte nops before the library starts (checked from a
 *   constructor that runs first), a jump to the stub while tracing, one 5-byte nop
 *   after cw_stop;
 * - arguments and results survive the trampolines: integer, double, variadic, struct;
 * - a longjmp out of three patched frames, then more calls (the shadow stack drops
 *   the skipped frames);
 * - a second thread calling the same functions, and a third whose first traced call
 *   takes doubles (a thread's first call takes the trampolines' slow path, which runs
 *   C library code: its vector registers must survive it);
 * then dumps (cw_dump) and exits. The test reads the dump with `causeway calls`.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "causeway.h"

#define NOPATCH __attribute__((patchable_function_entry(0, 0), noinline))
#define TRACED __attribute__((noinline, noipa))

static uint8_t before[5];

/* Priority 101 is the library's constructor: 100 runs before it. */
__attribute__((constructor(100))) NOPATCH static void look_before(void);

TRACED long leaf_c(long x) { return x * 3 + 1; }
TRACED long mid_b(long x) { return leaf_c(x) + leaf_c(x + 1); }
TRACED long top_a(long x) { return mid_b(x) - 1; }
TRACED double scale(double a, double b, int n) { return a * b + n; }
TRACED long sum_va(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    long s = 0;
    for (int i = 0; i < n; i++)
        s += va_arg(ap, long);
    va_end(ap);
    return s;
}
TRACED double sum_vd(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    double s = 0;
    for (int i = 0; i < n; i++)
        s += va_arg(ap, double);
    va_end(ap);
    return s;
}
struct big {
    long a, b, c;
};
TRACED struct big make_big(long x) { return (struct big){x, x + 1, x + 2}; }

static jmp_buf env;
TRACED void jump_deep(void) { longjmp(env, 1); }
TRACED void jump_mid(void) { jump_deep(); }
TRACED void jump_top(void) { jump_mid(); }

NOPATCH static void look_before(void) { memcpy(before, (void *)top_a, 5); }

NOPATCH static void *worker(void *arg)
{
    long *out = arg;
    for (int i = 0; i < 1000; i++)
        *out += top_a(i);
    return NULL;
}

NOPATCH static void *first_is_double(void *arg)
{
    *(double *)arg = scale(0.5, 4.0, 1);
    return NULL;
}

NOPATCH static void hex(char *dst, const uint8_t *b) { sprintf(dst, "%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4]); }

NOPATCH int main(void)
{
    char b0[11], b_on[11], b_off[11];
    uint8_t on[5], off[5];
    hex(b0, before);
    memcpy(on, (void *)top_a, 5);
    hex(b_on, on);
    long s = 0;
    for (int i = 0; i < 100; i++)
        s += top_a(i);
    double d = scale(1.5, 2.0, 3);
    long va = sum_va(5, 1L, 2L, 3L, 4L, 5L);
    double vd = sum_vd(3, 0.5, 0.25, 0.125);
    struct big bg = make_big(40);
    int jumped = 0;
    if (setjmp(env) == 0)
        jump_top();
    else
        jumped = 1;
    for (int i = 0; i < 100; i++)
        s += top_a(i);
    pthread_t th;
    long ws = 0;
    pthread_create(&th, NULL, worker, &ws);
    pthread_join(th, NULL);
    double d2 = 0;
    pthread_create(&th, NULL, first_is_double, &d2);
    pthread_join(th, NULL);
    int dumped = cw_dump("patched");
    cw_stop();
    memcpy(off, (void *)top_a, 5);
    hex(b_off, off);
    long quiet = top_a(7); /* not traced: after the dump, and off */
    cw_start();
    uint64_t skipped = 0;
    uint64_t sites = cw_patch_sites(&skipped);
    printf("{\"before\":\"%s\",\"on\":\"%s\",\"off\":\"%s\",\"s\":%ld,\"ws\":%ld,\"d\":%.4f,"
           "\"d2\":%.4f,\"va\":%ld,\"vd\":%.4f,\"big\":[%ld,%ld,%ld],\"jumped\":%d,\"quiet\":%ld,"
           "\"sites\":%llu,\"skipped\":%llu,\"dumped\":%d,\"trace\":\"%s\"}\n",
           b0, b_on, b_off, s, ws, d, d2, va, vd, bg.a, bg.b, bg.c, jumped, quiet,
           (unsigned long long)sites, (unsigned long long)skipped, dumped,
           cw_last_dump() ? cw_last_dump() : "");
    return 0;
}
