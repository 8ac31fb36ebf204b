/*
 * Keyed trace points (causeway.h, CW_KEYED): CW_SPAN sites behind patched jumps.
 * Calls top() (which calls leaf() twice) 100 times, 1000 times more on a second
 * thread, 50 times after cw_stop (not traced), 100 times after cw_start; then dumps
 * and prints one JSON line: the site bytes of top()'s entry trace point while on and
 * while off, the number of keyed sites, the sum, and the trace. With the argument
 * "stay-off" it never calls cw_start, so under CAUSEWAY_START=off nothing is traced.
 */
#define CW_KEYED
#include "causeway.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) long leaf(long x)
{
    CW_SPAN("leaf");
    return x * 3 + 1;
}

__attribute__((noinline)) long top(long x)
{
    CW_SPAN("top");
    return leaf(x) + leaf(x + 1);
}

static void *worker(void *arg)
{
    long *out = arg;
    for (int i = 0; i < 1000; i++)
        *out += top(i);
    return NULL;
}

int main(int argc, char **argv)
{
    int stay_off = argc > 1 && strcmp(argv[1], "stay-off") == 0;
    long s = 0;
    for (int i = 0; i < 100; i++)
        s += top(i);
    pthread_t th;
    long ws = 0;
    pthread_create(&th, NULL, worker, &ws);
    pthread_join(th, NULL);
    cw_stop();
    for (int i = 0; i < 50; i++)
        s += top(i);
    if (!stay_off)
        cw_start();
    for (int i = 0; i < 100; i++)
        s += top(i);
    int dumped = cw_dump("keyed");
    uint64_t skipped = 0;
    cw_patch_sites(&skipped);
    printf("{\"keys\":%llu,\"skipped\":%llu,\"s\":%ld,\"ws\":%ld,\"dumped\":%d,\"trace\":\"%s\"}\n",
           (unsigned long long)cw_keyed_sites(), (unsigned long long)skipped, s, ws, dumped,
           cw_last_dump() ? cw_last_dump() : "");
    return 0;
}
