/*
 * Two latency peaks in one function, for the offline root-cause path on a libcauseway
 * trace. Built with -finstrument-functions, run under libcauseway with a dump at exit.
 *
 * do_operation takes one of two paths:
 *   fast (3 of 4 calls): do_operation > fast_path > checksum  (a short loop)
 *   slow (1 of 4):       do_operation > slow_path > nap       (usleep 1 ms)
 *                                                 > log_result (short)
 * so its profile has a fast peak of microseconds and a slow one of a millisecond.
 */
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void checksum(int i)
{
	for (int k = 0; k < 300; k++)
		sink += (unsigned long)(i ^ k);
}

__attribute__((noinline)) static void nap(void) { usleep(1000); }

__attribute__((noinline)) static void log_result(int i) { sink += (unsigned long)i; }

__attribute__((noinline)) static void fast_path(int i) { checksum(i); }

__attribute__((noinline)) static void slow_path(int i)
{
	nap();
	log_result(i);
}

__attribute__((noinline)) static void do_operation(int i)
{
	if (i % 4 == 3)
		slow_path(i);
	else
		fast_path(i);
}

int main(int argc, char **argv)
{
	int ops = argc > 1 ? atoi(argv[1]) : 400;
	for (int i = 0; i < ops; i++)
		do_operation(i);
	return 0;
}
