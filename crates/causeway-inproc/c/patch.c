/*
 * patch.c - trace points at -fpatchable-function-entry sites, patched at run time.
 *
 * A function built with -fpatchable-function-entry=5 starts with five one-byte nops and
 * the linker lists its address in the section __patchable_function_entries. At start-up
 * (the process still single-threaded) each site's five nops become one five-byte nop,
 * and each site gets a stub of its own near it (cw_patch.h has the layout); turning
 * tracing on replaces the nop with `jmp stub`, off puts the nop back. Off therefore
 * costs the nop alone. Entries found while other threads may run them are switched by
 * their first byte instead ("entries switched by one byte" below).
 *
 * The stub calls the entry trampoline, then calls the function's body itself, so the
 * body returns into the stub and the stub's exit trampoline returns to the caller: the
 * caller's return address waits on a per-thread shadow stack meanwhile, with the stack
 * slot that held it, so frames a longjmp skipped are recognized (and their exits
 * recorded) at the next traced entry or exit after it. The trampolines and their fast
 * paths are in patch_tramp.c; this file has the sites, the stubs and the slow paths.
 *
 * Each site's five bytes must lie inside one aligned 8-byte word, so one atomic store
 * swaps the whole instruction and a thread never runs half of an old and half of a new
 * one (true for every function aligned to 8 or more: GCC's default at -O2; others are
 * skipped and counted). After each batch of stores, membarrier(SYNC_CORE) makes every
 * thread of the process serialize before it runs code again, as cross-modifying code
 * must. See docs/libcauseway.md, "Patched function entries".
 *
 * The same site list switches keyed trace points (causeway.h, CW_KEYED): inline trace
 * points whose compiled first instruction is a 5-byte nop, listed in the section
 * cw_keys, which becomes a jump to the trace point's body while tracing is on.
 */
#define _GNU_SOURCE
#include "causeway.h"
#include "cw_patch.h"

#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOINSTR __attribute__((no_instrument_function))
#define HIDDEN __attribute__((visibility("hidden")))

static const uint8_t NOP1x5[5] = {0x90, 0x90, 0x90, 0x90, 0x90};
static const uint8_t NOP5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};

/* ---- the shadow stack of return addresses ------------------------------------------ */

/* 96 KiB: 4095 frames of 24 bytes. */
#define SHADOW_BYTES (96u << 10)
#define STALE_SPAN ((uintptr_t)16 << 20)

__thread struct cw_shadow *cw__shadow CW_TLS_IE;
uint64_t cw__xsave_bytes;
uint64_t cw__xsave_mask;
static pthread_key_t shadow_key;

static NOINSTR void shadow_free(void *p)
{
    /* The thread is exiting: its patched frames (if any) will never return. */
    cw__shadow = NULL;
    munmap(p, SHADOW_BYTES);
}

static NOINSTR __attribute__((cold)) struct cw_shadow *shadow_new(void)
{
    struct cw_shadow *s =
        mmap(NULL, SHADOW_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED)
        return NULL;
    s->depth = 0;
    s->cap = (SHADOW_BYTES - sizeof *s) / sizeof s->e[0];
    cw__shadow = s;
    pthread_setspecific(shadow_key, s);
    return s;
}

/* The slow paths record through cw_enter/cw_exit, whose own slow paths answer a
 * stop request (a request lowers the thread's end, see causeway.h). */
uint64_t cw__pfe_enter_slow(const uint8_t *r1, uint64_t *slot)
{
    uint64_t fn = *(const uint64_t *)(r1 + (CW_STUB_ID - CW_STUB_R1));
    uint64_t untraced = fn + 5;
    struct cw_thread *t = &cw_self;
    if (CW_LOAD(t->cur) == NULL)
        return untraced;
    struct cw_shadow *s = cw__shadow;
    if (CW_UNLIKELY(s == NULL) && (s = shadow_new()) == NULL)
        return untraced;
    uint32_t d = s->depth;
    /* Entries whose slot lies below ours belong to frames a longjmp has left: a live
     * caller's slot is above its callee's. Equal slots are a tail call (the caller's
     * frame is live and its slot still holds its stub's return address) or a sibling
     * called after a longjmp out of the frame that had the slot (the slot holds a
     * fresh return address). Close dead frames now, so the calls after a longjmp are
     * not nested in the frames it skipped. The span bound keeps a signal handler on an
     * alternate stack, which may lie anywhere, from closing the frames of the stack it
     * interrupted (unless it is within 16 MiB below). */
    while (d > 0 && ((s->e[d - 1].slot == slot && *slot != s->e[d - 1].mark) ||
                     (s->e[d - 1].slot < slot &&
                      (uintptr_t)slot - (uintptr_t)s->e[d - 1].slot <= STALE_SPAN))) {
        d--;
        cw_exit();
    }
    if (d != s->depth) {
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        s->depth = d;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
    if (CW_UNLIKELY(d == s->cap))
        return untraced; /* deeper than the shadow stack: neither entry nor exit */
    struct cw_shadow_ent *e = &s->e[d];
    e->ret = *slot;
    e->slot = slot;
    e->mark = (uint64_t)(uintptr_t)(r1 + (CW_STUB_R2 - CW_STUB_R1));
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    s->depth = d + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    cw_enter((uintptr_t)fn);
    return 0;
}

uint64_t cw__pfe_exit_slow(uint64_t *slot)
{
    struct cw_shadow *s = cw__shadow;
    uint32_t d = s ? s->depth : 0;
    /* Newest first: the returning frame is the top unless a longjmp (or a signal
     * handler left by siglongjmp) skipped frames above it. */
    uint32_t i = d;
    while (i > 0 && s->e[i - 1].slot != slot)
        i--;
    if (CW_UNLIKELY(i == 0)) {
        static const char msg[] = "libcauseway: a patched function returned through an "
                                  "unknown stack slot; aborting\n";
        ssize_t unused_rc = write(2, msg, sizeof msg - 1);
        (void)unused_rc;
        abort();
    }
    *slot = s->e[i - 1].ret;
    /* Frames skipped by a longjmp end now; then the returning one. */
    for (uint32_t k = i; k < d; k++)
        cw_exit();
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    s->depth = i - 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    cw_exit();
    return 0;
}

/* The XSAVE components the slow paths save: x87, SSE, AVX, AVX-512 (mask, upper
 * halves, upper registers), those the OS enabled; and the area's size for them. */
static NOINSTR void xsave_setup(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
        return; /* FXSAVE then */
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    uint64_t mask = (((uint64_t)hi << 32) | lo) & 0xe7;
    uint64_t size = 576; /* the legacy area and the header */
    for (unsigned i = 2; i < 8; i++) {
        if (!((mask >> i) & 1))
            continue;
        __cpuid_count(0xd, i, a, b, c, d);
        if ((uint64_t)a + b > size)
            size = (uint64_t)a + b;
    }
    cw__xsave_mask = mask;
    cw__xsave_bytes = (size + 63) & ~(uint64_t)63;
}

/* ---- stubs -------------------------------------------------------------------------- */

static NOINSTR int fits_rel32(intptr_t d) { return d >= INT32_MIN && d <= INT32_MAX; }

static NOINSTR void put_rel32(uint8_t *at, const uint8_t *target, const uint8_t *next)
{
    int32_t rel = (int32_t)(target - next);
    memcpy(at, &rel, 4);
}

/* Maps `bytes` from which a rel32 reaches every address of [lo, hi) and back: the
 * nearest free spot, 1 MiB steps outward. */
static NOINSTR uint8_t *map_near(uintptr_t lo, uintptr_t hi, size_t bytes)
{
    const uintptr_t pg = 4096;
    for (uintptr_t step = 1 << 20; step < (uintptr_t)1 << 31; step += 1 << 20) {
        for (int dir = -1; dir <= 1; dir += 2) {
            if (dir < 0 && lo < step + bytes)
                continue;
            uintptr_t want = (dir < 0 ? lo - step - bytes : hi + step) & ~(pg - 1);
            if (!fits_rel32((intptr_t)(want - lo)) || !fits_rel32((intptr_t)(lo - want)) ||
                !fits_rel32((intptr_t)(want + bytes - lo)) ||
                !fits_rel32((intptr_t)(hi - want)))
                continue;
            void *p = mmap((void *)want, bytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (p == MAP_FAILED)
                continue;
            if ((uintptr_t)p != want) { /* old kernels ignore the flag */
                munmap(p, bytes);
                continue;
            }
            return p;
        }
    }
    return NULL;
}

/* One site's stub (layout in cw_patch.h). `hdr` is its area's first 16 bytes: the
 * trampolines' addresses, for the indirect forms when they are out of rel32 reach
 * (libcauseway.so far from the program). */
static NOINSTR void put_stub(uint8_t *st, const uint8_t *hdr, const uint8_t *fn)
{
    const uint8_t *enter = (const uint8_t *)(uintptr_t)cw__pfe_enter;
    const uint8_t *ex = (const uint8_t *)(uintptr_t)cw__pfe_exit;
    if (fits_rel32(enter - (st + 6))) {
        st[0] = 0x90; /* nop; call rel32 */
        st[1] = 0xe8;
        put_rel32(st + 2, enter, st + 6);
    } else {
        st[0] = 0xff; /* call *rel32(%rip) */
        st[1] = 0x15;
        put_rel32(st + 2, hdr, st + 6);
    }
    static const uint8_t drop[5] = {0x48, 0x8d, 0x64, 0x24, 0x08}; /* lea 8(%rsp),%rsp */
    memcpy(st + 6, drop, 5);
    st[11] = 0xe8; /* call fn+5 */
    put_rel32(st + 12, fn + 5, st + 16);
    if (fits_rel32(ex - (st + 22))) {
        st[16] = 0x90; /* nop; jmp rel32 */
        st[17] = 0xe9;
        put_rel32(st + 18, ex, st + 22);
    } else {
        st[16] = 0xff; /* jmp *rel32(%rip) */
        st[17] = 0x25;
        put_rel32(st + 18, hdr + 8, st + 22);
    }
    st[22] = st[23] = 0xcc;
    uint64_t id = (uint64_t)(uintptr_t)fn;
    memcpy(st + CW_STUB_ID, &id, 8);
}

/* ---- finding and patching the sites ------------------------------------------------ */

/* Sites are found per loaded object (the program, its libraries, and libraries loaded
 * later with dlopen) and written only while the dynamic linker's list of objects is
 * locked with the object in it (inside dl_iterate_phdr's callback for that object):
 * dlclose takes the object off the list under that lock before it unmaps it, so a
 * site is never written after its code is gone. Each write is a compare-and-swap from
 * the word the library left there: a word that changed behind its back (code replaced
 * some other way) is left alone and its site dropped, never overwritten. */

/* A function entry prepared at start-up (five one-byte nops made one 5-byte nop, which
 * becomes `jmp stub`), a keyed trace point (causeway.h, CW_KEYED), or a function entry
 * whose first byte alone is switched (below, "Entries switched by one byte"). */
enum site_kind { SITE_ENTRY, SITE_KEY, SITE_ENTRY_BYTE };

struct site {
    uint64_t *word; /* the aligned 8-byte word holding the site's 5 bytes (its first) */
    uint64_t off;   /* the word with the 5-byte nop (five one-byte nops) */
    uint64_t on;    /* the word with the jump to the site's stub, keyed body (or mirror) */
    uint64_t cur;   /* the word the library last wrote or found there */
    uint32_t obj;   /* its object's number (struct obj.id) */
    int kind;       /* enum site_kind */
};

/* A loaded object the library has scanned. */
struct obj {
    uintptr_t addr;    /* dlpi_addr */
    const void *phdr;  /* dlpi_phdr: with addr and name, tells it from a later object */
    char *name;        /* dlpi_name ("" for the program) */
    uint32_t id;       /* its sites' obj */
    unsigned gen;      /* the last walk that saw it */
    size_t first, n;   /* its sites: P.sites[first .. first + n) */
    uintptr_t *mirror; /* its mirror pages (entries switched by one byte) */
    size_t nmirror;
};

static struct {
    pthread_mutex_t lock;
    struct site *sites;
    size_t n, cap;
    size_t keyed; /* how many of the n are keyed trace points */
    struct obj *objs;
    size_t nobjs, objcap;
    uint32_t next_id;
    unsigned gen;
    unsigned long long adds, subs; /* dl_iterate_phdr's load and unload counts, last walk */
    uint64_t skipped; /* sites left alone for good (alignment, no stub in reach, changed) */
    uint64_t stub_bytes; /* mapped for stubs */
    uintptr_t *spare;    /* mirror pages of unloaded objects, for a library loaded again */
    size_t nspare;
    int on;
    int ready;  /* the shadow stacks, XSAVE size and membarrier set up */
    int broken; /* mprotect refused: patching is off for good */
    int by_byte; /* CAUSEWAY_PATCH=byte: every entry switched by one byte */
} P = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Room for one more site; 0 if there is none (the site is then counted as skipped). */
static NOINSTR int site_room(void)
{
    if (P.n < P.cap)
        return 1;
    size_t cap = P.cap ? P.cap * 2 : 1024;
    struct site *s = realloc(P.sites, cap * sizeof *s);
    if (s == NULL)
        return 0;
    P.sites = s;
    P.cap = cap;
    return 1;
}

/* Append a site whose word holds `off` or `on` (the caller checked the room); it is
 * found holding what the word holds now. */
static NOINSTR void record_site(uint64_t *word, const uint8_t off[8], const uint8_t on[8],
                                int kind, uint32_t obj)
{
    struct site *s = &P.sites[P.n++];
    s->word = word;
    memcpy(&s->cur, word, 8); /* five one-byte nops for an entry, the nop for a key */
    memcpy(&s->off, off, 8);
    memcpy(&s->on, on, 8);
    s->obj = obj;
    s->kind = kind;
    P.keyed += kind == SITE_KEY;
}

/* Record the site at `at` of object `obj`: off is the 5-byte nop, on `jmp to` (the
 * 8-byte word holding the 5 bytes, with its other bytes as they are). */
static NOINSTR void push_site(uint8_t *at, const uint8_t *to, int kind, uint32_t obj)
{
    uint64_t *word = (uint64_t *)((uintptr_t)at & ~(uintptr_t)7);
    unsigned k = (unsigned)((uintptr_t)at & 7);
    uint8_t off[8], on[8];
    memcpy(off, word, 8);
    memcpy(off + k, NOP5, 5);
    memcpy(on, off, 8);
    on[k] = 0xe9;
    put_rel32(on + k + 1, to, at + 5);
    record_site(word, off, on, kind, obj);
}

/* One site, with its stub at `stub` (in an area whose first 16 bytes are `hdr`).
 * Returns 1 if it took the stub, 0 if the site is left alone (counted). */
static NOINSTR int add_site(uint8_t *at, uint8_t *stub, const uint8_t *hdr, uint32_t obj)
{
    if (((uintptr_t)at & 7) > 3 || memcmp(at, NOP1x5, 5) != 0 ||
        !fits_rel32(stub - (at + 5)) || !fits_rel32((at + 5) - (stub + CW_STUB_R2)) ||
        !site_room()) {
        P.skipped++;
        return 0;
    }
    put_stub(stub, hdr, at);
    push_site(at, stub, SITE_ENTRY, obj);
    return 1;
}

/* The keyed trace points of one cw_keys section: each entry is the site and the
 * trace point's body as 32-bit offsets from the entry (causeway.h, CW__KEY). The
 * compiler emitted the site as one 5-byte nop already, so it is patched like an entry
 * that start-up has prepared, and at any time, threads or not. */
static NOINSTR void add_keys(const int32_t *e, size_t n, uint32_t obj)
{
    for (size_t k = 0; k + 1 < n; k += 2) {
        uint8_t *at = (uint8_t *)&e[k] + e[k];
        const uint8_t *body = (const uint8_t *)&e[k + 1] + e[k + 1];
        if (((uintptr_t)at & 7) > 3 || memcmp(at, NOP5, 5) != 0 ||
            !fits_rel32(body - (at + 5)) || !site_room()) {
            P.skipped++;
            continue;
        }
        push_site(at, body, SITE_KEY, obj);
    }
}

/* Live entries (0: a function the linker discarded) of a __patchable_function_entries
 * section. */
static NOINSTR size_t live_entries(const uint64_t *e, size_t n)
{
    size_t live = 0;
    for (size_t k = 0; k < n; k++)
        live += e[k] != 0;
    return live;
}

/* A stub area for `live` stubs within rel32 reach of [lo, hi): int3-filled, its first
 * 16 bytes the trampolines' addresses (the header the indirect stub forms read). Sets
 * *bytes; NULL (the stubs counted as skipped) if no room is near. */
static NOINSTR uint8_t *stub_area(uintptr_t lo, uintptr_t hi, size_t live, size_t *bytes)
{
    *bytes = ((live + 1) * CW_STUB_BYTES + 4095) & ~(size_t)4095;
    uint8_t *area = map_near(lo, hi, *bytes);
    if (area == NULL) {
        P.skipped += live;
        return NULL;
    }
    memset(area, 0xcc, *bytes);
    uint64_t tramp[2] = {(uint64_t)(uintptr_t)cw__pfe_enter, (uint64_t)(uintptr_t)cw__pfe_exit};
    memcpy(area, tramp, sizeof tramp);
    return area;
}

/* The sites of one __patchable_function_entries section, their stubs in one area
 * mapped near them. */
static NOINSTR void add_sites(const uint64_t *e, size_t n, uint32_t obj)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    size_t live = live_entries(e, n);
    if (live == 0)
        return;
    for (size_t k = 0; k < n; k++) {
        if (!e[k])
            continue;
        lo = e[k] < lo ? e[k] : lo;
        hi = e[k] + 5 > hi ? e[k] + 5 : hi;
    }
    size_t bytes;
    uint8_t *area = stub_area(lo, hi, live, &bytes);
    if (area == NULL)
        return;
    uint8_t *st = area + CW_STUB_BYTES;
    for (size_t k = 0; k < n; k++)
        if (e[k] && add_site((uint8_t *)(uintptr_t)e[k], st, area, obj))
            st += CW_STUB_BYTES;
    /* Stub areas stay mapped when their object is unloaded: a thread could still be
     * returning through one (a few pages per object ever loaded). */
    mprotect(area, bytes, PROT_READ | PROT_EXEC);
    P.stub_bytes += bytes;
}

/* ---- entries switched by one byte ---------------------------------------------------
 *
 * Preparing an entry (its five one-byte nops made one instruction) is unsafe while
 * another thread may be part-way through the nops. The entries of a library loaded
 * while threads run (or of a program that has threads when the library starts) are
 * switched by their first byte alone instead: 0x90 (off: five one-byte nops) or 0xe9,
 * which with the four nops after it reads `jmp rel32` with rel32 = 0x90909090, a jump
 * MIRROR_BACK bytes back from the site. The library maps pages there, the sites'
 * mirror, each site's mirror holding `jmp stub`. The four bytes a thread part-way
 * through the nops may still run never change, and a one-byte store is atomic, so no
 * thread ever runs a torn instruction. Off costs five nops rather than one; on, one
 * jump more than a prepared entry. */
#define MIRROR_BACK ((uintptr_t)0x6f6f6f6b) /* -(5 + (int32_t)0x90909090) */

static NOINSTR int by_addr(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The mirror pages mapped so far for one section, in ascending order (its sites are
 * taken in ascending order). */
struct mirror {
    uintptr_t *pages;
    size_t n, cap;
    uintptr_t refused; /* the last page that could not be mapped */
};

/* Whether the page at `page` is mapped for the mirror (mapping it if need be). */
static NOINSTR int mirror_page(struct mirror *m, uintptr_t page)
{
    if (m->n && m->pages[m->n - 1] == page)
        return 1;
    if (page == m->refused)
        return 0;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        uintptr_t *a = realloc(m->pages, cap * sizeof *a);
        if (!a)
            return 0;
        m->pages = a;
        m->cap = cap;
    }
    void *p = mmap((void *)page, 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != MAP_FAILED && (uintptr_t)p != page)
        munmap(p, 4096); /* an old kernel ignored the flag */
    if (p == MAP_FAILED || (uintptr_t)p != page) {
        /* A library loaded again where it was before finds its old mirror there. */
        size_t k = 0;
        while (k < P.nspare && P.spare[k] != page)
            k++;
        if (k == P.nspare || mprotect((void *)page, 4096, PROT_READ | PROT_WRITE) != 0) {
            m->refused = page;
            return 0;
        }
        P.spare[k] = P.spare[--P.nspare];
        p = (void *)page;
    }
    memset(p, 0xcc, 4096);
    m->pages[m->n++] = page;
    return 1;
}

/* Record a site switched by its first byte: off is the word as it is, on the same with
 * 0xe9 at the site. Any alignment: only the one byte changes. */
static NOINSTR void push_byte_site(uint8_t *at, uint32_t obj)
{
    uint64_t *word = (uint64_t *)((uintptr_t)at & ~(uintptr_t)7);
    uint8_t off[8], on[8];
    memcpy(off, word, 8);
    memcpy(on, off, 8);
    on[(uintptr_t)at & 7] = 0xe9;
    record_site(word, off, on, SITE_ENTRY_BYTE, obj);
}

/* The sites of one __patchable_function_entries section, switched by one byte: their
 * mirrors, and their stubs in one area mapped near the mirrors (which are within rel32
 * reach of the sites, 1.74 GiB away). */
static NOINSTR void add_sites_by_byte(const uint64_t *e, size_t n, struct obj *o)
{
    size_t live = live_entries(e, n);
    uint64_t *at = live ? malloc(live * sizeof *at) : NULL;
    if (at == NULL) {
        P.skipped += live;
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (e[i])
            at[k++] = e[i];
    qsort(at, live, sizeof *at, by_addr);
    size_t bytes = 0;
    uint8_t *area = NULL;
    if (at[0] > MIRROR_BACK + ((uintptr_t)1 << 24)) /* else: below the mirror's reach */
        area = stub_area(at[0] - MIRROR_BACK, at[live - 1] + 5 - MIRROR_BACK, live, &bytes);
    else
        P.skipped += live;
    if (area == NULL) {
        free(at);
        return;
    }
    uint8_t *st = area + CW_STUB_BYTES;
    struct mirror m = {0};
    for (k = 0; k < live; k++) {
        uint8_t *site = (uint8_t *)(uintptr_t)at[k];
        uint8_t *mir = site - MIRROR_BACK;
        uintptr_t pg = (uintptr_t)mir & ~(uintptr_t)4095;
        if (memcmp(site, NOP1x5, 5) != 0 || !fits_rel32(st - (mir + 5)) ||
            !fits_rel32((site + 5) - (st + CW_STUB_R2)) || !mirror_page(&m, pg) ||
            !mirror_page(&m, ((uintptr_t)mir + 4) & ~(uintptr_t)4095) || !site_room()) {
            P.skipped++;
            continue;
        }
        put_stub(st, area, site);
        mir[0] = 0xe9;
        put_rel32(mir + 1, st, mir + 5);
        push_byte_site(site, o->id);
        st += CW_STUB_BYTES;
    }
    for (size_t i = 0; i < m.n; i++)
        mprotect((void *)m.pages[i], 4096, PROT_READ | PROT_EXEC);
    mprotect(area, bytes, PROT_READ | PROT_EXEC);
    P.stub_bytes += bytes + m.n * 4096;
    uintptr_t *all = realloc(o->mirror, (o->nmirror + m.n) * sizeof *all);
    if (all) { /* else the pages are never reused: a library loaded again skips them */
        memcpy(all + o->nmirror, m.pages, m.n * sizeof *all);
        o->mirror = all;
        o->nmirror += m.n;
    }
    free(m.pages);
    free(at);
}


struct walk;
static int alone(struct walk *w);

/* The cw_keys and __patchable_function_entries sections of one loaded object, from its
 * file's section headers (sections are not in the program headers); the entries
 * themselves are read from memory, where the dynamic linker has relocated them.
 * Patchable entries are prepared if no other thread can be running them, else
 * switched by one byte. */
static NOINSTR void scan_object(const char *path, uintptr_t base, struct obj *o, struct walk *w)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    char *names = NULL;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum)
        goto done;
    size_t shbytes = (size_t)eh.e_shnum * sizeof *sh;
    sh = malloc(shbytes);
    if (!sh || pread(fd, sh, shbytes, (off_t)eh.e_shoff) != (ssize_t)shbytes)
        goto done;
    const Elf64_Shdr *str = &sh[eh.e_shstrndx];
    names = malloc(str->sh_size + 1);
    if (!names || pread(fd, names, str->sh_size, (off_t)str->sh_offset) != (ssize_t)str->sh_size)
        goto done;
    names[str->sh_size] = 0;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        if (sh[i].sh_name >= str->sh_size || !(sh[i].sh_flags & SHF_ALLOC))
            continue;
        const char *name = names + sh[i].sh_name;
        uintptr_t at = base + sh[i].sh_addr;
        if (strcmp(name, "__patchable_function_entries") == 0) {
            const uint64_t *e = (const uint64_t *)at;
            size_t n = sh[i].sh_size / 8;
            if (live_entries(e, n) == 0)
                continue;
            if (alone(w))
                add_sites(e, n, o->id);
            else
                add_sites_by_byte(e, n, o);
        } else if (strcmp(name, "cw_keys") == 0) {
            add_keys((const int32_t *)at, sh[i].sh_size / 4, o->id);
        }
    }
done:
    free(names);
    free(sh);
    close(fd);
}

/* Threads of the process, from /proc (0 if unknown). */
static NOINSTR int thread_count(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return 0;
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Threads:", 8))
            n = atoi(line + 8);
    fclose(f);
    return n;
}

/* Once, before the first site is written: what the trampolines and writes need. */
static NOINSTR void setup_once(void)
{
    if (P.ready)
        return;
    P.ready = 1;
    pthread_key_create(&shadow_key, shadow_free);
    xsave_setup();
    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
}

/* Sites in object order, so each object's sites are one run, and by address within
 * it, so its writes open each page once; `first` and `n` of each object recomputed.
 * After sites were added or dropped. */
static NOINSTR int by_obj(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    if (x->obj != y->obj)
        return (x->obj > y->obj) - (x->obj < y->obj);
    return (x->word > y->word) - (x->word < y->word);
}

static NOINSTR void reindex(void)
{
    qsort(P.sites, P.n, sizeof *P.sites, by_obj);
    size_t i = 0;
    for (size_t k = 0; k < P.nobjs; k++) {
        struct obj *o = &P.objs[k];
        while (i < P.n && P.sites[i].obj < o->id)
            i++;
        o->first = i;
        while (i < P.n && P.sites[i].obj == o->id)
            i++;
        o->n = i - o->first;
    }
    P.keyed = 0;
    for (size_t j = 0; j < P.n; j++)
        P.keyed += P.sites[j].kind == SITE_KEY;
}

/* Store each of an object's sites in state `on` (compare-and-swap from the word left
 * there), a page opened for writing at a time. Returns 0, or a negative errno if a page
 * could not be made writable. Sites found changed are marked for dropping (word NULL). */
static NOINSTR int write_obj(const struct obj *o, int on, int *wrote, int *dropped)
{
    const uintptr_t pg = 4096;
    uintptr_t open_page = 0;
    int rc = 0;
    for (size_t i = o->first; i < o->first + o->n; i++) {
        struct site *s = &P.sites[i];
        uint64_t want = on ? s->on : s->off;
        if (s->word == NULL || s->cur == want)
            continue;
        uintptr_t page = (uintptr_t)s->word & ~(pg - 1);
        if (page != open_page) {
            if (open_page)
                mprotect((void *)open_page, pg, PROT_READ | PROT_EXEC);
            open_page = 0;
            if (mprotect((void *)page, pg, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
                rc = -errno;
                break;
            }
            open_page = page;
        }
        uint64_t expect = s->cur;
        if (__atomic_compare_exchange_n(s->word, &expect, want, 0, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED)) {
            s->cur = want;
            *wrote = 1;
        } else {
            s->word = NULL;
            P.skipped++;
            *dropped = 1;
        }
    }
    if (open_page)
        mprotect((void *)open_page, pg, PROT_READ | PROT_EXEC);
    return rc;
}

/* One walk over the loaded objects. */
struct walk {
    int first;   /* the next object is the program (it comes first, unnamed) */
    int own;     /* the library's own threads, or -1 (walk()) */
    int alone;   /* no other thread can be running the program's code (-1: not known yet) */
    int poll;    /* stop at once if no object came or went since the last walk */
    int stopped; /* it did: not every object was seen */
    int wrote;   /* some site was written: serialize the threads */
    int dropped; /* some site was found changed */
    int rc;      /* the first write error */
};

/* Whether the caller's thread is the only one that can run the program's code: asked
 * only when an object has patchable entries to prepare (it reads /proc). */
static NOINSTR int alone(struct walk *w)
{
    if (w->alone < 0)
        w->alone = !P.by_byte && thread_count() == 1 + w->own;
    return w->alone;
}

static NOINSTR struct obj *find_obj(struct dl_phdr_info *info)
{
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    for (size_t k = 0; k < P.nobjs; k++) {
        struct obj *o = &P.objs[k];
        if (o->addr == info->dlpi_addr && o->phdr == (const void *)info->dlpi_phdr &&
            !strcmp(o->name, name))
            return o;
    }
    return NULL;
}

static NOINSTR struct obj *new_obj(struct dl_phdr_info *info)
{
    if (P.nobjs == P.objcap) {
        size_t cap = P.objcap ? P.objcap * 2 : 32;
        struct obj *a = realloc(P.objs, cap * sizeof *a);
        if (!a)
            return NULL;
        P.objs = a;
        P.objcap = cap;
    }
    char *name = strdup(info->dlpi_name ? info->dlpi_name : "");
    if (!name)
        return NULL;
    struct obj *o = &P.objs[P.nobjs++];
    memset(o, 0, sizeof *o);
    o->addr = info->dlpi_addr;
    o->phdr = info->dlpi_phdr;
    o->name = name;
    o->id = P.next_id++;
    return o;
}

static NOINSTR int walk_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct walk *w = arg;
    const char *path = info->dlpi_name;
    int program = w->first;
    w->first = 0;
    if (program) {
        path = "/proc/self/exe";
        if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
            if (w->poll && info->dlpi_adds == P.adds && info->dlpi_subs == P.subs) {
                w->stopped = 1; /* nothing loaded or unloaded since the last walk */
                return 1;
            }
            P.adds = info->dlpi_adds;
            P.subs = info->dlpi_subs;
        }
    }
    if (path == NULL || *path == 0)
        return 0; /* the vDSO */
    struct obj *o = find_obj(info);
    size_t before = P.n;
    if (o == NULL) {
        o = new_obj(info);
        if (o == NULL)
            return 0;
        scan_object(path, info->dlpi_addr, o, w);
    }
    o->gen = P.gen;
    if (P.n != before) {
        setup_once();
        reindex();
    }
    if (!P.broken && o->n) {
        int rc = write_obj(o, P.on, &w->wrote, &w->dropped);
        if (rc && !w->rc)
            w->rc = rc;
    }
    return 0;
}

/* Drop the objects the last full walk did not see (unloaded), with their sites, and
 * the sites found changed. Objects are in id order and so are their sites' runs, so
 * the sites kept move only down. */
static NOINSTR void forget_gone(void)
{
    size_t kept = 0, n = 0;
    for (size_t k = 0; k < P.nobjs; k++) {
        struct obj o = P.objs[k];
        if (o.gen != P.gen) {
            uintptr_t *sp = realloc(P.spare, (P.nspare + o.nmirror) * sizeof *sp);
            if (sp) {
                memcpy(sp + P.nspare, o.mirror, o.nmirror * sizeof *sp);
                P.spare = sp;
                P.nspare += o.nmirror;
            }
            free(o.mirror);
            free(o.name);
            continue;
        }
        for (size_t i = o.first; i < o.first + o.n; i++)
            if (P.sites[i].word)
                P.sites[n++] = P.sites[i];
        P.objs[kept++] = o;
    }
    P.nobjs = kept;
    P.n = n;
    reindex();
}

/* Walk the loaded objects: find the sites of new ones, put every site in state P.on.
 * `own`: the library's own threads (which never run the program's code), or -1 when
 * the caller cannot tell whether another thread is running the program's code. */
static NOINSTR int walk(int own, int poll)
{
    if (P.broken)
        return 0;
    struct walk w = {.first = 1, .own = own, .alone = own < 0 ? 0 : -1, .poll = poll};
    P.gen++;
    dl_iterate_phdr(walk_object, &w);
    int gone = w.dropped;
    for (size_t k = 0; k < P.nobjs && !w.stopped; k++)
        gone |= P.objs[k].gen != P.gen;
    if (gone && !w.stopped)
        forget_gone();
    if (w.wrote)
        /* Every thread serializes before it next runs user code (cross-modifying code). */
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
    if (w.rc) {
        fprintf(stderr, "libcauseway: cannot patch code: %s\n", strerror(-w.rc));
        P.broken = 1;
    }
    return w.rc;
}

int cw__patch_init(int on)
{
    const char *v = getenv("CAUSEWAY_PATCH");
    if (v && (!strcmp(v, "off") || !strcmp(v, "0"))) {
        P.broken = 1; /* never patch */
        return 0;
    }
    P.by_byte = v && !strcmp(v, "byte");
    pthread_mutex_lock(&P.lock);
    P.on = on;
    /* Turning the five one-byte nops into one instruction is only safe while no other
     * thread can be part-way through them: at start-up, before any thread exists.
     * Keyed trace points are one instruction from the start and need no such care. */
    int rc = walk(0, 0);
    pthread_mutex_unlock(&P.lock);
    return rc;
}

int cw__patch_set(int on, int own)
{
    pthread_mutex_lock(&P.lock);
    if (on >= 0)
        P.on = on;
    int rc = walk(own, 0);
    pthread_mutex_unlock(&P.lock);
    return rc;
}

void cw__patch_poll(void)
{
    pthread_mutex_lock(&P.lock);
    walk(-1, 1);
    pthread_mutex_unlock(&P.lock);
}

void cw__patch_lock(int lock)
{
    if (lock)
        pthread_mutex_lock(&P.lock);
    else
        pthread_mutex_unlock(&P.lock);
}

uint64_t cw_patch_sites(uint64_t *skipped)
{
    pthread_mutex_lock(&P.lock);
    if (skipped)
        *skipped = P.skipped;
    uint64_t n = P.n - P.keyed;
    pthread_mutex_unlock(&P.lock);
    return n;
}

uint64_t cw_keyed_sites(void)
{
    pthread_mutex_lock(&P.lock);
    uint64_t n = P.keyed;
    pthread_mutex_unlock(&P.lock);
    return n;
}
