/* A minimal JIT: copies a busy loop into anonymous executable memory, publishes its
 * name the way runtimes do, and runs it for the given seconds.
 *
 *   jit-code SECONDS perfmap DIR   writes /tmp/perf-PID.map (DIR unused)
 *   jit-code SECONDS jitdump DIR   writes DIR/jit-PID.dump and maps it executable
 *   jit-code SECONDS jitdump-late DIR   the same, 100 ms after the code was mapped
 *                                  (a recorder reading the mappings in between
 *                                  must look again once the code runs)
 *
 * The function is named "jit_busy_loop" in either. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* mov ecx, 0x100000; 1: dec ecx; jnz 1b; ret */
static const unsigned char code[] = {0xb9, 0x00, 0x00, 0x10, 0x00, 0xff, 0xc9,
				     0x75, 0xfc, 0xc3};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + t.tv_nsec;
}

static void perf_map(void *fn)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "%lx %zx jit_busy_loop\n", (unsigned long)(uintptr_t)fn, sizeof(code));
	fclose(f);
}

static void put(FILE *f, const void *p, size_t n)
{
	if (fwrite(p, 1, n, f) != n) {
		perror("jitdump");
		exit(1);
	}
}

/* The jitdump format (perf's tools/perf/Documentation/jitdump-specification.txt):
 * a 40-byte header, then records; one JIT_CODE_LOAD record here. */
static void jitdump(void *fn, const char *dir, unsigned late_us)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, getpid());
	FILE *f = fopen(path, "w+");
	if (!f) {
		perror(path);
		exit(1);
	}
	struct {
		uint32_t magic, version, total_size, elf_mach, pad1, pid;
		uint64_t timestamp, flags;
	} h = {0x4A695444, 1, 40, 62, 0, (uint32_t)getpid(), now_ns(), 0};
	put(f, &h, sizeof(h));
	const char name[] = "jit_busy_loop";
	struct {
		uint32_t id, total_size;
		uint64_t timestamp;
		uint32_t pid, tid;
		uint64_t vma, code_addr, code_size, code_index;
	} r = {0, 0, now_ns(), (uint32_t)getpid(), (uint32_t)syscall(SYS_gettid),
	       (uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)fn, sizeof(code), 1};
	r.total_size = sizeof(r) + sizeof(name) + sizeof(code);
	put(f, &r, sizeof(r));
	put(f, name, sizeof(name));
	put(f, code, sizeof(code));
	fflush(f);
	if (late_us)
		usleep(late_us);
	/* Runtimes map the file executable so that profilers find it in the mappings. */
	void *marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(f), 0);
	if (marker == MAP_FAILED) {
		perror("mmap jitdump");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: jit-code SECONDS perfmap|jitdump|jitdump-late DIR\n");
		return 2;
	}
	double secs = atof(argv[1]);
	unsigned char *fn = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fn == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(fn, code, sizeof(code));
	if (strcmp(argv[2], "jitdump") == 0)
		jitdump(fn, argv[3], 0);
	else if (strcmp(argv[2], "jitdump-late") == 0)
		jitdump(fn, argv[3], 100000);
	else
		perf_map(fn);
	void (*loop)(void) = (void (*)(void))fn;
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	while (now_ns() < end)
		loop();
	return 0;
}
