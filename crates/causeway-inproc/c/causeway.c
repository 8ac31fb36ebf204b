/*
 * causeway.c - the C side of libcauseway: per-thread buffers, the start/stop protocol,
 * the control thread (signal, stall watchdog, coarse clock) and the copy at a dump.
 *
 * The trace points themselves are inline in causeway.h. Everything here runs off the
 * trace path except the three cold helpers the trace point may call (first use of a
 * thread, clock sync, stop acknowledgement). Writing the trace file is Rust's job
 * (cw_rs_write_trace), so the byte layout of .cwt lives in one place.
 *
 * Nothing in this file may be compiled with -finstrument-functions.
 */
#define _GNU_SOURCE
#include "causeway.h"
#include "cw_dump.h"
#include "cw_patch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINSTR __attribute__((no_instrument_function))

uint64_t cw__unseen[2];
__thread struct cw_thread cw_self CW_TLS_IE = {
    .cur = cw__unseen,
    .base = cw__unseen,
    .end = cw__unseen,
    .ring_end = cw__unseen,
};
int cw_clock_coarse;
/* Referenced by nothing in the library: its only job is to be named on a link line
 * (`-Wl,-u,cw_link_anchor`, in causeway-static.pc). A program built with
 * -fpatchable-function-entry alone references no symbol of libcauseway, so without it
 * the static linker takes none of libcauseway.a's objects: the constructor that
 * patches the entries would never run. It lives in this object because this object
 * holds that constructor. */
const int cw_link_anchor = 1;
/* Defined (weak) by programs built with CW_CLOCK_COARSE; absent otherwise. */
extern const int cw_coarse_wanted __attribute__((weak));
volatile uint64_t cw_coarse_now;

/* The library's record of a traced thread; lives until the process ends (or its
 * buffer is reused for a newer thread), so a dump still has an exited thread's calls. */
struct cw_rec {
    struct cw_rec *next;
    struct cw_thread *t;  /* NULL once the thread has exited */
    pid_t tid;
    uint64_t *base;
    uint64_t nslots;
    uint64_t *exit_pos;   /* write position when the thread exited */
    uint64_t exit_wraps;
    uint64_t exit_tsc;
    uint32_t exit_hi;
    uint64_t fired_beat;  /* heartbeat value the watchdog last dumped for */
    int watched;
};

static struct {
    int ready;
    uint64_t nslots;      /* per thread */
    unsigned max_threads; /* 0 = no limit */
    unsigned nbuffers;
    uint64_t untraced;
    int signo;            /* 0 = no signal trigger */
    uint64_t stall_ns;    /* 0 = no watchdog */
    int dump_at_exit;
    int kernel_dump;
    int barrier_ok;       /* membarrier(2) registered: running threads can be copied */
    unsigned max_dumps;
    uint64_t coarse_ns;
    char dir[512];
    struct cw_rec *recs;
    pthread_mutex_t lock;      /* the records; never taken on the trace path */
    pthread_mutex_t dump_lock; /* one dump at a time */
    pthread_key_t key;
    int pipe_rd, pipe_wr;
    pthread_t control;
    int control_running;
    uint64_t cal_tsc, cal_mono_ns;
    double tsc_per_ns;    /* refined at every dump */
    uint64_t dumps;
    char last_path[600];
    volatile int stopped_all; /* cw_stop() in effect */
} g = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .dump_lock = PTHREAD_MUTEX_INITIALIZER,
    .pipe_rd = -1,
    .pipe_wr = -1,
};

static NOINSTR uint64_t mono_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A (TSC, CLOCK_MONOTONIC) pair read as close together as we can: the TSC halfway
 * between two reads around clock_gettime, from the tightest of a few tries. */
static NOINSTR void ref_pair(uint64_t *tsc, uint64_t *mono, uint64_t *real)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t a = __rdtsc();
        uint64_t m = mono_ns(CLOCK_MONOTONIC);
        uint64_t b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *mono = m;
        }
    }
    if (real)
        *real = mono_ns(CLOCK_REALTIME) - (mono_ns(CLOCK_MONOTONIC) - *mono);
}

static NOINSTR pid_t gettid_(void) { return (pid_t)syscall(SYS_gettid); }

/* ---- environment ---------------------------------------------------------------- */

static NOINSTR uint64_t parse_duration_ns(const char *s, uint64_t dflt)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return dflt;
    if (!strncmp(end, "ns", 2)) return (uint64_t)v;
    if (!strncmp(end, "us", 2)) return (uint64_t)(v * 1e3);
    if (!strncmp(end, "ms", 2)) return (uint64_t)(v * 1e6);
    if (!strncmp(end, "s", 1) || *end == 0 || *end == ',') return (uint64_t)(v * 1e9);
    return dflt;
}

static NOINSTR uint64_t parse_size(const char *s, uint64_t dflt)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return dflt;
    switch (*end) {
    case 'K': case 'k': v <<= 10; break;
    case 'M': case 'm': v <<= 20; break;
    case 'G': case 'g': v <<= 30; break;
    default: break;
    }
    return v;
}

static NOINSTR int parse_signal(const char *s)
{
    if (!strncmp(s, "SIG", 3))
        s += 3;
    if (!strncmp(s, "USR1", 4)) return SIGUSR1;
    if (!strncmp(s, "USR2", 4)) return SIGUSR2;
    if (!strncmp(s, "PROF", 4)) return SIGPROF;
    if (!strncmp(s, "off", 3)) return 0;
    int n = atoi(s);
    return n > 0 && n < NSIG ? n : SIGUSR2;
}

/* CAUSEWAY_TRIGGER: comma-separated `signal=USR2|off`, `stall=200ms|off`, `exit`,
 * `kernel` (also ask running flight recorders to dump), or `none`. */
static NOINSTR void parse_triggers(const char *s)
{
    g.signo = SIGUSR2;
    g.stall_ns = 200000000ull;
    if (!s)
        return;
    while (*s) {
        if (!strncmp(s, "none", 4)) {
            g.signo = 0;
            g.stall_ns = 0;
        } else if (!strncmp(s, "signal=", 7)) {
            g.signo = parse_signal(s + 7);
        } else if (!strncmp(s, "stall=", 6)) {
            g.stall_ns = strncmp(s + 6, "off", 3) ? parse_duration_ns(s + 6, g.stall_ns) : 0;
        } else if (!strncmp(s, "exit", 4)) {
            g.dump_at_exit = 1;
        } else if (!strncmp(s, "kernel", 6)) {
            g.kernel_dump = 1;
        } else {
            fprintf(stderr, "libcauseway: ignoring unknown CAUSEWAY_TRIGGER item at '%s'\n", s);
        }
        const char *c = strchr(s, ',');
        if (!c)
            break;
        s = c + 1;
    }
}

static NOINSTR void read_env(void)
{
    const char *v;
    g.nslots = parse_size((v = getenv("CAUSEWAY_BUFFER")) ? v : "32M", 32u << 20) / 8;
    if (g.nslots < 64)
        g.nslots = 64;
    v = getenv("CAUSEWAY_THREADS");
    g.max_threads = (!v || !strcmp(v, "all")) ? 0 : (unsigned)atoi(v);
    if (!v)
        g.max_threads = 16;
    parse_triggers(getenv("CAUSEWAY_TRIGGER"));
    v = getenv("CAUSEWAY_OUTPUT");
    snprintf(g.dir, sizeof g.dir, "%s", v && *v ? v : ".");
    v = getenv("CAUSEWAY_MAX_DUMPS");
    g.max_dumps = v ? (unsigned)atoi(v) : 16;
    v = getenv("CAUSEWAY_CLOCK");
    if (!v && &cw_coarse_wanted)
        v = "coarse"; /* trace points built with CW_CLOCK_COARSE read only that clock */
    if (v && !strncmp(v, "coarse", 6)) {
        cw_clock_coarse = 1;
        g.coarse_ns = v[6] == ':' ? parse_duration_ns(v + 7, 100000) : 100000;
        if (g.coarse_ns < 1000)
            g.coarse_ns = 1000;
    }
    v = getenv("CAUSEWAY_START");
    /* Off at start is the state cw_stop() leaves: cw_start() turns tracing on. */
    g.stopped_all = v && (!strcmp(v, "off") || !strcmp(v, "0"));
}

/* ---- threads -------------------------------------------------------------------- */

static NOINSTR void thread_gone(void *arg);

/* Write a resume record (full clock) at p; returns the slot after it. */
static NOINSTR uint64_t *put_resume(struct cw_thread *t, uint64_t *p, uint64_t tsc)
{
    *p = tsc;
    p = cw__next(t, p);
    *p = ((uint64_t)t->last_hi << 32) | CW_TAG_RESUME;
    t->last_hi = (uint32_t)(tsc >> 32);
    return cw__next(t, p);
}

static NOINSTR struct cw_rec *take_buffer(void)
{
    if (g.max_threads == 0 || g.nbuffers < g.max_threads) {
        void *m = mmap(NULL, g.nslots * 8, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        struct cw_rec *r = calloc(1, sizeof *r);
        if (!r) {
            munmap(m, g.nslots * 8);
            return NULL;
        }
        r->base = m;
        r->nslots = g.nslots;
        r->next = g.recs;
        g.recs = r;
        g.nbuffers++;
        return r;
    }
    /* At the limit: reuse the buffer of the thread that exited longest ago, so the
     * buffers kept are those of the most recently active threads. */
    struct cw_rec *old = NULL;
    for (struct cw_rec *r = g.recs; r; r = r->next)
        if (!r->t && (!old || r->exit_tsc < old->exit_tsc))
            old = r;
    if (old) {
        old->exit_pos = NULL;
        old->exit_wraps = 0;
        old->watched = 0;
        old->fired_beat = 0;
    }
    return old;
}

void cw__first(struct cw_thread *t)
{
    if (!g.ready || t->state != 0)
        return; /* before start-up: the next trace point asks again */
    t->state = 2;
    t->cur = NULL;
    pthread_mutex_lock(&g.lock);
    struct cw_rec *r = take_buffer();
    if (!r) {
        g.untraced++;
        pthread_mutex_unlock(&g.lock);
        return;
    }
    r->t = t;
    r->tid = gettid_();
    t->rec = r;
    t->base = r->base;
    t->ring_end = r->base + r->nslots;
    t->end = t->ring_end;
    t->wraps = 0;
    t->stop = 0;
    t->state = 1;
    pthread_setspecific(g.key, r);
    if (!g.stopped_all)
        t->cur = put_resume(t, t->base, __rdtsc());
    else
        t->stop = (uintptr_t)t->base; /* stopped at the first slot */
    pthread_mutex_unlock(&g.lock);
}

uint64_t *cw__sync(struct cw_thread *t, uint64_t *p, uint64_t ts)
{
    *p = ts;
    p = cw__next(t, p);
    *p = ((uint64_t)t->last_hi << 32) | CW_TAG_SYNC;
    t->last_hi = (uint32_t)(ts >> 32);
    return cw__next(t, p);
}

void cw__enter_slow(struct cw_thread *t, uint64_t *p, uintptr_t id, uint64_t ts)
{
    if (t->state == 0) { /* the thread's first entry: take a buffer */
        cw__first(t);
        if (t->state != 1 || (p = CW_LOAD(t->cur)) == NULL)
            return;
        ts = cw__clock();
    }
    if ((uint32_t)(ts >> 32) != t->last_hi)
        p = cw__sync(t, p, ts);
    if ((uint64_t)id - CW_FIRST_ID < (1ull << 32) - CW_FIRST_ID) {
        *p = (ts << 32) | (uint64_t)id;
    } else {
        *p = (uint64_t)id;
        p = cw__next(t, p);
        *p = (ts << 32) | CW_TAG_WIDE;
    }
    cw__commit(t, cw__next(t, p));
}

void cw__exit_slow(struct cw_thread *t, uint64_t *p, uint64_t ts)
{
    if (t->state == 0) /* an exit before any entry: nothing to pair it with */
        return;
    if ((uint32_t)(ts >> 32) != t->last_hi)
        p = cw__sync(t, p, ts);
    *p = (ts << 32) | CW_TAG_EXIT;
    cw__commit(t, cw__next(t, p));
}

/* Figure 4 lines 10-11, in the other order: tracing goes off (cur = NULL) before the
 * position is published in `stop`, so once the control thread sees stop > 1 it owns
 * the buffer and may restart the thread without racing this store. */
void cw__ack_stop(struct cw_thread *t, uint64_t *p)
{
    cw__drain_slots(); /* the control thread copies the slots once it sees the answer */
    t->parked = p;
    CW_STORE(t->cur, (uint64_t *)NULL);
    __atomic_signal_fence(__ATOMIC_RELEASE);
    CW_STORE(t->stop, (uintptr_t)p);
}

static NOINSTR void thread_gone(void *arg)
{
    struct cw_rec *r = arg;
    cw__drain_slots();
    pthread_mutex_lock(&g.lock);
    struct cw_thread *t = r->t;
    if (t) {
        uint64_t *cur = CW_LOAD(t->cur);
        uintptr_t stop = CW_LOAD(t->stop);
        CW_STORE(t->cur, (uint64_t *)NULL);
        r->exit_pos = cur ? cur : (stop > 1 ? (uint64_t *)stop : t->base);
        r->exit_wraps = t->wraps;
        r->exit_tsc = __rdtsc();
        r->exit_hi = t->last_hi;
        t->state = 3;
        t->rec = NULL;
        r->t = NULL;
    }
    pthread_mutex_unlock(&g.lock);
}

void cw__watch(struct cw_thread *t)
{
    if (t->state == 0)
        cw__first(t);
    pthread_mutex_lock(&g.lock);
    if (t->rec)
        ((struct cw_rec *)t->rec)->watched = 1;
    pthread_mutex_unlock(&g.lock);
}

/* ---- copying buffers at a dump --------------------------------------------------- */

/* Copy `n` slots ending just before index `pos` (ring order) into out, oldest first. */
static NOINSTR void copy_ring(const uint64_t *base, uint64_t nslots, uint64_t pos,
                              uint64_t n, uint64_t *out)
{
    uint64_t start = (pos + nslots - n) % nslots;
    uint64_t first = n < nslots - start ? n : nslots - start;
    memcpy(out, base + start, first * 8);
    memcpy(out + first, base, (n - first) * 8);
}

static NOINSTR int snap_stopped(struct cw_rec *r, uint64_t *pos, uint64_t wraps,
                                struct cw_snap *s)
{
    uint64_t idx = (uint64_t)(pos - r->base);
    uint64_t n = wraps ? r->nslots : idx;
    s->slots = malloc((n ? n : 1) * 8);
    if (!s->slots)
        return -ENOMEM;
    copy_ring(r->base, r->nslots, idx, n, (uint64_t *)s->slots);
    s->nslots = n;
    s->lost_slots = wraps ? (wraps - 1) * r->nslots + idx : 0;
    if (wraps)
        s->flags |= CW_SNAP_WRAPPED;
    if (r->t)
        s->last_hi = CW_LOAD(r->t->last_hi);
    return 0;
}

/* Registers the process for expedited membarrier (idempotent; again after fork, which
 * starts a new address space). Returns whether copies of running threads can be
 * flushed. */
static NOINSTR int barrier_register(void)
{
    g.barrier_ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    return g.barrier_ok;
}

/* Make every slot a running thread has written visible here: the trace points store
 * with movnti, whose write-combining buffers drain on a fence or an interrupt. The
 * expedited membarrier interrupts each CPU now running a thread of this process; a
 * thread that is not running drained them when it left its CPU. */
static NOINSTR int drain_running_threads(void)
{
    return g.barrier_ok &&
           syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

/* The thread did not stop (blocked in a system call, or stuck in code without trace
 * points): copy while it may run, then drop the oldest slots it could have rewritten
 * meanwhile (it writes a slot before it publishes the position). */
static NOINSTR int snap_running(struct cw_rec *r, struct cw_thread *t, struct cw_snap *s)
{
    uint64_t *p1 = CW_LOAD(t->cur);
    uint64_t w1 = CW_LOAD(t->wraps);
    if (!p1)
        return 1; /* it stopped after all */
    if (!drain_running_threads()) {
        /* Slots before p1 may not have reached memory: decoding a stale one would
         * invent calls, so the thread's calls are counted as lost instead. */
        s->lost_slots = w1 * r->nslots + (uint64_t)(p1 - r->base);
        s->flags |= CW_SNAP_FORCED;
        return 0;
    }
    int rc = snap_stopped(r, p1, w1, s);
    if (rc)
        return rc;
    __atomic_signal_fence(__ATOMIC_ACQUIRE);
    uint64_t *p2 = CW_LOAD(t->cur);
    uint64_t w2 = CW_LOAD(t->wraps);
    if (!p2)
        p2 = (uint64_t *)CW_LOAD(t->stop);
    uint64_t moved = (w2 - w1) * r->nslots + (uint64_t)(p2 - r->base) - (uint64_t)(p1 - r->base);
    uint64_t drop = moved + 2;
    if (w2 < w1 || (uintptr_t)p2 < 2 || drop >= s->nslots)
        drop = s->nslots;
    /* Without a wrap the thread writes past the copied range only. */
    if (w1 == 0 && w2 == 0)
        drop = 0;
    if (drop) {
        memmove((uint64_t *)s->slots, s->slots + drop, (s->nslots - drop) * 8);
        s->nslots -= drop;
        s->lost_slots += drop;
    }
    s->flags |= CW_SNAP_FORCED;
    return 0;
}

/* Restart a thread the control thread stopped: a resume record where it stopped. */
static NOINSTR void restart(struct cw_thread *t, uint64_t *pos)
{
    uint64_t *p = put_resume(t, pos, __rdtsc());
    CW_STORE(t->stop, (uintptr_t)0);
    CW_STORE(t->end, t->ring_end);
    __atomic_signal_fence(__ATOMIC_RELEASE);
    CW_STORE(t->cur, p);
}

/* Withdraw a stop request the thread has not answered: its trace points go back to
 * the fast path. */
static NOINSTR void cancel_stop(struct cw_thread *t)
{
    CW_STORE(t->stop, (uintptr_t)0);
    __atomic_signal_fence(__ATOMIC_RELEASE);
    CW_STORE(t->end, t->ring_end);
}

/* Ask every live thread to stop (Figure 4 line 3) and wait a little for answers. */
static NOINSTR void request_stop_all(struct cw_thread *self)
{
    for (struct cw_rec *r = g.recs; r; r = r->next)
        if (r->t && r->t != self && CW_LOAD(r->t->cur)) {
            CW_STORE(r->t->stop, (uintptr_t)1);
            /* After `stop` (x86 keeps the two stores in order): a thread sent to the
             * slow path by the lowered end finds the request there. */
            __atomic_signal_fence(__ATOMIC_RELEASE);
            CW_STORE(r->t->end, (uint64_t *)NULL);
        }
    /* Threads that are running answer within a trace point; give the others (blocked,
     * descheduled, or in code without trace points) 1 ms, then copy them running. */
    uint64_t deadline = mono_ns(CLOCK_MONOTONIC) + 1000000;
    for (;;) {
        int pending = 0;
        for (struct cw_rec *r = g.recs; r; r = r->next)
            if (r->t && r->t != self && CW_LOAD(r->t->stop) == 1)
                pending++;
        if (!pending || mono_ns(CLOCK_MONOTONIC) > deadline)
            break;
        sched_yield();
    }
}

static NOINSTR int snap_one(struct cw_rec *r, struct cw_thread *self, struct cw_snap *s)
{
    struct cw_thread *t = r->t;
    memset(s, 0, sizeof *s);
    s->tid = r->tid;
    s->end_tsc = __rdtsc();
    if (!t) {
        s->flags |= CW_SNAP_EXITED;
        s->end_tsc = r->exit_tsc;
        s->last_hi = r->exit_hi;
        return r->exit_pos ? snap_stopped(r, r->exit_pos, r->exit_wraps, s) : 0;
    }
    if (t == self) { /* the dumping thread writes nothing while it dumps */
        uint64_t *pos = t->cur ? t->cur : (t->stop > 1 ? (uint64_t *)t->stop : NULL);
        return pos ? snap_stopped(r, pos, t->wraps, s) : 0;
    }
    uintptr_t stop = CW_LOAD(t->stop);
    if (stop > 1) /* stopped: the buffer is ours until restart */
        return snap_stopped(r, (uint64_t *)stop, t->wraps, s);
    int rc = snap_running(r, t, s);
    if (rc == 1) /* it answered while we looked */
        return snap_stopped(r, (uint64_t *)CW_LOAD(t->stop), t->wraps, s);
    return rc;
}

/* Let every thread run again, unless cw_stop() is in effect. */
static NOINSTR void resume_all(struct cw_thread *self)
{
    for (struct cw_rec *r = g.recs; r; r = r->next) {
        struct cw_thread *t = r->t;
        if (!t || t == self)
            continue;
        uintptr_t stop = CW_LOAD(t->stop);
        if (stop > 1) {
            if (!g.stopped_all)
                restart(t, (uint64_t *)stop);
        } else if (stop == 1 && !g.stopped_all) {
            /* Never answered; cancel the request. If it answers after all, the control
             * thread's next tick restarts it (stop > 1 with cur == NULL). */
            cancel_stop(t);
        }
    }
}

static NOINSTR int do_dump(uint32_t trigger, pid_t trigger_tid, const char *reason)
{
    if (!g.ready)
        return -EINVAL;
    pthread_mutex_lock(&g.dump_lock);
    if (g.max_dumps && g.dumps >= g.max_dumps) {
        pthread_mutex_unlock(&g.dump_lock);
        return -ENOSPC;
    }
    struct cw_thread *self = cw_self.state == 1 ? &cw_self : NULL;
    pthread_mutex_lock(&g.lock);
    request_stop_all(self);
    unsigned n = 0;
    for (struct cw_rec *r = g.recs; r; r = r->next)
        n++;
    struct cw_snap *snaps = calloc(n ? n : 1, sizeof *snaps);
    int rc = snaps ? 0 : -ENOMEM;
    unsigned k = 0;
    for (struct cw_rec *r = g.recs; r && !rc; r = r->next)
        rc = snap_one(r, self, &snaps[k++]);
    resume_all(self);
    uint64_t untraced = g.untraced;
    pthread_mutex_unlock(&g.lock);

    struct cw_dump_req req = {0};
    char path[600];
    snprintf(path, sizeof path, "%s/causeway-%d-%llu.cwt", g.dir, (int)getpid(),
             (unsigned long long)g.dumps + 1);
    if (!rc) {
        ref_pair(&req.ref_tsc, &req.ref_mono_ns, &req.ref_real_ns);
        req.path = path;
        req.reason = reason ? reason : "";
        req.trigger = trigger;
        req.trigger_tid = trigger_tid;
        req.cal_tsc = g.cal_tsc;
        req.cal_mono_ns = g.cal_mono_ns;
        req.snaps = snaps;
        req.nsnaps = k;
        req.untraced_threads = untraced;
        req.kernel_dump = (uint64_t)g.kernel_dump;
        rc = cw_rs_write_trace(&req);
    }
    if (!rc) {
        g.dumps++;
        snprintf(g.last_path, sizeof g.last_path, "%s", path);
    }
    for (unsigned i = 0; snaps && i < k; i++)
        free((void *)snaps[i].slots);
    free(snaps);
    pthread_mutex_unlock(&g.dump_lock);
    return rc;
}

/* ---- control thread --------------------------------------------------------------- */

static NOINSTR void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    char c = 'S';
    if (g.pipe_wr >= 0 && write(g.pipe_wr, &c, 1) < 0) {
        /* a full pipe already holds a request */
    }
    errno = saved;
}

/* Heartbeats are TSC values; the watchdog converts with the start-up calibration. */
static NOINSTR double tsc_per_ns_now(void)
{
    uint64_t tsc = 0, mono = 0;
    ref_pair(&tsc, &mono, NULL);
    if (mono > g.cal_mono_ns + 1000000)
        return (double)(tsc - g.cal_tsc) / (double)(mono - g.cal_mono_ns);
    return 0;
}

static NOINSTR void watchdog_tick(void)
{
    if (!g.stall_ns)
        return;
    if (g.tsc_per_ns == 0)
        g.tsc_per_ns = tsc_per_ns_now();
    if (g.tsc_per_ns == 0)
        return;
    uint64_t now = __rdtsc();
    uint64_t limit = (uint64_t)((double)g.stall_ns * g.tsc_per_ns);
    pid_t stalled = 0;
    uint64_t ago = 0;
    pthread_mutex_lock(&g.lock);
    for (struct cw_rec *r = g.recs; r; r = r->next) {
        if (!r->t || !r->watched)
            continue;
        uint64_t beat = CW_LOAD(r->t->beat);
        if (beat && now > beat && now - beat > limit && r->fired_beat != beat) {
            r->fired_beat = beat; /* once per stall: re-armed by the next heartbeat */
            stalled = r->tid;
            ago = now - beat;
            break;
        }
    }
    pthread_mutex_unlock(&g.lock);
    if (stalled) {
        char reason[128];
        snprintf(reason, sizeof reason, "thread %d missed its heartbeat for %.0f ms",
                 (int)stalled, (double)ago / g.tsc_per_ns / 1e6);
        int rc = do_dump(CW_TRIGGER_STALL, stalled, reason);
        if (rc && rc != -ENOSPC)
            fprintf(stderr, "libcauseway: stall dump failed: %s\n", strerror(-rc));
    }
}

/* Threads that answered a stop after the dump gave up on them: restart them. */
static NOINSTR void restart_late(void)
{
    if (g.stopped_all)
        return;
    pthread_mutex_lock(&g.lock);
    for (struct cw_rec *r = g.recs; r; r = r->next) {
        struct cw_thread *t = r->t;
        if (!t || t->state != 1 || CW_LOAD(t->cur))
            continue;
        uintptr_t stop = CW_LOAD(t->stop);
        if (stop > 1)
            restart(t, (uint64_t *)stop);
        else if (stop == 0 && t->parked)
            /* It answered a stop that was cancelled at the same moment, and the cancel
             * overwrote the answer: its own record of where it stopped is in parked. */
            restart(t, t->parked);
    }
    pthread_mutex_unlock(&g.lock);
}

static NOINSTR void *control_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    uint64_t tick_ns = g.stall_ns ? g.stall_ns / 4 : 100000000ull;
    if (cw_clock_coarse && g.coarse_ns < tick_ns)
        tick_ns = g.coarse_ns;
    uint64_t next_watch = 0;
    for (;;) {
        struct timespec to = {(time_t)(tick_ns / 1000000000ull), (long)(tick_ns % 1000000000ull)};
        struct pollfd pfd = {g.pipe_rd, POLLIN, 0};
        int n = ppoll(&pfd, 1, &to, NULL);
        if (cw_clock_coarse)
            cw_coarse_now = __rdtsc();
        if (n > 0 && (pfd.revents & POLLIN)) {
            char buf[16];
            ssize_t got = read(g.pipe_rd, buf, sizeof buf);
            if (got > 0 && memchr(buf, 'Q', (size_t)got))
                return NULL;
            if (got > 0 && memchr(buf, 'S', (size_t)got)) {
                int rc = do_dump(CW_TRIGGER_SIGNAL, 0, "signal");
                if (rc && rc != -ENOSPC)
                    fprintf(stderr, "libcauseway: dump failed: %s\n", strerror(-rc));
            }
        }
        uint64_t now = mono_ns(CLOCK_MONOTONIC);
        if (now >= next_watch) {
            watchdog_tick();
            restart_late();
            cw__patch_poll();
            next_watch = now + (g.stall_ns ? g.stall_ns / 4 : 100000000ull);
        }
    }
    return NULL;
}

static NOINSTR int start_control(void)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return -errno;
    g.pipe_rd = fds[0];
    g.pipe_wr = fds[1];
    int rc = pthread_create(&g.control, NULL, control_main, NULL);
    if (rc)
        return -rc;
    g.control_running = 1;
    pthread_setname_np(g.control, "causeway-ctl");
    return 0;
}

static NOINSTR void at_exit(void)
{
    if (g.dump_at_exit && g.ready) {
        int rc = do_dump(CW_TRIGGER_EXIT, gettid_(), "exit");
        if (rc && rc != -ENOSPC)
            fprintf(stderr, "libcauseway: exit dump failed: %s\n", strerror(-rc));
    }
}

/* Around fork: the child gets the sites' lock free, not held by a thread it lacks. */
static NOINSTR void patch_lock(void) { cw__patch_lock(1); }
static NOINSTR void patch_unlock(void) { cw__patch_lock(0); }

/* The child of a fork has only the forking thread: keep its buffer, forget the
 * others' (their memory is the parent's copy), start a control thread of its own. */
static NOINSTR void after_fork_child(void)
{
    barrier_register();
    pthread_mutex_init(&g.lock, NULL);
    pthread_mutex_init(&g.dump_lock, NULL);
    struct cw_rec *keep = NULL;
    for (struct cw_rec *r = g.recs, *next; r; r = next) {
        next = r->next;
        if (r->t == &cw_self) {
            keep = r;
            keep->tid = gettid_();
        } else {
            munmap(r->base, r->nslots * 8);
            free(r);
        }
    }
    g.recs = keep;
    if (keep)
        keep->next = NULL;
    g.nbuffers = keep ? 1 : 0;
    g.dumps = 0;
    if (g.pipe_rd >= 0) {
        close(g.pipe_rd);
        close(g.pipe_wr);
    }
    g.pipe_rd = g.pipe_wr = -1;
    g.control_running = 0;
    if (start_control() != 0)
        g.signo = 0;
}

int cw_init(void)
{
    if (g.ready)
        return 0;
    read_env();
    ref_pair(&g.cal_tsc, &g.cal_mono_ns, NULL);
    cw_coarse_now = __rdtsc();
    /* Before the control thread exists: the sites' first rewrite needs one thread. */
    cw__patch_init(!g.stopped_all);
    if (pthread_key_create(&g.key, thread_gone) != 0)
        return -EAGAIN;
    int rc = start_control();
    if (rc)
        return rc;
    if (g.signo) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(g.signo, &sa, NULL);
    }
    if (!barrier_register())
        fprintf(stderr, "libcauseway: membarrier(2) unavailable (%s): a dump will count "
                        "the calls of threads that do not stop for it as lost\n",
                strerror(errno));
    pthread_atfork(patch_lock, patch_unlock, patch_unlock);
    pthread_atfork(NULL, NULL, after_fork_child);
    atexit(at_exit);
    g.ready = 1;
    return 0;
}

__attribute__((constructor(101))) static NOINSTR void cw_ctor(void)
{
    const char *off = getenv("CAUSEWAY_DISABLE");
    if (off && *off && strcmp(off, "0"))
        return;
    int rc = cw_init();
    if (rc)
        fprintf(stderr, "libcauseway: not tracing: %s\n", strerror(-rc));
}

/* ---- public control ----------------------------------------------------------------- */

int cw_dump(const char *reason)
{
    return do_dump(CW_TRIGGER_CALL, gettid_(), reason);
}

int cw_stop(void)
{
    if (!g.ready)
        return -EINVAL;
    pthread_mutex_lock(&g.lock);
    g.stopped_all = 1;
    struct cw_thread *self = cw_self.state == 1 ? &cw_self : NULL;
    if (self && self->cur) {
        uint64_t *p = self->cur;
        self->cur = NULL;
        self->stop = (uintptr_t)p;
    }
    request_stop_all(self);
    pthread_mutex_unlock(&g.lock);
    /* Patched entries back to nops: off costs them alone. */
    cw__patch_set(0, g.control_running);
    return 0;
}

int cw_start(void)
{
    if (!g.ready)
        return -EINVAL;
    pthread_mutex_lock(&g.lock);
    g.stopped_all = 0;
    for (struct cw_rec *r = g.recs; r; r = r->next) {
        struct cw_thread *t = r->t;
        if (!t)
            continue;
        uintptr_t stop = CW_LOAD(t->stop);
        if (stop > 1 && !CW_LOAD(t->cur))
            restart(t, (uint64_t *)stop);
        else if (stop == 1)
            cancel_stop(t); /* never stopped; a late answer is restarted by the control tick */
    }
    pthread_mutex_unlock(&g.lock);
    cw__patch_set(1, g.control_running);
    return 0;
}

int cw_config(const char *key, const char *value)
{
    if (!key || !value)
        return -EINVAL;
    pthread_mutex_lock(&g.dump_lock);
    int rc = 0;
    if (!strcmp(key, "CAUSEWAY_OUTPUT"))
        snprintf(g.dir, sizeof g.dir, "%s", *value ? value : ".");
    else if (!strcmp(key, "CAUSEWAY_MAX_DUMPS"))
        g.max_dumps = (unsigned)atoi(value);
    else if (!strcmp(key, "CAUSEWAY_BUFFER")) {
        /* Applies to buffers taken from now on. */
        pthread_mutex_lock(&g.lock);
        g.nslots = parse_size(value, g.nslots * 8) / 8;
        if (g.nslots < 64)
            g.nslots = 64;
        pthread_mutex_unlock(&g.lock);
    }
    else
        rc = -ENOTSUP;
    pthread_mutex_unlock(&g.dump_lock);
    return rc;
}

int cw_rescan(void)
{
    if (!g.ready)
        return -EINVAL;
    return cw__patch_set(-1, g.control_running);
}

const char *cw_last_dump(void) { return g.dumps ? g.last_path : NULL; }
uint64_t cw_dump_count(void) { return g.dumps; }

void cw_enter_fn(uintptr_t id) { cw_enter(id); }
void cw_exit_fn(void) { cw_exit(); }
void cw_heartbeat_fn(void) { cw_heartbeat(); }

/* ---- -finstrument-functions hooks ----------------------------------------------------- */

void __cyg_profile_func_enter(void *fn, void *call_site) NOINSTR;
void __cyg_profile_func_exit(void *fn, void *call_site) NOINSTR;

void __cyg_profile_func_enter(void *fn, void *call_site)
{
    (void)call_site;
    cw_enter((uintptr_t)fn);
}

void __cyg_profile_func_exit(void *fn, void *call_site)
{
    (void)fn;
    (void)call_site;
    cw_exit();
}

/* ---- test hooks: the encoders with a given clock, and the layouts Rust mirrors ---------- */

void cw_test_enter(struct cw_thread *t, uintptr_t id, uint64_t ts)
{
    cw__enter_at(t, t->cur, id, ts);
}

void cw_test_exit(struct cw_thread *t, uint64_t ts)
{
    cw__exit_at(t, t->cur, ts);
}

uint64_t cw_test_layout(uint64_t *out, uint64_t n)
{
    uint64_t v[] = {
        sizeof(struct cw_snap), offsetof(struct cw_snap, slots), offsetof(struct cw_snap, end_tsc),
        offsetof(struct cw_snap, last_hi), sizeof(struct cw_dump_req),
        offsetof(struct cw_dump_req, ref_tsc), offsetof(struct cw_dump_req, snaps),
        offsetof(struct cw_dump_req, kernel_dump), sizeof(struct cw_thread),
        offsetof(struct cw_thread, last_hi), offsetof(struct cw_thread, parked),
        offsetof(struct cw_thread, ring_end),
    };
    uint64_t k = sizeof v / sizeof v[0];
    for (uint64_t i = 0; i < k && i < n; i++)
        out[i] = v[i];
    return k;
}
