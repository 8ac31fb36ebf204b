/*
 * Preemption makes a latency peak: an "op" thread calls spin_op() (pure CPU work,
 * about --work-us, no calls) in a loop, pinned to CPU 0, while a "hog" thread spins
 * pinned to the same CPU. The scheduler shares the CPU in slices of a few ms, so a
 * call that straddles a switch takes a slice longer: a second peak made of time the
 * op thread was preempted by the hog (nice -10 when run as root). With --fixed the
 * hog is pinned to CPU 1.
 *
 * Prints "hog tid N" on stdout at the start (then flushes), and "ops N" at the end.
 * Usage: pinned-competitor [--seconds S] [--work-us U] [--fixed]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static volatile uint64_t sink;
static uint64_t iters;
static uint64_t ops;

/* F0: pure CPU work, no calls (a leaf for rootpath). The empty asm keeps the
 * compiler from treating it as a const function and hoisting calls out of loops. */
__attribute__((noinline)) uint64_t spin_op(uint64_t n)
{
    uint64_t x = 0;
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ULL + i;
    __asm__ volatile("" : "+r"(x));
    return x;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        fprintf(stderr, "pinned-competitor: cannot pin to CPU %d\n", cpu);
        exit(2);
    }
}

static void *op_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "op");
    pin(0);
    /* Absolute priorities (when allowed): the test may run under `nice`, and the
     * peak's shape depends on the op thread's share against the hog's. */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 0);
    while (!stop) {
        sink += spin_op(iters);
        ops++;
    }
    return NULL;
}

static void *hog_main(void *arg)
{
    int cpu = *(int *)arg;
    pthread_setname_np(pthread_self(), "hog");
    pin(cpu);
    long tid = syscall(SYS_gettid);
    /* Favoured over the op thread when allowed (root): on a machine busy with other
     * work the hog must still be what the op thread mostly waits for. */
    setpriority(PRIO_PROCESS, (id_t)tid, -10);
    printf("hog tid %ld\n", tid);
    fflush(stdout);
    /* Its own loop, not spin_op: only the op thread's calls are F0's. */
    uint64_t x = 0;
    while (!stop)
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005ULL + (uint64_t)i;
    sink += x;
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = 5;
    int work_us = 100, fixed = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--work-us") && i + 1 < argc)
            work_us = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fixed"))
            fixed = 1;
        else {
            fprintf(stderr, "usage: pinned-competitor [--seconds S] [--work-us U] [--fixed]\n");
            return 2;
        }
    }
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2 && fixed) {
        fprintf(stderr, "pinned-competitor: --fixed needs 2 CPUs\n");
        return 2;
    }
    /* Iterations per microsecond: the fastest of a few short runs. */
    double best = 1e18;
    for (int r = 0; r < 5; r++) {
        int64_t t0 = now_ns();
        sink += spin_op(1000000);
        double ns = (double)(now_ns() - t0);
        if (ns < best)
            best = ns;
    }
    iters = (uint64_t)(work_us * 1000.0 * 1000000.0 / best);
    fprintf(stderr, "pinned-competitor: %llu iterations per call\n", (unsigned long long)iters);
    int hog_cpu = fixed ? 1 : 0;
    pthread_t op, hog;
    pthread_create(&hog, NULL, hog_main, &hog_cpu);
    pthread_create(&op, NULL, op_main, NULL);
    struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
    nanosleep(&ts, NULL);
    stop = 1;
    pthread_join(op, NULL);
    pthread_join(hog, NULL);
    printf("ops %llu\n", (unsigned long long)ops);
    return 0;
}
