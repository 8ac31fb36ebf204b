/* Creates 20 threads one after another, each named short-N, living about 1 ms
 * (0.5 ms of work, then exit), 5 ms apart: a recorder must catch every one. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *body(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "short-%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	double end = now() + 0.0005;
	while (now() < end)
		;
	return NULL;
}

int main(void)
{
	struct timespec gap = {0, 5000000};
	for (long i = 0; i < 20; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, body, (void *)i))
			return 1;
		pthread_join(t, NULL);
		nanosleep(&gap, NULL);
	}
	return 0;
}
