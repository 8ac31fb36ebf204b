/*
 * patch.c - trace points at -fpatchable-function-entry sites, patched at run time.
 *
 * A function built with -fpatchable-function-entry=5 starts with five one-byte nops and
 * the linker lists its address in the section __patchable_function_entries. At start-up
 * (the process still single-threaded) each site's five nops become one five-byte nop;
 * turning tracing on replaces that nop with `call cw__patch_entry` (or a call to a near
 * stub that jumps there, when the library is more than 2 GiB away), off puts the nop
 * back. Off therefore costs the nop alone.
 *
 * Exits: the entry trampoline saves the caller's return address on a per-thread shadow
 * stack and rewrites it to cw__patch_exit, which records the exit and jumps to the saved
 * address. The shadow stack remembers where each return address lives, so frames a
 * longjmp skipped are dropped (and their exits recorded) at the next traced entry or
 * exit after it.
 *
 * Each site's five bytes must lie inside one aligned 8-byte word, so one atomic store
 * swaps the whole instruction and a thread never runs half of an old and half of a new
 * one (true for every function aligned to 8 or more: GCC's default at -O2; others are
 * skipped and counted). After each batch of stores, membarrier(SYNC_CORE) makes every
 * thread of the process serialize before it runs code again, as cross-modifying code
 * must. See docs/libcauseway.md, "Patched function entries".
 */
#define _GNU_SOURCE
#include "causeway.h"
#include "cw_patch.h"

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

/* ---- trampolines ------------------------------------------------------------------ */

void cw__patch_entry(void) HIDDEN;
void cw__patch_exit(void) HIDDEN;
void cw__patch_enter(uint64_t ret, uint64_t *slot) HIDDEN NOINSTR;
uint64_t cw__patch_leave(uint64_t *slot) HIDDEN NOINSTR;

/* Entry: reached by the patched `call` at the top of a traced function, before the
 * function has run any of its own code, so every argument register is live: the
 * integer ones, %rax (vector count of a variadic call), %r10 (static chain) and
 * %xmm0-7 are saved around the C helper. %rsp is 16-aligned here (the function's
 * entry alignment minus our return address), and 0xc0 keeps it so. */
__asm__(".text\n"
        ".p2align 4\n"
        ".type cw__patch_entry,@function\n"
        "cw__patch_entry:\n"
        "  sub $0xc0, %rsp\n"
        "  mov %rdi, 0x00(%rsp)\n"
        "  mov %rsi, 0x08(%rsp)\n"
        "  mov %rdx, 0x10(%rsp)\n"
        "  mov %rcx, 0x18(%rsp)\n"
        "  mov %r8, 0x20(%rsp)\n"
        "  mov %r9, 0x28(%rsp)\n"
        "  mov %rax, 0x30(%rsp)\n"
        "  mov %r10, 0x38(%rsp)\n"
        "  movaps %xmm0, 0x40(%rsp)\n"
        "  movaps %xmm1, 0x50(%rsp)\n"
        "  movaps %xmm2, 0x60(%rsp)\n"
        "  movaps %xmm3, 0x70(%rsp)\n"
        "  movaps %xmm4, 0x80(%rsp)\n"
        "  movaps %xmm5, 0x90(%rsp)\n"
        "  movaps %xmm6, 0xa0(%rsp)\n"
        "  movaps %xmm7, 0xb0(%rsp)\n"
        "  mov 0xc0(%rsp), %rdi\n" /* our return address: the site + 5 */
        "  lea 0xc8(%rsp), %rsi\n" /* where the function's return address lives */
        "  call cw__patch_enter\n"
        "  mov 0x00(%rsp), %rdi\n"
        "  mov 0x08(%rsp), %rsi\n"
        "  mov 0x10(%rsp), %rdx\n"
        "  mov 0x18(%rsp), %rcx\n"
        "  mov 0x20(%rsp), %r8\n"
        "  mov 0x28(%rsp), %r9\n"
        "  mov 0x30(%rsp), %rax\n"
        "  mov 0x38(%rsp), %r10\n"
        "  movaps 0x40(%rsp), %xmm0\n"
        "  movaps 0x50(%rsp), %xmm1\n"
        "  movaps 0x60(%rsp), %xmm2\n"
        "  movaps 0x70(%rsp), %xmm3\n"
        "  movaps 0x80(%rsp), %xmm4\n"
        "  movaps 0x90(%rsp), %xmm5\n"
        "  movaps 0xa0(%rsp), %xmm6\n"
        "  movaps 0xb0(%rsp), %xmm7\n"
        "  add $0xc0, %rsp\n"
        "  ret\n"
        ".size cw__patch_entry, .-cw__patch_entry\n"
        /* Exit: the traced function's `ret` lands here with its return value in
         * %rax/%rdx/%xmm0/%xmm1 and %rsp 16-aligned (one slot above its entry %rsp).
         * The helper returns the real return address, which we jump to. */
        ".p2align 4\n"
        ".type cw__patch_exit,@function\n"
        "cw__patch_exit:\n"
        "  sub $0x30, %rsp\n"
        "  mov %rax, 0x00(%rsp)\n"
        "  mov %rdx, 0x08(%rsp)\n"
        "  movaps %xmm0, 0x10(%rsp)\n"
        "  movaps %xmm1, 0x20(%rsp)\n"
        "  lea 0x28(%rsp), %rdi\n" /* the slot the function returned through */
        "  call cw__patch_leave\n"
        "  mov %rax, %r11\n"
        "  mov 0x00(%rsp), %rax\n"
        "  mov 0x08(%rsp), %rdx\n"
        "  movaps 0x10(%rsp), %xmm0\n"
        "  movaps 0x20(%rsp), %xmm1\n"
        "  add $0x30, %rsp\n"
        "  jmp *%r11\n"
        ".size cw__patch_exit, .-cw__patch_exit\n");

/* ---- the shadow stack of return addresses ------------------------------------------ */

struct cw_shadow_ent {
    uint64_t ret;   /* the real return address */
    uint64_t *slot; /* the stack slot that held it (now holds cw__patch_exit) */
};

struct cw_shadow {
    uint32_t depth;
    uint32_t cap;
    struct cw_shadow_ent e[];
};

#define SHADOW_BYTES (64u << 10)
#define STALE_SPAN ((uintptr_t)16 << 20)

static __thread struct cw_shadow *shadow CW_TLS_IE;
static pthread_key_t shadow_key;

static NOINSTR void shadow_free(void *p)
{
    /* The thread is exiting: its patched frames (if any) will never return. */
    shadow = NULL;
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
    shadow = s;
    pthread_setspecific(shadow_key, s);
    return s;
}

void cw__patch_enter(uint64_t ret, uint64_t *slot)
{
    struct cw_thread *t = &cw_self;
    if (CW_LOAD(t->cur) == NULL)
        return;
    struct cw_shadow *s = shadow;
    if (CW_UNLIKELY(s == NULL) && (s = shadow_new()) == NULL)
        return;
    uint32_t d = s->depth;
    /* Entries whose slot lies below ours belong to frames a longjmp has left: a live
     * caller's slot is above its callee's. Equal slots are a tail call (the caller's
     * frame is live and its slot still holds cw__patch_exit) or a sibling called
     * after a longjmp out of the frame that had the slot (the slot holds a fresh
     * return address). Close dead frames now, so the calls after a longjmp are not
     * nested in the frames it skipped. The span bound keeps a signal handler on an
     * alternate stack, which may lie anywhere, from closing the frames of the stack
     * it interrupted (unless it is within 16 MiB below). */
    uint64_t exit_addr = (uint64_t)(uintptr_t)cw__patch_exit;
    while (d > 0 && ((s->e[d - 1].slot == slot && *slot != exit_addr) ||
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
        return; /* deeper than the shadow stack: neither entry nor exit is recorded */
    s->e[d].ret = *slot;
    s->e[d].slot = slot;
    /* A signal handler that runs patched functions between these stores pushes above
     * the entry and pops back to it: the stores stay in this order. */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    s->depth = d + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    *slot = (uint64_t)(uintptr_t)cw__patch_exit;
    cw_enter((uintptr_t)(ret - 5));
}

uint64_t cw__patch_leave(uint64_t *slot)
{
    struct cw_shadow *s = shadow;
    uint32_t d = s ? s->depth : 0;
    /* Newest first: the returning frame is the top unless a longjmp (or a signal
     * handler left by siglongjmp) skipped frames above it. */
    uint32_t i = d;
    while (i > 0 && s->e[i - 1].slot != slot)
        i--;
    if (CW_UNLIKELY(i == 0)) {
        static const char msg[] = "libcauseway: a patched function returned through an "
                                  "unknown stack slot; aborting\n";
        ssize_t unused = write(2, msg, sizeof msg - 1);
        (void)unused;
        abort();
    }
    uint64_t ret = s->e[i - 1].ret;
    /* Frames skipped by a longjmp end now; then the returning one. */
    for (uint32_t k = i; k < d; k++)
        cw_exit();
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    s->depth = i - 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    cw_exit();
    return ret;
}

/* ---- finding and patching the sites ------------------------------------------------ */

struct site {
    uint64_t *word; /* the aligned 8-byte word holding the site's 5 bytes */
    uint64_t off;   /* the word with the 5-byte nop */
    uint64_t on;    /* the word with the call */
};

static struct {
    pthread_mutex_t lock;
    struct site *sites;
    size_t n, cap;
    uint64_t skipped;
    int on;
    int broken; /* mprotect refused: patching is off for good */
    uint8_t *stub_page, *stub_next;
} P = {.lock = PTHREAD_MUTEX_INITIALIZER};

static NOINSTR int fits_rel32(intptr_t d) { return d >= INT32_MIN && d <= INT32_MAX; }

/* A stub within ±2 GiB of `near` that jumps to the entry trampoline (the library may
 * be mapped far from the program it patches). Stubs of nearby sites share a page. */
static NOINSTR uint8_t *stub_near(uint8_t *near)
{
    if (P.stub_page && fits_rel32(P.stub_page - near) &&
        P.stub_next + 14 <= P.stub_page + 4096)
        goto write;
    long pg = 4096;
    for (intptr_t step = 1 << 20; step < (intptr_t)1 << 31; step += 1 << 20) {
        for (int dir = -1; dir <= 1; dir += 2) {
            uintptr_t want = ((uintptr_t)near + (uintptr_t)(dir * step)) & ~(uintptr_t)(pg - 1);
            void *p = mmap((void *)want, (size_t)pg, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (p == MAP_FAILED)
                continue;
            if ((uintptr_t)p != want) { /* old kernels ignore the flag */
                munmap(p, (size_t)pg);
                continue;
            }
            P.stub_page = P.stub_next = p;
            goto write;
        }
    }
    return NULL;
write:;
    uint8_t *s = P.stub_next;
    if (mprotect(P.stub_page, 4096, PROT_READ | PROT_WRITE) != 0)
        return NULL;
    /* jmp *0(%rip); .quad cw__patch_entry */
    static const uint8_t jmp[6] = {0xff, 0x25, 0, 0, 0, 0};
    memcpy(s, jmp, 6);
    uint64_t target = (uint64_t)(uintptr_t)cw__patch_entry;
    memcpy(s + 6, &target, 8);
    P.stub_next = s + 16;
    mprotect(P.stub_page, 4096, PROT_READ | PROT_EXEC);
    return s;
}

static NOINSTR void add_site(uint8_t *at)
{
    if (((uintptr_t)at & 7) > 3 || memcmp(at, NOP1x5, 5) != 0) {
        P.skipped++;
        return;
    }
    uint8_t *target = (uint8_t *)(uintptr_t)cw__patch_entry;
    if (!fits_rel32(target - (at + 5)) && (target = stub_near(at)) == NULL) {
        P.skipped++;
        return;
    }
    if (P.n == P.cap) {
        size_t cap = P.cap ? P.cap * 2 : 1024;
        struct site *s = realloc(P.sites, cap * sizeof *s);
        if (s == NULL) {
            P.skipped++;
            return;
        }
        P.sites = s;
        P.cap = cap;
    }
    uint64_t *word = (uint64_t *)((uintptr_t)at & ~(uintptr_t)7);
    unsigned k = (unsigned)((uintptr_t)at & 7);
    uint8_t off[8], on[8];
    memcpy(off, word, 8);
    memcpy(off + k, NOP5, 5);
    memcpy(on, off, 8);
    int32_t rel = (int32_t)(target - (at + 5));
    on[k] = 0xe8;
    memcpy(on + k + 1, &rel, 4);
    struct site *s = &P.sites[P.n++];
    s->word = word;
    memcpy(&s->off, off, 8);
    memcpy(&s->on, on, 8);
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
        if (sh[i].sh_name >= str->sh_size || !(sh[i].sh_flags & SHF_ALLOC) ||
            strcmp(names + sh[i].sh_name, "__patchable_function_entries") != 0)
            continue;
        const uint64_t *e = (const uint64_t *)(uintptr_t)(info->dlpi_addr + sh[i].sh_addr);
        for (size_t k = 0; k < sh[i].sh_size / 8; k++)
            if (e[k]) /* 0: a function the linker discarded */
                add_site((uint8_t *)(uintptr_t)e[k]);
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
     * thread can be part-way through them: at start-up, before any thread exists. */
    if (!one_thread()) {
        fprintf(stderr, "libcauseway: %zu patchable function entries left alone: the "
                        "process already had threads when the library started\n", P.n);
        P.n = 0;
        goto out;
    }
    pthread_key_create(&shadow_key, shadow_free);
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
    return P.n;
}
