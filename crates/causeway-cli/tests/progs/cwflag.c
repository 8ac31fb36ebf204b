/* The shared object of flag-lib.c: its own `shared_flag` (hidden, so its code
 * reaches it directly, not through the GOT). */
__attribute__((visibility("hidden"))) long shared_flag __attribute__((aligned(8)));

void lib_set(long v)
{
	__atomic_store_n(&shared_flag, v, __ATOMIC_SEQ_CST);
}
