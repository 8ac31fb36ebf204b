/*
 * Trace points in libraries loaded with dlopen after the library started (argv[1],
 * argv[2]: two builds of keyed_plugin.c). Tracing is on from the start.
 *
 *  1. dlopen plug1 with only the control thread beside main, and wait (at most 3 s)
 *     until the library finds its trace points by itself; call plug1_top 100 times and
 *     plug1_entry 100 times. cw_rescan() finds nothing more.
 *  2. Start a thread that waits, dlopen plug2, cw_rescan(): its keyed trace points are
 *     switched, and its patched entry, which another thread could be running, is
 *     switched by its first byte; call plug2_top 10 times and plug2_entry 10 times.
 *     The entry's five bytes, read while on and after cw_stop, are reported.
 *  3. Dump (plug1's names are read from its memory: before it goes).
 *  4. dlclose plug1, then cw_stop and cw_start: nothing may be written where plug1 was.
 *     Call plug2_top 10 times more. Load plug1 again (usually where it was: its
 *     entry's old mirror is reused), cw_rescan(), call plug1_entry 10 times, dump.
 *
 * Prints one JSON line: the counts of sites at each step, the sums, and the traces.
 */
#define _GNU_SOURCE
#include "causeway.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef long (*fn)(long);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done;

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    while (!done)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static fn sym(void *h, const char *name)
{
    fn f = (fn)dlsym(h, name);
    if (!f) {
        fprintf(stderr, "%s: %s\n", name, dlerror());
        _exit(2);
    }
    return f;
}

static void *load(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        _exit(2);
    }
    return h;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    uint64_t skipped = 0;
    uint64_t keys0 = cw_keyed_sites(), entries0 = cw_patch_sites(NULL);

    void *h1 = load(argv[1]);
    int waited_ms = 0;
    while (cw_keyed_sites() == keys0 && waited_ms < 3000) {
        usleep(10000);
        waited_ms += 10;
    }
    uint64_t keys1 = cw_keyed_sites();
    long s1 = 0;
    fn top1 = sym(h1, "plug1_top"), entry1 = sym(h1, "plug1_entry");
    for (int i = 0; i < 100; i++)
        s1 += top1(i);
    int rescan1 = cw_rescan();
    uint64_t entries1 = cw_patch_sites(NULL);
    for (int i = 0; i < 100; i++)
        s1 += entry1(i);

    pthread_t th;
    pthread_create(&th, NULL, waiter, NULL);
    void *h2 = load(argv[2]);
    int rescan2 = cw_rescan();
    unsigned char on5[5], off5[5];
    memcpy(on5, (const void *)(uintptr_t)sym(h2, "plug2_entry"), 5);
    cw_stop();
    memcpy(off5, (const void *)(uintptr_t)sym(h2, "plug2_entry"), 5);
    cw_start();
    uint64_t keys2 = cw_keyed_sites(), entries2 = cw_patch_sites(&skipped);
    long s2 = 0;
    fn top2 = sym(h2, "plug2_top"), entry2 = sym(h2, "plug2_entry");
    for (int i = 0; i < 10; i++)
        s2 += top2(i) + entry2(i);

    int dumped1 = cw_dump("dlopen");
    char trace1[4096];
    snprintf(trace1, sizeof trace1, "%s", cw_last_dump() ? cw_last_dump() : "");

    dlclose(h1);
    cw_stop();
    cw_start();
    uint64_t keys3 = cw_keyed_sites();
    for (int i = 0; i < 10; i++)
        s2 += top2(i);
    h1 = load(argv[1]);
    int rescan3 = cw_rescan();
    fn entry1b = sym(h1, "plug1_entry");
    for (int i = 0; i < 10; i++)
        s1 += entry1b(i);
    uint64_t skipped3 = 0, entries3 = cw_patch_sites(&skipped3);

    pthread_mutex_lock(&mu);
    done = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(th, NULL);
    int dumped2 = cw_dump("dlclose");
    printf("{\"keys\":[%llu,%llu,%llu,%llu],\"entries\":[%llu,%llu,%llu,%llu],"
           "\"skipped\":[%llu,%llu],\"same_place\":%d,\"waited_ms\":%d,\"rescan\":[%d,%d,%d],\"s1\":%ld,\"s2\":%ld,\"dumped\":[%d,%d],"
           "\"traces\":[\"%s\",\"%s\"],\"entry_on\":\"%02x%02x%02x%02x%02x\","
           "\"entry_off\":\"%02x%02x%02x%02x%02x\"}\n",
           (unsigned long long)keys0, (unsigned long long)keys1, (unsigned long long)keys2,
           (unsigned long long)keys3, (unsigned long long)entries0,
           (unsigned long long)entries1, (unsigned long long)entries2,
           (unsigned long long)entries3, (unsigned long long)skipped,
           (unsigned long long)skipped3, entry1b == entry1, waited_ms, rescan1, rescan2, rescan3, s1, s2, dumped1, dumped2,
           trace1, cw_last_dump() ? cw_last_dump() : "", on5[0], on5[1], on5[2], on5[3],
           on5[4], off5[0], off5[1], off5[2], off5[3], off5[4]);
    return 0;
}
