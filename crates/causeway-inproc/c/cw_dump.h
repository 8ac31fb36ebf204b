/*
 * cw_dump.h - what the C side of libcauseway hands to the trace writer (Rust) at a
 * dump. Mirrored by `crate::ffi` in Rust; a test checks the sizes and offsets agree.
 */
#ifndef CW_DUMP_H
#define CW_DUMP_H
#include <stdint.h>

/* One thread's buffer, copied while the thread was stopped (or validated, see flags). */
struct cw_snap {
    int32_t tid;
    uint32_t flags;          /* CW_SNAP_* */
    const uint64_t *slots;   /* oldest first */
    uint64_t nslots;
    uint64_t lost_slots;     /* slots overwritten (ring wrap) or discarded as torn */
    uint64_t end_tsc;        /* clock when the copy was taken: open calls end here */
    uint32_t last_hi;        /* high half of the clock of the newest record */
    uint32_t reserved;
};
#define CW_SNAP_EXITED 1u    /* the thread had exited; its buffer was kept */
#define CW_SNAP_FORCED 2u    /* the thread did not answer the stop; copy validated */
#define CW_SNAP_WRAPPED 4u   /* the buffer had wrapped: the oldest call may be cut */

/* What triggered a dump. */
#define CW_TRIGGER_CALL 0u
#define CW_TRIGGER_SIGNAL 1u
#define CW_TRIGGER_STALL 2u
#define CW_TRIGGER_EXIT 3u

struct cw_dump_req {
    const char *path;
    const char *reason;
    uint32_t trigger;        /* CW_TRIGGER_* */
    int32_t trigger_tid;     /* the stalled thread for CW_TRIGGER_STALL, else the caller */
    uint64_t ref_tsc;        /* clock and CLOCK_MONOTONIC / CLOCK_REALTIME read together */
    uint64_t ref_mono_ns;
    uint64_t ref_real_ns;
    uint64_t cal_tsc;        /* an earlier pair (at start-up), for the clock's rate */
    uint64_t cal_mono_ns;
    const struct cw_snap *snaps;
    uint64_t nsnaps;
    uint64_t untraced_threads;
    uint64_t kernel_dump;    /* 1: also ask running flight recorders to dump */
};

/* Implemented in Rust (src/dump.rs). Returns 0 or a negative errno. */
int cw_rs_write_trace(const struct cw_dump_req *req);

#endif
