/* Shared between dataflag.bpf.c and its loader (src/watch/uprobe.rs, which reads
 * struct dataflag_hit by hand: its size is asserted below, its layout by a test
 * there). */
#ifndef DATAFLAG_H
#define DATAFLAG_H

/* The attach cookie of each probed instruction: its length in the low bits (the
 * hit's ip is the instruction after it, as a watchpoint reports), and whether it
 * writes the variable. */
#define DATAFLAG_LEN_MASK 0xfULL
#define DATAFLAG_WRITE 0x10ULL

/* Bytes of the hit ring: 32-byte records, 32768 of them, more than a thread
 * trapping flat out (a few microseconds per hit) makes between two drains (10 ms). */
#define DATAFLAG_RING_BYTES (1 << 20)

/* One access of the watched variable, as the probe saw it. */
struct dataflag_hit {
	/* CLOCK_MONOTONIC ns (bpf_ktime_get_ns), the recorder's clock. */
	__u64 ts;
	/* The instruction after the access. */
	__u64 ip;
	__u32 tid;
	__u32 cpu;
	/* 1 for a store or read-modify-write, 0 for a load. */
	__u32 write;
	__u32 tgid;
};

/* The loader reads these 32 bytes by hand (HIT_BYTES in uprobe.rs). */
_Static_assert(sizeof(struct dataflag_hit) == 32, "struct dataflag_hit is 32 bytes");

#endif
