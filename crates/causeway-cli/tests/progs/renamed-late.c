/* A thread that runs under its first name long enough for the recorder to know it on
 * every CPU (it blocks every 2 ms for 100 ms), then renames itself and blocks as long
 * again: the trace must carry the second name too. */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

static void nap_for(int n)
{
	struct timespec t = {0, 2000000};
	for (int i = 0; i < n; i++)
		nanosleep(&t, NULL);
}

static void *body(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "first-name");
	nap_for(50);
	pthread_setname_np(pthread_self(), "second-name");
	nap_for(50);
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, body, NULL);
	pthread_join(t, NULL);
	return 0;
}
