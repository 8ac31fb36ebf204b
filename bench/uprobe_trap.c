/*
 * uprobe_trap - what one uprobe hit costs, by the instruction it is placed on.
 *
 * usage: uprobe_trap CALLS
 *
 * Four functions of two instructions each, written in assembly so that their first
 * instruction is known: the uprobe on a function's entry sits on that instruction,
 * and the kernel either emulates it (a nop, a push, a branch) or copies it out of line
 * and single-steps it there (anything else: here an xor). On x86 since Linux 6.18 a
 * probe on a 5-byte nop is also turned into a call to a trampoline after its first
 * hit (no trap at all).
 *
 * Waits for SIGUSR1 (so the probes can be attached first), then times CALLS calls of
 * each function, three rounds, and prints "NAME ns_per_call" per function and round.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__asm__(".text\n"
	".globl trap_xor\n.type trap_xor,@function\ntrap_xor:\n"
	"\txor %eax,%eax\n\tret\n.size trap_xor,.-trap_xor\n"
	".globl trap_push\n.type trap_push,@function\ntrap_push:\n"
	"\tpush %rbp\n\tpop %rbp\n\tret\n.size trap_push,.-trap_push\n"
	".globl trap_nop1\n.type trap_nop1,@function\ntrap_nop1:\n"
	"\tnop\n\tret\n.size trap_nop1,.-trap_nop1\n"
	".globl trap_nop5\n.type trap_nop5,@function\ntrap_nop5:\n"
	"\t.byte 0x0f,0x1f,0x44,0x00,0x00\n\tret\n.size trap_nop5,.-trap_nop5\n");

void trap_xor(void);
void trap_push(void);
void trap_nop1(void);
void trap_nop5(void);

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: uprobe_trap CALLS\n");
		return 2;
	}
	static const struct {
		const char *name;
		void (*fn)(void);
	} fns[] = {
		{ "xor", trap_xor },
		{ "push", trap_push },
		{ "nop1", trap_nop1 },
		{ "nop5", trap_nop5 },
	};
	long calls = atol(argv[1]);
	signal(SIGUSR1, on_usr1);
	while (!go)
		pause();
	for (int round = 0; round < 3; round++)
		for (unsigned i = 0; i < sizeof fns / sizeof fns[0]; i++) {
			long long t0 = now_ns();
			for (long k = 0; k < calls; k++)
				fns[i].fn();
			printf("%s %.1f\n", fns[i].name, (double)(now_ns() - t0) / calls);
		}
	return 0;
}
