/*
 * cw_patch.h - between causeway.c (start-up, cw_start, cw_stop), patch.c (finding and
 * patching the -fpatchable-function-entry sites, their stubs, the slow paths) and
 * patch_tramp.c (the trampolines and their fast paths, built -mgeneral-regs-only).
 */
#ifndef CW_PATCH_H
#define CW_PATCH_H

#include <stdint.h>

/* Internal to the library: never exported from libcauseway.so, and referenced
 * PC-relative from the trampolines' assembly. */
#define CW_INTERNAL __attribute__((visibility("hidden")))

/* Find the patchable entries and keyed trace points of the program and its libraries
 * and put each in its state: a jump (on) or one 5-byte nop (off). At start-up, before
 * the control thread exists. Returns 0 or a negative errno. */
int cw__patch_init(int on);
/* Switch every site on (1), off (0), or to the state it should be in (-1), after
 * finding those of libraries loaded since the last walk and forgetting those unloaded.
 * `own`: the library's own threads, so a caller that is the only other thread may
 * prepare the patchable entries of new libraries (else they are switched by one byte);
 * -1 if the caller cannot tell. */
int cw__patch_set(int on, int own);
/* The control thread's periodic look for libraries loaded or unloaded since the last
 * walk (cheap when there is none): keyed trace points of a library loaded with dlopen
 * are switched within one tick. */
void cw__patch_poll(void);
/* Take (1) or release (0) the sites' lock: around fork, so the child never inherits it
 * held by a thread it does not have. */
void cw__patch_lock(int lock);

/* A site's stub (patch.c writes them, STUB_BYTES each, near the sites):
 *    0  call cw__pfe_enter    90 e8 rel32, or ff 15 rel32 through the area's pointer
 *    6  lea 8(%rsp), %rsp     drop the caller's return address (the shadow stack has it)
 *   11  call fn+5             the function's body: it returns to offset 16
 *   16  jmp cw__pfe_exit      90 e9 rel32, or ff 25 rel32
 *   22  int3 int3
 *   24  .quad fn              the entry's id
 * Offsets are from the stub; R1 and R2 are the two return addresses it makes. */
#define CW_STUB_BYTES 32
#define CW_STUB_R1 6
#define CW_STUB_R2 16
#define CW_STUB_ID 24

/* What a fast path tells its trampoline. */
#define CW_FAST_DONE 0 /* recorded (or nothing to do) */
#define CW_FAST_SLOW 1 /* nothing done: take the slow path */
#define CW_FAST_UNTRACED 3 /* entry only: the thread does not trace now; the call
                            * returns into the body, bypassing the stub */

/* The per-thread shadow stack of the callers' return addresses. */
struct cw_shadow_ent {
    uint64_t ret;   /* the caller's return address */
    uint64_t *slot; /* the stack slot that held it (holds `mark` while the frame runs) */
    uint64_t mark;  /* the stub's R2: the return address the traced function sees */
};

struct cw_shadow {
    uint32_t depth;
    uint32_t cap;
    uint64_t pad;
    struct cw_shadow_ent e[];
};

extern __thread struct cw_shadow *cw__shadow CW_INTERNAL
    __attribute__((tls_model("initial-exec")));
/* Bytes of the XSAVE area the slow paths save the vector and x87 state in (0: the
 * CPU has no XSAVE; FXSAVE's 512 bytes then). Set once at start-up. */
extern uint64_t cw__xsave_bytes CW_INTERNAL;
extern uint64_t cw__xsave_mask CW_INTERNAL;

/* Fast paths (patch_tramp.c): no vector register touched, no call made. */
int cw__pfe_enter_fast(const uint8_t *r1, uint64_t *slot) CW_INTERNAL;
int cw__pfe_exit_fast(uint64_t *slot) CW_INTERNAL;
/* Slow paths (patch.c), run with the vector state saved. Entry: returns 0 (go on
 * through the stub) or the address to return to instead (the function's body: the
 * call is not traced and returns straight to its caller). Exit: puts the caller's
 * return address back into *slot. */
uint64_t cw__pfe_enter_slow(const uint8_t *r1, uint64_t *slot) CW_INTERNAL;
uint64_t cw__pfe_exit_slow(uint64_t *slot) CW_INTERNAL;

/* The trampolines (asm), the stubs' targets. */
void cw__pfe_enter(void) CW_INTERNAL;
void cw__pfe_exit(void) CW_INTERNAL;

#endif
