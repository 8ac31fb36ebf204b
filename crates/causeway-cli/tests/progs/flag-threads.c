/* Twenty threads, one after another, each writing the data flag `flag` once and
 * exiting at once (alive for well under a millisecond), 2 ms apart: a watch must see
 * every write, so each thread must be watched from its first instruction. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

long flag __attribute__((aligned(8)));

static void *writer(void *arg)
{
	__atomic_store_n(&flag, (long)arg, __ATOMIC_SEQ_CST);
	return NULL;
}

int main(void)
{
	struct timespec settle = {0, 100000000}, gap = {0, 2000000};
	nanosleep(&settle, NULL);
	for (long i = 1; i <= 20; i++) {
		pthread_t t;
		pthread_create(&t, NULL, writer, (void *)i);
		pthread_join(t, NULL);
		nanosleep(&gap, NULL);
	}
	printf("%ld\n", __atomic_load_n(&flag, __ATOMIC_SEQ_CST));
	return 0;
}
