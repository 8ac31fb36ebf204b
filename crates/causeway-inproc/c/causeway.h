/*
 * causeway.h - always-on in-process call tracing (libcauseway).
 *
 * Every traced thread writes 64-bit slots into a private ring buffer; nothing leaves
 * the process until a trigger (cw_dump, a signal, the stall watchdog) asks for a dump,
 * which stops the buffers just long enough to copy them, writes a causeway trace
 * (.cwt) and resumes. See docs/libcauseway.md for the encoding, the start/stop
 * protocol and the environment variables.
 *
 * Slot encoding (Hubble, OSDI'22, section 5.1; 64-bit mode), newest slot decoded first:
 *   entry, 32-bit id:  [ts:32 | id:32]            id >= CW_FIRST_ID
 *   entry, wide id:    [id:64] [ts:32 | 1]         any 64-bit id (addresses of a PIE)
 *   exit:              [ts:32 | 0]
 *   sync:              [tsc:64] [hi:32 | 2]        the clock's high half changed; hi is
 *                                                  the high half of the records before
 *   resume:            [tsc:64] [hi:32 | 3]        tracing (re)started: calls open before
 *                                                  it are not known after it
 * An entry or exit keeps the low 32 bits of the clock; the high half is the one the
 * next sync/resume record (or, for the newest records, the thread's state) says, so
 * times are rebuilt exactly however long a thread sleeps between trace points.
 * The low half of the newest slot tells what it is and how many slots it spans, so a
 * buffer decodes backwards from its write position without any other index.
 */
#ifndef CAUSEWAY_H
#define CAUSEWAY_H

#include <stddef.h>
#include <stdint.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define CW_TAG_EXIT 0u
#define CW_TAG_WIDE 1u
#define CW_TAG_SYNC 2u
#define CW_TAG_RESUME 3u
/* The smallest id an entry may carry in one slot; smaller ids go wide. */
#define CW_FIRST_ID 4u
/* First field of a CW_SPAN site, so a dump tells span sites from code addresses. */
#define CW_SITE_MAGIC 0x4e41505357435753ull

/* Per-thread state. `cur` is Hubble's `start` (NULL: not tracing; otherwise the next
 * slot) and `stop` its `stop` (0 running, 1 stop asked, above 1 stopped at that slot).
 * Both are plain variables shared with the control thread (no atomics, no locks).
 * `end` is the bound the fast path checks: the ring's end, or NULL while a stop is
 * asked, so that the next trace point takes the slow path, which answers. The fast
 * path then needs no test of `stop` of its own (docs/libcauseway.md). */
struct cw_thread {
    uint64_t *cur;
    uintptr_t stop;
    uint64_t *base;
    uint64_t *end;
    uint32_t last_hi;   /* high half of the clock of this thread's newest record */
    uint32_t state;     /* 0 not seen yet, 1 has a buffer, 2 runs untraced, 3 exited */
    uint64_t wraps;     /* times the write position went past the end */
    uint64_t beat;      /* clock at the last cw_heartbeat() */
    uint64_t *parked;   /* where this thread last stopped (written by it alone) */
    void *rec;          /* the library's record of this thread */
    uint64_t *ring_end; /* one past the ring's last slot (where writes wrap) */
};

struct cw_site {
    uint64_t magic;
    const char *name;
};

#if defined(__GNUC__)
#define CW_TLS_IE __attribute__((tls_model("initial-exec")))
#define CW_HOT static inline __attribute__((always_inline, no_instrument_function))
#define CW_COLD __attribute__((noinline, cold, no_instrument_function))
#define CW_LIKELY(x) __builtin_expect(!!(x), 1)
#define CW_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#error "libcauseway needs GCC or Clang"
#endif

/* Initial-exec TLS: one %fs-relative load, never __tls_get_addr (the library must be
 * linked or preloaded, not dlopen'ed, which LD_PRELOAD and -lcauseway both are).
 * A new thread's block starts with cur = end = cw__unseen: not NULL, so the trace point
 * goes on, and at the end of a (zero-length) ring, so it takes the slow path, which
 * gives the thread a buffer. Tracing off is then cur == NULL alone. */
extern __thread struct cw_thread cw_self CW_TLS_IE;
extern uint64_t cw__unseen[2];
/* Clock mode: 0 = TSC read at each trace point, 1 = the coarse clock below, which the
 * control thread refreshes (resolution = its period). */
extern int cw_clock_coarse;
extern volatile uint64_t cw_coarse_now;

/* Out-of-line slow paths of the trace point. */
void cw__first(struct cw_thread *t) CW_COLD;
uint64_t *cw__sync(struct cw_thread *t, uint64_t *p, uint64_t ts) CW_COLD;
void cw__ack_stop(struct cw_thread *t, uint64_t *p) CW_COLD;

#define CW_LOAD(x) (*(volatile __typeof__(x) *)&(x))
#define CW_STORE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

/* Define CW_CLOCK_COARSE before including this header to build trace points that read
 * only the coarse clock (no mode test, no rdtsc): the cheapest clock mode. Such a
 * program defines cw_coarse_wanted, which a linked libcauseway sees at start-up and
 * turns the coarse clock on; under LD_PRELOAD set CAUSEWAY_CLOCK=coarse as well. */
#ifdef CW_CLOCK_COARSE
__attribute__((weak)) const int cw_coarse_wanted = 1;
#endif
CW_HOT uint64_t cw__clock(void)
{
#ifdef CW_CLOCK_COARSE
    return cw_coarse_now;
#else
    if (CW_UNLIKELY(cw_clock_coarse))
        return cw_coarse_now;
    return __rdtsc();
#endif
}

/* The clock as its two halves, which is how the trace point uses it: the high half
 * for the sync check, the low half for the slot. The rdtsc builtin joins edx:eax into
 * one register and the trace point then split it again (four instructions per trace
 * point); with the halves as separate outputs neither happens. */
CW_HOT void cw__clock_halves(uint32_t *lo, uint32_t *hi)
{
#if defined(__x86_64__) && !defined(CW_CLOCK_COARSE)
    if (CW_LIKELY(!cw_clock_coarse)) {
        __asm__ volatile("rdtsc" : "=a"(*lo), "=d"(*hi));
        return;
    }
#endif
    uint64_t ts = cw__clock();
    *lo = (uint32_t)ts;
    *hi = (uint32_t)(ts >> 32);
}

CW_HOT uint64_t *cw__next(struct cw_thread *t, uint64_t *p)
{
    ++p;
    if (CW_UNLIKELY(p == t->ring_end)) {
        p = t->base;
        t->wraps++;
    }
    return p;
}

/* Publish the new write position (Figure 4, line 9). The compiler barrier keeps the
 * slot stores before the position store in program order. */
CW_HOT void cw__publish(struct cw_thread *t, uint64_t *p)
{
    __atomic_signal_fence(__ATOMIC_RELEASE);
    CW_STORE(t->cur, p);
}

/* Publish, then answer a pending stop (Figure 4, lines 9-11): the slow paths' end. A
 * stop request also lowers `end`, so every trace point after it comes here. */
CW_HOT void cw__commit(struct cw_thread *t, uint64_t *p)
{
    cw__publish(t, p);
    if (CW_UNLIKELY(CW_LOAD(t->stop) != 0))
        cw__ack_stop(t, p);
}

/* Slow path of the encoders: a clock sync is due, or the write would reach the end of
 * the ring (the fast path then never has to wrap between slots). */
void cw__enter_slow(struct cw_thread *t, uint64_t *p, uintptr_t id, uint64_t ts) CW_COLD;
void cw__exit_slow(struct cw_thread *t, uint64_t *p, uint64_t ts) CW_COLD;

/* Slot stores are non-temporal (movnti) on x86-64. A default ring (32 MiB) is far
 * larger than the caches, so every new line a plain store touches is first read from
 * memory (read for ownership) only to be overwritten; write-combined stores skip that
 * read and leave the caches to the program (measured: 0.3-0.6 ns less per trace point,
 * bench/RESULTS.md). They are weakly ordered, so the stop answer ends with sfence and a
 * dump copying a thread that did not answer first runs membarrier(2), which makes every
 * running thread of the process drain its write-combining buffers (docs/libcauseway.md).
 * Plain asm, not the SSE intrinsic: the patch trampolines are built general-regs-only. */
#if defined(__x86_64__)
#define CW_SLOT_STORE(slot, v) __asm__("movnti %1, %0" : "=m"(*(slot)) : "r"((uint64_t)(v)))
#define cw__drain_slots() __asm__ volatile("sfence" ::: "memory")
#else
#define CW_SLOT_STORE(slot, v) (*(slot) = (v))
#define cw__drain_slots() __atomic_thread_fence(__ATOMIC_RELEASE)
#endif

/* The slots of an entry / an exit at p, once the caller has checked the room (two
 * slots) and the clock's high half; return the next write position. */
CW_HOT uint64_t *cw__put_enter(uint64_t *p, uintptr_t id, uint64_t ts)
{
    uint64_t lo = ts << 32; /* the clock's low half, in the slot's high half */
    if (CW_LIKELY((uint64_t)id - CW_FIRST_ID < (1ull << 32) - CW_FIRST_ID)) {
        CW_SLOT_STORE(&p[0], lo | (uint64_t)id);
        return p + 1;
    }
    CW_SLOT_STORE(&p[0], (uint64_t)id);
    CW_SLOT_STORE(&p[1], lo | CW_TAG_WIDE);
    return p + 2;
}

CW_HOT uint64_t *cw__put_exit(uint64_t *p, uint64_t ts)
{
    CW_SLOT_STORE(&p[0], (ts << 32) | CW_TAG_EXIT);
    return p + 1;
}

/* The encoders, with the timestamp as a parameter so tests can drive them. One
 * compare covers the end of the ring for both one- and two-slot records. */
CW_HOT void cw__enter_lh(struct cw_thread *t, uint64_t *p, uintptr_t id, uint32_t lo,
                         uint32_t hi)
{
    if (CW_UNLIKELY(hi != t->last_hi || p + 2 >= t->end)) {
        cw__enter_slow(t, p, id, ((uint64_t)hi << 32) | lo);
        return;
    }
    cw__publish(t, cw__put_enter(p, id, lo));
}

CW_HOT void cw__exit_lh(struct cw_thread *t, uint64_t *p, uint32_t lo, uint32_t hi)
{
    if (CW_UNLIKELY(hi != t->last_hi || p + 1 >= t->end)) {
        cw__exit_slow(t, p, ((uint64_t)hi << 32) | lo);
        return;
    }
    cw__publish(t, cw__put_exit(p, lo));
}

CW_HOT void cw__enter_at(struct cw_thread *t, uint64_t *p, uintptr_t id, uint64_t ts)
{
    cw__enter_lh(t, p, id, (uint32_t)ts, (uint32_t)(ts >> 32));
}

CW_HOT void cw__exit_at(struct cw_thread *t, uint64_t *p, uint64_t ts)
{
    cw__exit_lh(t, p, (uint32_t)ts, (uint32_t)(ts >> 32));
}

/* Define CW_KEYED before including this header (x86-64) to put every trace point
 * behind a patched jump, as the kernel's static keys do: the trace point begins with a
 * 5-byte nop, listed in the section cw_keys, which the library turns into a jump to
 * the trace point's body while tracing is on (cw_start) and back into the nop while it
 * is off (cw_stop, CAUSEWAY_START=off). Off then costs the nop (and at most one nop of
 * padding, which keeps the 5 bytes inside one aligned 8-byte word so that one store
 * patches them whole); on costs two more jumps. Each entry of cw_keys is the site and
 * the body, as offsets from the entry; the entries are linked to the code's section
 * ("o"), so a C++ inline function's copies that the linker drops take theirs along.
 * See docs/libcauseway.md, "Keyed trace points". */
#if defined(CW_KEYED) && defined(__x86_64__)
#define CW__KEY(body)                                                                  \
    __asm__ goto(".p2align 3,,4\n"                                                     \
                 ".Lcw_key%=: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"                    \
                 ".pushsection cw_keys, \"ao\", @progbits, .Lcw_key%=\n"               \
                 ".p2align 3\n"                                                        \
                 ".long .Lcw_key%= - ., %l[" #body "] - .\n"                           \
                 ".popsection"                                                         \
                 :                                                                     \
                 :                                                                     \
                 :                                                                     \
                 : body);                                                              \
    return;                                                                            \
    body:
#else
#define CW__KEY(body)
#endif

/* Trace points. Off (or a thread without a buffer) costs one TLS load and a branch;
 * with CW_KEYED, off costs the nop. */
CW_HOT void cw_enter(uintptr_t id)
{
    CW__KEY(cw_on);
    struct cw_thread *t = &cw_self;
    uint64_t *p = CW_LOAD(t->cur);
    if (p == NULL)
        return;
    uint32_t lo, hi;
    cw__clock_halves(&lo, &hi);
    cw__enter_lh(t, p, id, lo, hi);
}

CW_HOT void cw_exit(void)
{
    CW__KEY(cw_on);
    struct cw_thread *t = &cw_self;
    uint64_t *p = CW_LOAD(t->cur);
    if (CW_UNLIKELY(p == NULL))
        return;
    uint32_t lo, hi;
    cw__clock_halves(&lo, &hi);
    cw__exit_lh(t, p, lo, hi);
}

/* Heartbeat of an event loop: the watchdog dumps when a thread that has called it
 * goes longer than the stall threshold without calling it again. */
void cw__watch(struct cw_thread *t) CW_COLD;
CW_HOT void cw_heartbeat(void)
{
    struct cw_thread *t = &cw_self;
    if (CW_UNLIKELY(t->beat == 0))
        cw__watch(t);
    CW_STORE(t->beat, __rdtsc());
}

/* A named span for the rest of the enclosing block. */
CW_HOT void cw__span_end(int *unused)
{
    (void)unused;
    cw_exit();
}
#define CW__CAT2(a, b) a##b
#define CW__CAT(a, b) CW__CAT2(a, b)
#define CW_SPAN(name_literal)                                                          \
    static const struct cw_site CW__CAT(cw__site_, __LINE__) = {CW_SITE_MAGIC,         \
                                                                (name_literal)};       \
    cw_enter((uintptr_t)&CW__CAT(cw__site_, __LINE__));                                \
    __attribute__((cleanup(cw__span_end), unused)) int CW__CAT(cw__span_, __LINE__) = 0

/* Out-of-line trace points for callers that cannot inline C (Rust, Python, other
 * languages through FFI): the same encoding, plus the cost of a call. */
void cw_enter_fn(uintptr_t id);
void cw_exit_fn(void);
void cw_heartbeat_fn(void);

/* Control (any thread). Each returns 0 or a negative errno. */
/* Write a trace now; `reason` is kept in the trace. Blocks until the file is written. */
int cw_dump(const char *reason);
/* Stop / restart tracing in every thread (Figure 4), without dumping. */
int cw_stop(void);
int cw_start(void);
/* Path of the last trace written, or NULL. */
const char *cw_last_dump(void);
/* Number of dumps written since start. */
uint64_t cw_dump_count(void);
/* Change a setting at run time: "CAUSEWAY_OUTPUT" (directory of the traces),
 * "CAUSEWAY_MAX_DUMPS", "CAUSEWAY_BUFFER" (for threads that start tracing later); the
 * others are read from the environment at start-up. */
int cw_config(const char *key, const char *value);
/* Initialize now (normally done by a constructor from the environment). */
int cw_init(void);
/* Link anchor: `-Wl,-u,cw_link_anchor` makes the static linker take libcauseway.a's
 * start-up constructor into a program that references nothing of the library, as one
 * built only with -fpatchable-function-entry does. See docs/libcauseway.md, "Linking". */
extern const int cw_link_anchor;
/* Number of -fpatchable-function-entry sites the library patches (switched to calls
 * by cw_start, to nops by cw_stop); *skipped (if not NULL): sites it had to leave
 * alone (not 8-byte aligned, or not five nops). See docs/libcauseway.md. */
uint64_t cw_patch_sites(uint64_t *skipped);
/* Number of keyed trace points (CW_KEYED) the library switches with cw_start/cw_stop;
 * those it had to leave alone count in cw_patch_sites' *skipped. */
uint64_t cw_keyed_sites(void);
/* Find the trace points of libraries loaded with dlopen since the library last looked
 * (and forget those unloaded) now, rather than at the control thread's next tick
 * (100 ms, or a quarter of the stall threshold). Returns 0 or a negative errno. See
 * docs/libcauseway.md, "Libraries loaded later". */
int cw_rescan(void);

#ifdef __cplusplus
}
#endif
#endif
