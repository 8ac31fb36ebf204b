/* A data flag in a shared object (libcwflag.so, from cwflag.c) and one of the same
 * name in the executable: main writes its own `shared_flag`, five short threads
 * write the library's through lib_set(). `--symbol shared_flag` is the
 * executable's; `--symbol libcwflag:shared_flag` the library's. The first write
 * comes 0.5 s in: a launched command's shared object is watched from the
 * recorder's first pass after it is mapped, which a loaded machine can delay. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

void lib_set(long v);

static long shared_flag __attribute__((aligned(8)));

static void *setter(void *arg)
{
	lib_set((long)arg);
	return NULL;
}

int main(void)
{
	struct timespec settle = {0, 500000000}, gap = {0, 10000000};
	nanosleep(&settle, NULL);
	for (long i = 1; i <= 5; i++) {
		__atomic_store_n(&shared_flag, i, __ATOMIC_SEQ_CST);
		pthread_t t;
		pthread_create(&t, NULL, setter, (void *)i);
		pthread_join(t, NULL);
		nanosleep(&gap, NULL);
	}
	printf("%ld\n", __atomic_load_n(&shared_flag, __ATOMIC_SEQ_CST));
	return 0;
}
