/*
 * deep-thread - a thread that blocks at the bottom of a deep stack (about 12 KiB of
 * frames, more than the recorder's default copy window) again and again, for a
 * recorder that attaches (-p) after the thread started. Prints "ready" when the
 * thread runs; runs for the number of seconds given (default 3).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds = 3;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static __attribute__((noinline)) void wait_here(void)
{
	struct timespec d = {0, 5000000};
	nanosleep(&d, NULL);
}

static __attribute__((noinline)) void deep(int n)
{
	volatile char frame[1024];
	memset((char *)frame, n, sizeof(frame));
	if (n > 0)
		deep(n - 1);
	else
		wait_here();
	frame[0] += 1;
}

static void *deep_main(void *arg)
{
	(void)arg;
	double end = now() + seconds;
	fprintf(stderr, "ready\n");
	while (now() < end)
		deep(12);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		seconds = atof(argv[1]);
	pthread_t t;
	pthread_create(&t, NULL, deep_main, NULL);
	pthread_join(t, NULL);
	return 0;
}
