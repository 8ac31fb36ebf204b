/*
 * patch_tramp.c - the trampolines of patched function entries and their fast paths.
 *
 * Built with -mgeneral-regs-only (build.rs): the fast paths touch no vector or x87
 * register, so the trampolines save only the general registers a function's entry or
 * exit can carry values in, never the vector state. Whatever may touch more (a
 * thread's first call, a clock sync, the end of the ring, a stop request, frames a
 * longjmp skipped) returns CW_FAST_SLOW, and the trampoline runs the
 * slow path of patch.c inside cw__pfe_full, which saves the whole vector and x87
 * state (XSAVE) around it.
 *
 * The path of a traced call, all of it predicted by the branch predictors:
 *   caller:   call fn                 the return stack gets A (the caller's address)
 *   fn+0:     jmp stub                the patched site
 *   stub+0:   call cw__pfe_enter      records the entry, pushes A on the shadow stack,
 *                                     returns to stub+6 (matched call/ret)
 *   stub+6:   lea 8(%rsp), %rsp       drops A from the machine stack
 *   stub+11:  call fn+5               the body runs as if called by the caller (same
 *                                     stack layout), with stub+16 as return address
 *   fn:       ret                     to stub+16: matched with the call at stub+11
 *   stub+16:  jmp cw__pfe_exit        records the exit, puts A back where it was and
 *                                     returns through it: matched with the caller's
 *                                     call, still on the return stack
 * A tracer that rewrites the return address on the stack instead makes every traced
 * function's `ret` go somewhere the return stack did not predict (one misprediction
 * per call, ~20 cycles); calling the body from the stub keeps calls and returns paired.
 */
#include "causeway.h"
#include "cw_patch.h"

#define NOINSTR __attribute__((no_instrument_function))

/* Entry: the stub's call lands here with R1 (stub+6) at 0(%rsp) and the caller's
 * return address A at 8(%rsp) (its slot); %rsp is 16-aligned. The function has run
 * none of its code, so every argument register is live: the integer ones, %rax (the
 * vector register count of a variadic call) and %r10 (the static chain) are saved;
 * %r11 is scratch at a call; vector registers are left alone (see above).
 *
 * Exit: the stub's jmp lands here with %rsp one slot above the traced function's
 * slot and its return value in %rax/%rdx (and vector or x87 registers, left alone).
 * The fast path writes A back into the slot, so the final `ret` from it returns
 * exactly as the function's own would have. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl cw__pfe_enter\n"
        ".hidden cw__pfe_enter\n"
        ".type cw__pfe_enter,@function\n"
        "cw__pfe_enter:\n"
        "  push %rdi\n"
        "  push %rsi\n"
        "  push %rdx\n"
        "  push %rcx\n"
        "  push %r8\n"
        "  push %r9\n"
        "  push %rax\n"
        "  push %r10\n"
        "  mov 0x40(%rsp), %rdi\n" /* R1 */
        "  lea 0x48(%rsp), %rsi\n" /* the slot of A */
        "  call cw__pfe_enter_fast\n"
        "  test %eax, %eax\n"
        "  jnz 2f\n"
        "1:\n"
        "  pop %r10\n"
        "  pop %rax\n"
        "  pop %r9\n"
        "  pop %r8\n"
        "  pop %rcx\n"
        "  pop %rdx\n"
        "  pop %rsi\n"
        "  pop %rdi\n"
        "  ret\n"
        "2:\n"
        "  cmp $3, %eax\n" /* CW_FAST_UNTRACED */
        "  jne 3f\n"
        "  mov 0x40(%rsp), %rax\n"
        "  mov 18(%rax), %rax\n" /* the function, at CW_STUB_ID - CW_STUB_R1 */
        "  add $5, %rax\n"
        "  mov %rax, 0x40(%rsp)\n"
        "  jmp 1b\n"
        "3:\n"
        "  lea cw__pfe_enter_slow(%rip), %rdi\n"
        "  mov 0x40(%rsp), %rsi\n"
        "  lea 0x48(%rsp), %rdx\n"
        "  call cw__pfe_full\n"
        "  test %rax, %rax\n"
        "  jz 1b\n"
        /* Not traced: return into the function's body instead of the stub; the
         * function then returns straight to its caller. */
        "  mov %rax, 0x40(%rsp)\n"
        "  jmp 1b\n"
        ".size cw__pfe_enter, .-cw__pfe_enter\n"

        ".p2align 4\n"
        ".globl cw__pfe_exit\n"
        ".hidden cw__pfe_exit\n"
        ".type cw__pfe_exit,@function\n"
        "cw__pfe_exit:\n"
        /* The slot is at -8(%rsp): save below it, keeping %rsp 16-aligned. */
        "  sub $0x20, %rsp\n"
        "  mov %rax, 0x08(%rsp)\n"
        "  mov %rdx, 0x10(%rsp)\n"
        "  lea 0x18(%rsp), %rdi\n" /* the slot */
        "  call cw__pfe_exit_fast\n"
        "  test %eax, %eax\n"
        "  jnz 2f\n"
        "1:\n"
        "  mov 0x08(%rsp), %rax\n"
        "  mov 0x10(%rsp), %rdx\n"
        "  add $0x18, %rsp\n" /* onto the slot, which holds A again */
        "  ret\n"
        "2:\n"
        "  lea cw__pfe_exit_slow(%rip), %rdi\n"
        "  lea 0x18(%rsp), %rsi\n"
        "  call cw__pfe_full\n"
        "  jmp 1b\n"
        ".size cw__pfe_exit, .-cw__pfe_exit\n"

        /* cw__pfe_full(fn, a, b, c): fn(a, b, c) with the vector and x87 state saved
         * (XSAVE of the components in cw__xsave_mask, or FXSAVE without XSAVE). The
         * general registers are the callers' business. A fn of fewer parameters
         * (the slow paths take two and one) ignores the rest, as the ABI allows. */
        ".p2align 4\n"
        ".globl cw__pfe_full\n"
        ".hidden cw__pfe_full\n"
        ".type cw__pfe_full,@function\n"
        "cw__pfe_full:\n"
        "  push %rbp\n"
        "  mov %rsp, %rbp\n"
        "  push %rbx\n"
        "  push %r12\n"
        "  push %r13\n"
        "  push %r14\n"
        "  mov %rdi, %rbx\n"
        "  mov %rsi, %r12\n"
        "  mov %rdx, %r13\n"
        "  mov %rcx, %r14\n"
        "  mov cw__xsave_bytes(%rip), %rax\n"
        "  test %rax, %rax\n"
        "  jz 3f\n"
        "  sub %rax, %rsp\n"
        "  and $-64, %rsp\n"
        /* XSAVE writes only the first field of its header; the rest must be zero
         * for XRSTOR. */
        "  xor %eax, %eax\n"
        "  mov %rax, 0x200(%rsp)\n"
        "  mov %rax, 0x208(%rsp)\n"
        "  mov %rax, 0x210(%rsp)\n"
        "  mov %rax, 0x218(%rsp)\n"
        "  mov %rax, 0x220(%rsp)\n"
        "  mov %rax, 0x228(%rsp)\n"
        "  mov %rax, 0x230(%rsp)\n"
        "  mov %rax, 0x238(%rsp)\n"
        "  mov cw__xsave_mask(%rip), %rax\n"
        "  mov %rax, %rdx\n"
        "  shr $32, %rdx\n"
        "  xsave (%rsp)\n"
        "  mov %r12, %rdi\n"
        "  mov %r13, %rsi\n"
        "  mov %r14, %rdx\n"
        "  call *%rbx\n"
        "  mov %rax, %r12\n"
        "  mov cw__xsave_mask(%rip), %rax\n"
        "  mov %rax, %rdx\n"
        "  shr $32, %rdx\n"
        "  xrstor (%rsp)\n"
        "  jmp 4f\n"
        "3:\n"
        "  sub $512, %rsp\n"
        "  and $-16, %rsp\n"
        "  fxsave64 (%rsp)\n"
        "  mov %r12, %rdi\n"
        "  mov %r13, %rsi\n"
        "  mov %r14, %rdx\n"
        "  call *%rbx\n"
        "  mov %rax, %r12\n"
        "  fxrstor64 (%rsp)\n"
        "4:\n"
        "  mov %r12, %rax\n"
        "  lea -32(%rbp), %rsp\n"
        "  pop %r14\n"
        "  pop %r13\n"
        "  pop %r12\n"
        "  pop %rbx\n"
        "  pop %rbp\n"
        "  ret\n"
        ".size cw__pfe_full, .-cw__pfe_full\n");

/* The entry's fast path: push the shadow entry and record the entry; or answer
 * CW_FAST_UNTRACED (the thread does not trace now: the call runs untraced) or
 * CW_FAST_SLOW, having done nothing. */
NOINSTR int cw__pfe_enter_fast(const uint8_t *r1, uint64_t *slot)
{
    struct cw_thread *t = &cw_self;
    struct cw_shadow *s = cw__shadow;
    uint64_t *p = CW_LOAD(t->cur);
    if (CW_UNLIKELY(p == NULL))
        return CW_FAST_UNTRACED; /* stopped, or a thread past CAUSEWAY_THREADS */
    if (CW_UNLIKELY(s == NULL))
        return CW_FAST_SLOW;
    uint32_t d = s->depth;
    if (CW_UNLIKELY(d == s->cap))
        return CW_FAST_SLOW;
    if (CW_LIKELY(d > 0)) {
        /* The newest frame is live if its slot is above ours (it called us), or is
         * ours and still holds its stub's return address (it tail-called us). Any
         * other case is a frame a longjmp left: patch.c closes it. */
        const struct cw_shadow_ent *top = &s->e[d - 1];
        if (CW_UNLIKELY(top->slot <= slot) && (top->slot != slot || *slot != top->mark))
            return CW_FAST_SLOW;
    }
    uint64_t ts = cw__clock();
    if (CW_UNLIKELY((uint32_t)(ts >> 32) != t->last_hi || p + 2 >= t->end))
        return CW_FAST_SLOW;
    struct cw_shadow_ent *e = &s->e[d];
    e->ret = *slot;
    e->slot = slot;
    e->mark = (uint64_t)(uintptr_t)(r1 + (CW_STUB_R2 - CW_STUB_R1));
    /* A signal handler that runs patched functions between these stores pushes above
     * the entry and pops back to it: the stores stay in this order. */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    s->depth = d + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uintptr_t id = *(const uint64_t *)(r1 + (CW_STUB_ID - CW_STUB_R1));
    /* No stop test: a stop request lowers t->end, so the room check above sends the
     * next trace point to the slow path, which answers (as in cw__publish). */
    cw__publish(t, cw__put_enter(p, id, ts));
    return CW_FAST_DONE;
}

/* The exit's fast path: pop the newest shadow entry if it is this frame's, put the
 * caller's return address back into the slot and record the exit; or answer
 * CW_FAST_SLOW having done nothing. */
NOINSTR int cw__pfe_exit_fast(uint64_t *slot)
{
    struct cw_shadow *s = cw__shadow;
    if (CW_UNLIKELY(s == NULL))
        return CW_FAST_SLOW;
    uint32_t d = s->depth;
    if (CW_UNLIKELY(d == 0 || s->e[d - 1].slot != slot))
        return CW_FAST_SLOW; /* frames above it were left by a longjmp */
    struct cw_thread *t = &cw_self;
    uint64_t *p = CW_LOAD(t->cur);
    uint64_t ts = 0;
    if (CW_LIKELY(p != NULL)) {
        ts = cw__clock();
        if (CW_UNLIKELY((uint32_t)(ts >> 32) != t->last_hi || p + 1 >= t->end))
            return CW_FAST_SLOW;
    }
    *slot = s->e[d - 1].ret;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    s->depth = d - 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (p == NULL)
        return CW_FAST_DONE; /* stopped (a dump, cw_stop): the exit goes unrecorded */
    cw__publish(t, cw__put_exit(p, ts));
    return CW_FAST_DONE;
}
