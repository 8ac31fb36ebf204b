// Context-switch-heavy ping-pong for bench/overhead.sh.
//
// --pairs N pairs of threads ("ping-K", "pong-K"); each pair passes one byte
// back and forth over two pipes, so one op = one round trip = two blocking
// reads, two writes, two wake-ups and (usually) two context switches.
// Runs for --seconds S, then prints on stdout
//
//   throughput: X ops/s
//
// and on stderr one line of key=value figures measured over the same window
// (from the moment every thread is ready to the moment the last one stopped):
//
//   pingpong: ops=N wall_s=W cpu_s=C parent_cpu_s=P
//
// cpu_s is the CPU time (user + system) of this process (getrusage), which
// includes the time eBPF programs and perf spend in tracepoints hit by its
// threads. parent_cpu_s is the CPU time the parent process (the tracer when
// run as `causeway record -- pingpong` or `perf record -- pingpong`, the shell
// otherwise) used in the window, summed over its threads from
// /proc/PPID/task/*/schedstat (ns resolution): that is the tracer's
// user-space cost of draining and writing the events.
//
// --cpu C pins every ping and pong thread to CPU C (pthread_setaffinity_np), so
// each round trip is two switches on that one CPU whatever the scheduler
// would have done: on a 2-vCPU VM the unpinned throughput swings 10x with
// whether the two threads happen to share a CPU. The main thread (which only
// sleeps) and the tracer stay unpinned.
//
// If the environment variable PINGPONG_AT_END is set, it is run with
// system(3) at the end of the window, before the threads are released (used
// to snapshot eBPF program statistics while the recorder is still attached).
//
// Build: cc -O2 -pthread -o pingpong pingpong.c
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct pair {
    int ab[2], ba[2];
    unsigned long ops;
    int index;
    int cpu; // -1: not pinned
    char pad[64];
};

static atomic_int stop;
static pthread_barrier_t ready;

static void die(const char *what) {
    fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void pin(int cpu) {
    if (cpu < 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (e) {
        errno = e;
        die("pthread_setaffinity_np");
    }
}

static void *ping(void *arg) {
    struct pair *p = arg;
    char name[16], c = 'x';
    snprintf(name, sizeof name, "ping-%d", p->index);
    pthread_setname_np(pthread_self(), name);
    pin(p->cpu);
    pthread_barrier_wait(&ready);
    unsigned long n = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        if (write(p->ab[1], &c, 1) != 1) die("write");
        if (read(p->ba[0], &c, 1) != 1) die("read");
        n++;
    }
    p->ops = n;
    close(p->ab[1]); // pong sees EOF and ends
    return NULL;
}

static void *pong(void *arg) {
    struct pair *p = arg;
    char name[16], c;
    snprintf(name, sizeof name, "pong-%d", p->index);
    pthread_setname_np(pthread_self(), name);
    pin(p->cpu);
    pthread_barrier_wait(&ready);
    for (;;) {
        ssize_t r = read(p->ab[0], &c, 1);
        if (r == 0) break;
        if (r != 1) die("read");
        if (write(p->ba[1], &c, 1) != 1) die("write");
    }
    return NULL;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double self_cpu(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

// Sum of the run time of every thread of process pid, in seconds.
static double proc_cpu(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return 0;
    double sum = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char f[300];
        snprintf(f, sizeof f, "/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
        FILE *fp = fopen(f, "r");
        if (!fp) continue;
        unsigned long long ns;
        if (fscanf(fp, "%llu", &ns) == 1) sum += ns * 1e-9;
        fclose(fp);
    }
    closedir(d);
    return sum;
}

int main(int argc, char **argv) {
    int pairs = 1, cpu = -1;
    double seconds = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc) pairs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) cpu = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: pingpong [--pairs N] [--seconds S] [--cpu C]\n");
            return 2;
        }
    }
    if (pairs < 1 || seconds <= 0) {
        fprintf(stderr, "pingpong: bad --pairs or --seconds\n");
        return 2;
    }
    struct pair *ps = calloc(pairs, sizeof *ps);
    pthread_t *th = calloc(2 * pairs, sizeof *th);
    pthread_barrier_init(&ready, NULL, 2 * pairs + 1);
    for (int i = 0; i < pairs; i++) {
        ps[i].index = i;
        ps[i].cpu = cpu;
        if (pipe(ps[i].ab) || pipe(ps[i].ba)) die("pipe");
        pthread_create(&th[2 * i], NULL, ping, &ps[i]);
        pthread_create(&th[2 * i + 1], NULL, pong, &ps[i]);
    }
    pid_t parent = getppid();
    pthread_barrier_wait(&ready);
    double t0 = now(), c0 = self_cpu(), p0 = proc_cpu(parent);
    struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) && errno == EINTR) {}
    const char *hook = getenv("PINGPONG_AT_END");
    if (hook && *hook && system(hook) != 0) fprintf(stderr, "pingpong: PINGPONG_AT_END failed\n");
    atomic_store(&stop, 1);
    for (int i = 0; i < 2 * pairs; i++) pthread_join(th[i], NULL);
    double t1 = now(), c1 = self_cpu(), p1 = proc_cpu(parent);
    unsigned long ops = 0;
    for (int i = 0; i < pairs; i++) ops += ps[i].ops;
    printf("throughput: %.1f ops/s\n", ops / (t1 - t0));
    fprintf(stderr, "pingpong: ops=%lu wall_s=%.6f cpu_s=%.6f parent_cpu_s=%.6f\n", ops, t1 - t0,
            c1 - c0, p1 - p0);
    return 0;
}
