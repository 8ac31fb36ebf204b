/* Shared between funclat.bpf.c and the Rust loader (src/funclat.rs checks the
 * numbers against the skeleton's types). */
#ifndef FUNCLAT_H
#define FUNCLAT_H

/* log2 slots: slot b holds latencies in [2^b, 2^(b+1)) ns; slot 0 also holds 0 ns. */
#define FUNCLAT_SLOTS 64

/* Indices of the `counters` map. */
enum funclat_counter {
	/* A return without its entry (the probe was attached mid-call). */
	FUNCLAT_NO_ENTRY = 0,
	/* An entry that found the per-thread table full and was not timed. */
	FUNCLAT_TABLE_FULL = 1,
	/* Nested entries of a call already being timed (recursion). */
	FUNCLAT_NESTED = 2,
	FUNCLAT_COUNTERS = 3,
};

#endif
