/*
 * An event loop that stalls once, for 300 ms, deep in one call chain:
 *   main > event_loop > handle_request > load_settings > parse_config (sleeps)
 * Built with -finstrument-functions and run under libcauseway (LD_PRELOAD); it calls
 * cw_heartbeat_fn once per loop turn through a weak reference, so it also runs
 * without the library. The stall watchdog (200 ms) must dump during the stall.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void cw_heartbeat_fn(void) __attribute__((weak));

static volatile unsigned long sink;

__attribute__((noinline)) static void wait_for_event(void) { usleep(2000); }

__attribute__((noinline)) static void compute(int i)
{
    for (int k = 0; k < 200; k++)
        sink += (unsigned long)(i * k);
}

__attribute__((noinline)) static void parse_config(int i, int stall_at)
{
    if (i == stall_at)
        usleep(300000); /* the stall */
    compute(i);
}

__attribute__((noinline)) static void load_settings(int i, int stall_at)
{
    parse_config(i, stall_at);
}

__attribute__((noinline)) static void handle_request(int i, int stall_at)
{
    compute(i);
    if (i % 10 == 0)
        load_settings(i, stall_at);
}

__attribute__((noinline)) static void event_loop(int turns, int stall_at)
{
    for (int i = 0; i < turns; i++) {
        if (cw_heartbeat_fn)
            cw_heartbeat_fn();
        wait_for_event();
        handle_request(i, stall_at);
    }
}

int main(int argc, char **argv)
{
    int turns = argc > 1 ? atoi(argv[1]) : 300;
    int stall_at = argc > 2 ? atoi(argv[2]) : 100;
    event_loop(turns, stall_at);
    printf("done %lu\n", sink);
    return 0;
}
