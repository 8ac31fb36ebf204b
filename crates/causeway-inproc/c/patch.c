/*
 * patch.c - trace points at -fpatchable-function-entry sites, patched at run time.
 *
 * A function built with -fpatchable-function-entry=5 starts with five one-byte nops and
 * the linker lists its address in the section __patchable_function_entries. At start-up
 * (the process still single-threaded) each site's five nops become one five-byte nop,
 * and each site gets a stub of its own near it (cw_patch.h has the layout); turning
 * tracing on replaces the nop with `jmp stub`, off puts the nop back. Off therefore
 * costs the nop alone.
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

struct site {
    uint64_t *word; /* the aligned 8-byte word holding the site's 5 bytes */
    uint64_t off;   /* the word with the 5-byte nop */
    uint64_t on;    /* the word with the jump to the site's stub (or keyed body) */
    int keyed;      /* a keyed trace point (causeway.h, CW_KEYED), not a function entry */
};

static struct {
    pthread_mutex_t lock;
    struct site *sites;
    size_t n, cap;
    size_t keyed; /* how many of the n are keyed trace points */
    uint64_t skipped;
    uint64_t stub_bytes; /* mapped for stubs */
    int on;
    int broken; /* mprotect refused: patching is off for good */
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

/* Record the site at `at`: off is the 5-byte nop, on `jmp to` (the 8-byte word holding
 * the 5 bytes, with its other bytes as they are). */
static NOINSTR void push_site(uint8_t *at, const uint8_t *to, int keyed)
{
    uint64_t *word = (uint64_t *)((uintptr_t)at & ~(uintptr_t)7);
    unsigned k = (unsigned)((uintptr_t)at & 7);
    uint8_t off[8], on[8];
    memcpy(off, word, 8);
    memcpy(off + k, NOP5, 5);
    memcpy(on, off, 8);
    on[k] = 0xe9;
    put_rel32(on + k + 1, to, at + 5);
    struct site *s = &P.sites[P.n++];
    s->word = word;
    memcpy(&s->off, off, 8);
    memcpy(&s->on, on, 8);
    s->keyed = keyed;
    P.keyed += keyed != 0;
}

/* One site, with its stub at `stub` (in an area whose first 16 bytes are `hdr`).
 * Returns 1 if it took the stub, 0 if the site is left alone (counted). */
static NOINSTR int add_site(uint8_t *at, uint8_t *stub, const uint8_t *hdr)
{
    if (((uintptr_t)at & 7) > 3 || memcmp(at, NOP1x5, 5) != 0 ||
        !fits_rel32(stub - (at + 5)) || !fits_rel32((at + 5) - (stub + CW_STUB_R2)) ||
        !site_room()) {
        P.skipped++;
        return 0;
    }
    put_stub(stub, hdr, at);
    push_site(at, stub, 0);
    return 1;
}

/* The keyed trace points of one cw_keys section: each entry is the site and the
 * trace point's body as 32-bit offsets from the entry (causeway.h, CW__KEY). The
 * compiler emitted the site as one 5-byte nop already, so it is patched like an entry
 * that start-up has prepared, and at any time, threads or not. */
static NOINSTR void add_keys(const int32_t *e, size_t n)
{
    for (size_t k = 0; k + 1 < n; k += 2) {
        uint8_t *at = (uint8_t *)&e[k] + e[k];
        const uint8_t *body = (const uint8_t *)&e[k + 1] + e[k + 1];
        if (((uintptr_t)at & 7) > 3 || memcmp(at, NOP5, 5) != 0 ||
            !fits_rel32(body - (at + 5)) || !site_room()) {
            P.skipped++;
            continue;
        }
        push_site(at, body, 1);
    }
}

/* The sites of one __patchable_function_entries section (0: a function the linker
 * discarded), their stubs in one area mapped near them. */
static NOINSTR void add_sites(const uint64_t *e, size_t n)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    size_t live = 0;
    for (size_t k = 0; k < n; k++) {
        if (!e[k])
            continue;
        live++;
        lo = e[k] < lo ? e[k] : lo;
        hi = e[k] + 5 > hi ? e[k] + 5 : hi;
    }
    if (live == 0)
        return;
    size_t bytes = ((live + 1) * CW_STUB_BYTES + 4095) & ~(size_t)4095;
    uint8_t *area = map_near(lo, hi, bytes);
    if (area == NULL) {
        P.skipped += live;
        return;
    }
    memset(area, 0xcc, bytes);
    uint64_t tramp[2] = {(uint64_t)(uintptr_t)cw__pfe_enter, (uint64_t)(uintptr_t)cw__pfe_exit};
    memcpy(area, tramp, sizeof tramp);
    uint8_t *st = area + CW_STUB_BYTES;
    for (size_t k = 0; k < n; k++)
        if (e[k] && add_site((uint8_t *)(uintptr_t)e[k], st, area))
            st += CW_STUB_BYTES;
    mprotect(area, bytes, PROT_READ | PROT_EXEC);
    P.stub_bytes += bytes;
}

/* The __patchable_function_entries sections of one loaded object, from its file's
 * section headers (sections are not in the program headers); the entries themselves
 * are read from memory, where the dynamic linker has relocated them. */
static NOINSTR int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    int *first = arg;
    const char *path = info->dlpi_name;
    if (*first)
        path = "/proc/self/exe"; /* the program itself comes first, unnamed */
    *first = 0;
    if (path == NULL || *path == 0)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
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
        uintptr_t at = info->dlpi_addr + sh[i].sh_addr;
        if (strcmp(name, "__patchable_function_entries") == 0)
            add_sites((const uint64_t *)at, sh[i].sh_size / 8);
        else if (strcmp(name, "cw_keys") == 0)
            add_keys((const int32_t *)at, sh[i].sh_size / 4);
    }
done:
    free(names);
    free(sh);
    close(fd);
    return 0;
}

static NOINSTR int one_thread(void)
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
    return n == 1;
}

/* Store `on` or `off` into every site, a page opened for writing at a time. */
static NOINSTR int write_sites(int on)
{
    const long pg = 4096;
    uintptr_t open_page = 0;
    int rc = 0;
    for (size_t i = 0; i < P.n && rc == 0; i++) {
        uintptr_t page = (uintptr_t)P.sites[i].word & ~(uintptr_t)(pg - 1);
        if (page != open_page) {
            if (open_page)
                mprotect((void *)open_page, (size_t)pg, PROT_READ | PROT_EXEC);
            open_page = 0;
            if (mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
                rc = -errno;
                break;
            }
            open_page = page;
        }
        __atomic_store_n(P.sites[i].word, on ? P.sites[i].on : P.sites[i].off, __ATOMIC_RELEASE);
    }
    if (open_page)
        mprotect((void *)open_page, (size_t)pg, PROT_READ | PROT_EXEC);
    /* Every thread serializes before it next runs user code (cross-modifying code). */
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
    return rc;
}

int cw__patch_init(int on)
{
    const char *v = getenv("CAUSEWAY_PATCH");
    if (v && (!strcmp(v, "off") || !strcmp(v, "0")))
        return 0;
    pthread_mutex_lock(&P.lock);
    int first = 1;
    dl_iterate_phdr(scan_object, &first);
    int rc = 0;
    if (P.n == 0)
        goto out;
    /* Turning the five one-byte nops into one instruction is only safe while no other
     * thread can be part-way through them: at start-up, before any thread exists.
     * Keyed trace points are one instruction from the start and stay. */
    if (P.n > P.keyed && !one_thread()) {
        fprintf(stderr, "libcauseway: %zu patchable function entries left alone: the "
                        "process already had threads when the library started\n",
                P.n - P.keyed);
        size_t kept = 0;
        for (size_t i = 0; i < P.n; i++)
            if (P.sites[i].keyed)
                P.sites[kept++] = P.sites[i];
        P.n = kept;
        if (P.n == 0)
            goto out;
    }
    pthread_key_create(&shadow_key, shadow_free);
    xsave_setup();
    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
    rc = write_sites(on);
    if (rc) {
        fprintf(stderr, "libcauseway: cannot patch function entries: %s\n", strerror(-rc));
        P.broken = 1;
    } else {
        P.on = on;
    }
out:
    pthread_mutex_unlock(&P.lock);
    return rc;
}

int cw__patch_set(int on)
{
    pthread_mutex_lock(&P.lock);
    int rc = 0;
    if (P.n && !P.broken && P.on != on) {
        rc = write_sites(on);
        if (rc == 0)
            P.on = on;
    }
    pthread_mutex_unlock(&P.lock);
    return rc;
}

uint64_t cw_patch_sites(uint64_t *skipped)
{
    if (skipped)
        *skipped = P.skipped;
    return P.n - P.keyed;
}

uint64_t cw_keyed_sites(void) { return P.keyed; }
