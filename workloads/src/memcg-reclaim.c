/*
 * memcg-reclaim - readers whose cgroup's memory limit, not their work, is the limit.
 *
 * The process puts itself into a cgroup of its own with a memory limit (--limit-mb,
 * 64) and its reader threads `reader-0..N-1` (--readers, 2) read a file working set
 * larger than that (--set-mb, 192) over and over: each reader loops over its own
 * part of the file in --read-kb (64) blocks with pread(), the way a database reads
 * its pages (readahead off: POSIX_FADV_RANDOM, so every block is one read of its
 * own). The per-block work is a copy and a checksum of one word per page, so a
 * block found in the page cache costs a few us. Under the limit the page cache
 * can hold a third of the set: every block has been reclaimed since the last pass
 * (a cyclic scan evicts in LRU order), so every pread charges new pages to the
 * cgroup, reclaims others (direct reclaim in the reader) and waits for the disk.
 *
 * --fixed: the same cgroup without a limit (memory.limit_in_bytes -1, memory.max
 * "max"): the first pass reads from the disk, every later one from the page cache.
 *
 * The file (`--dir`, default /tmp; causeway-memcg-reclaim.XXXXXX) is written
 * before the process enters the cgroup, with O_DIRECT where the file system
 * allows it, flushed and dropped from the page cache (fdatasync,
 * POSIX_FADV_DONTNEED), so its pages are charged to the new cgroup as
 * the readers read them and the first pass reads the disk. The clock starts after
 * this setup. The cgroup: cgroup v1's memory controller where it is mounted
 * (/sys/fs/cgroup/memory), else cgroup v2 (/sys/fs/cgroup, or
 * /sys/fs/cgroup/unified with the memory controller available). Needs root. At
 * exit, also on SIGINT/SIGTERM, the process moves back to the cgroup it came
 * from, removes its own and deletes the file. The cgroup's reclaim counters
 * (failcnt or memory.events max, memory.stat) and the bytes this process read
 * from the disk (/proc/self/io) go to stderr.
 */
#include "common.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_READERS 16

static int nreaders = 2;
static int limit_mb = 64;
static int set_mb = 192;
static int read_kb = 64;
static int use_mmap; /* --mmap 1: the readers copy from a mapping (page faults) */
static const char *file_map; /* the mapping, with --mmap 1 */
static const char *dir = "/tmp";
static struct wl_args args;

static int cgroup_v1;
static char cgroup_dir[256];   /* ours */
static char home_procs[512];   /* cgroup.procs of the cgroup we came from */
static char file_path[4096];
static char pid_text[32];
static volatile sig_atomic_t entered; /* we are in our cgroup */
static int file_fd = -1;

/* ------------------------------------------------------------------ */
/* cleanup, also from a signal handler (only async-signal-safe calls)  */
/* ------------------------------------------------------------------ */

static void leave_cgroup(void)
{
	if (!entered || !home_procs[0])
		return;
	int fd = open(home_procs, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, pid_text, strlen(pid_text)) > 0)
			entered = 0;
		close(fd);
	}
}

static void cleanup(void)
{
	leave_cgroup();
	if (cgroup_dir[0])
		rmdir(cgroup_dir);
	if (file_path[0])
		unlink(file_path);
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ------------------------------------------------------------------ */
/* the cgroup                                                          */
/* ------------------------------------------------------------------ */

static void write_file(const char *dir_, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir_, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, strlen(text)) < 0) {
		int e = errno;
		cleanup();
		wl_die("memcg-reclaim: writing %s: %s", path, strerror(e));
	}
	close(fd);
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* Does `list` (comma-separated, or space-separated for cgroup.controllers) name
 * `word`? */
static int lists(const char *list, const char *word, const char *seps)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", list);
	char *save = NULL;
	for (char *w = strtok_r(buf, seps, &save); w; w = strtok_r(NULL, seps, &save))
		if (!strcmp(w, word))
			return 1;
	return 0;
}

/* The cgroup.procs file of the memory cgroup this process is in now (v1: the
 * memory hierarchy's line of /proc/self/cgroup; v2: the "0::" line), under `root`. */
static void find_home(const char *root)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return;
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		const char *ctrls = c1 + 1, *path = c2 + 1;
		int match = cgroup_v1 ? lists(ctrls, "memory", ",")
				      : (!strncmp(line, "0:", 2) && !*ctrls);
		if (match) {
			snprintf(home_procs, sizeof home_procs, "%s%s/cgroup.procs",
				 root, strcmp(path, "/") ? path : "");
			break;
		}
	}
	fclose(f);
}

static const char *make_cgroup(void)
{
	char text[64];
	if (args.fixed)
		snprintf(text, sizeof text, "%s", "-1");
	else
		snprintf(text, sizeof text, "%lld", (long long)limit_mb << 20);

	if (exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")) {
		cgroup_v1 = 1;
		const char *root = "/sys/fs/cgroup/memory";
		find_home(root);
		snprintf(cgroup_dir, sizeof cgroup_dir, "%s/cw-memcg-reclaim-%d",
			 root, (int)getpid());
		if (mkdir(cgroup_dir, 0755) != 0) {
			int e = errno;
			cgroup_dir[0] = 0;
			wl_die("memcg-reclaim: mkdir %s/cw-memcg-reclaim-%d: %s (needs root)",
			       root, (int)getpid(), strerror(e));
		}
		write_file(cgroup_dir, "memory.limit_in_bytes", text);
		return "memory.limit_in_bytes";
	}
	const char *roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
		char probe[256], ctrls[512] = "";
		snprintf(probe, sizeof probe, "%s/cgroup.controllers", roots[i]);
		FILE *f = fopen(probe, "r");
		if (!f)
			continue;
		if (!fgets(ctrls, sizeof ctrls, f))
			ctrls[0] = 0;
		fclose(f);
		ctrls[strcspn(ctrls, "\n")] = 0;
		if (!lists(ctrls, "memory", " "))
			continue;
		find_home(roots[i]);
		write_file(roots[i], "cgroup.subtree_control", "+memory");
		snprintf(cgroup_dir, sizeof cgroup_dir, "%s/cw-memcg-reclaim-%d",
			 roots[i], (int)getpid());
		if (mkdir(cgroup_dir, 0755) != 0) {
			int e = errno;
			cgroup_dir[0] = 0;
			wl_die("memcg-reclaim: mkdir %s/cw-memcg-reclaim-%d: %s (needs root)",
			       roots[i], (int)getpid(), strerror(e));
		}
		write_file(cgroup_dir, "memory.max", args.fixed ? "max" : text);
		return "memory.max";
	}
	wl_die("memcg-reclaim: no cgroup memory controller found (cgroup v1 "
	       "/sys/fs/cgroup/memory or cgroup v2)");
}

static void enter_cgroup(void)
{
	entered = 1; /* before the write: a signal in between still moves us back */
	write_file(cgroup_dir, "cgroup.procs", pid_text);
}

/* One "key value" line of a flat-keyed cgroup or proc file, or -1. */
static long long read_key(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[256];
	long long v = -1;
	size_t klen = strlen(key);
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, key, klen) && (line[klen] == ' ' || line[klen] == ':')) {
			v = atoll(line + klen + 1);
			break;
		}
	fclose(f);
	return v;
}

static long long read_number(const char *path)
{
	FILE *f = fopen(path, "r");
	long long v = -1;
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The cgroup's reclaim counters, on stderr. */
static void report_cgroup(void)
{
	char path[512];
	if (cgroup_v1) {
		snprintf(path, sizeof path, "%s/memory.failcnt", cgroup_dir);
		long long failcnt = read_number(path);
		snprintf(path, sizeof path, "%s/memory.max_usage_in_bytes", cgroup_dir);
		long long max_usage = read_number(path);
		snprintf(path, sizeof path, "%s/memory.stat", cgroup_dir);
		fprintf(stderr, "memcg-reclaim: cgroup failcnt %lld, max usage %.1f MiB, "
				"pgpgin %lld, pgpgout %lld, cache %.1f MiB\n",
			failcnt, (double)max_usage / (1 << 20), read_key(path, "pgpgin"),
			read_key(path, "pgpgout"),
			(double)read_key(path, "cache") / (1 << 20));
	} else {
		snprintf(path, sizeof path, "%s/memory.events", cgroup_dir);
		long long max_events = read_key(path, "max");
		snprintf(path, sizeof path, "%s/memory.stat", cgroup_dir);
		fprintf(stderr, "memcg-reclaim: cgroup memory.events max %lld, pgscan %lld, "
				"pgsteal %lld, workingset_refault_file %lld, file %.1f MiB\n",
			max_events, read_key(path, "pgscan"), read_key(path, "pgsteal"),
			read_key(path, "workingset_refault_file"),
			(double)read_key(path, "file") / (1 << 20));
	}
}

/* ------------------------------------------------------------------ */
/* the file                                                            */
/* ------------------------------------------------------------------ */

static void make_file(void)
{
	snprintf(file_path, sizeof file_path, "%s/causeway-memcg-reclaim.XXXXXX", dir);
	file_fd = mkstemp(file_path);
	if (file_fd < 0) {
		int e = errno;
		file_path[0] = 0;
		cleanup();
		wl_die("memcg-reclaim: cannot create a file in %s: %s", dir, strerror(e));
	}
	/* Written with O_DIRECT where the file system allows it: past the page
	 * cache, so nothing is cached (or charged anywhere) and it is quick. */
	int wfd = open(file_path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (wfd < 0)
		wfd = file_fd;
	const size_t chunk = 1 << 20;
	uint64_t *buf = aligned_alloc(4096, chunk);
	if (!buf)
		wl_die("memcg-reclaim: out of memory");
	for (long long mb = 0; mb < set_mb; mb++) {
		for (size_t i = 0; i < chunk / sizeof *buf; i++)
			buf[i] = (uint64_t)mb * chunk + i * sizeof *buf;
		if (pwrite(wfd, buf, chunk, (off_t)mb * chunk) != (ssize_t)chunk) {
			int e = errno;
			cleanup();
			wl_die("memcg-reclaim: writing %s: %s", file_path,
			       e ? strerror(e) : "short write");
		}
	}
	free(buf);
	if (wfd != file_fd)
		close(wfd);
	/* Clean pages can be dropped: the first pass then reads the disk, and the
	 * pages the readers bring in are charged to the new cgroup. */
	if (fdatasync(file_fd) != 0) {
		int e = errno;
		cleanup();
		wl_die("memcg-reclaim: fdatasync %s: %s", file_path, strerror(e));
	}
	posix_fadvise(file_fd, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(file_fd, 0, 0, POSIX_FADV_RANDOM);

	/* What is still cached (should be ~0). */
	size_t len = (size_t)set_mb << 20, pages = len / 4096;
	void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, file_fd, 0);
	unsigned char *vec = malloc(pages);
	if (map != MAP_FAILED && vec && mincore(map, len, vec) == 0) {
		size_t resident = 0;
		for (size_t i = 0; i < pages; i++)
			resident += vec[i] & 1;
		if (resident > pages / 100)
			fprintf(stderr, "memcg-reclaim: warning: %.1f MiB of the file still "
					"cached after POSIX_FADV_DONTNEED\n",
				(double)resident * 4096 / (1 << 20));
	}
	free(vec);
	if (map != MAP_FAILED)
		munmap(map, len);
}

/* ------------------------------------------------------------------ */
/* the readers                                                         */
/* ------------------------------------------------------------------ */

struct reader {
	int id;
	pthread_t tid;
	off_t first, end; /* its part of the file */
	uint64_t blocks, sum;
	char *buf;
};

/* One block: a pread (a page-cache copy, or reclaim + a disk read under the
 * limit) and one word per page looked at. */
static __attribute__((noinline)) uint64_t read_block(int fd, char *buf, off_t off)
{
	size_t len = (size_t)read_kb << 10;
	if (file_map) {
		/* Each page not in the cache is a major fault: the disk read (and the
		 * reclaim that makes room) happens inside the fault, not a system call. */
		memcpy(buf, file_map + off, len);
	} else {
		ssize_t n;
		while ((n = pread(fd, buf, len, off)) < 0 && errno == EINTR)
			;
		if (n != (ssize_t)len)
			wl_die("memcg-reclaim: pread at %lld: %s", (long long)off,
			       n < 0 ? strerror(errno) : "short read");
	}
	uint64_t sum = 0;
	for (size_t i = 0; i < len; i += 4096)
		sum += *(const uint64_t *)(buf + i);
	return sum;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	wl_name_thread_idx("reader", r->id);
	off_t off = r->first;
	while (!wl_time_up(&args)) {
		r->sum += read_block(file_fd, r->buf, off);
		r->blocks++;
		off += (off_t)read_kb << 10;
		if (off + ((off_t)read_kb << 10) > r->end)
			off = r->first;
	}
	return NULL;
}

static long long read_bytes_from_disk(void)
{
	return read_key("/proc/self/io", "read_bytes");
}

int main(int argc, char **argv)
{
	const struct wl_opt opts[] = {
		{ "readers", WL_OPT_INT, &nreaders, 1, MAX_READERS,
		  "reader threads, each with its part of the file (default 2)" },
		{ "limit-mb", WL_OPT_INT, &limit_mb, 4, 1 << 20,
		  "the cgroup's memory limit in MiB (default 64)" },
		{ "set-mb", WL_OPT_INT, &set_mb, 1, 1 << 16,
		  "size of the file read over and over in MiB (default 192)" },
		{ "read-kb", WL_OPT_INT, &read_kb, 4, 4096,
		  "bytes per pread in KiB, a multiple of 4 (default 64)" },
		{ "mmap", WL_OPT_INT, &use_mmap, 0, 1,
		  "1: read through a shared mapping of the file, so the reads are page "
		  "faults (default 0: pread)" },
		{ "dir", WL_OPT_STR, &dir, 0, 0,
		  "directory for the file, not tmpfs (default /tmp)" },
		{ 0 },
	};
	wl_init(argc, argv, "memcg-reclaim",
		"reader threads in a cgroup with a 64 MiB memory limit read a 192 MiB "
		"file over and over:\nthe page cache cannot hold it, every read "
		"reclaims and waits for the disk.\n--fixed: no memory limit.",
		opts, &args);
	if (read_kb % 4)
		wl_usage_error("memcg-reclaim", "--read-kb: expected a multiple of 4, "
						"got %d", read_kb);
	if ((long long)set_mb * 1024 < (long long)read_kb * nreaders)
		wl_usage_error("memcg-reclaim", "--set-mb: too small for %d readers "
						"of %d KiB", nreaders, read_kb);
	snprintf(pid_text, sizeof pid_text, "%d", (int)getpid());
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	const char *knob = make_cgroup();
	make_file();
	enter_cgroup();
	if (use_mmap) {
		size_t len = (size_t)set_mb << 20;
		void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, file_fd, 0);
		if (m == MAP_FAILED)
			wl_die("memcg-reclaim: mmap: %s", strerror(errno));
		/* No readahead around a fault: one page per fault, as pread reads one
		 * block (readahead is off for it too). */
		madvise(m, len, MADV_RANDOM);
		file_map = m;
	}

	struct reader readers[MAX_READERS];
	off_t block = (off_t)read_kb << 10;
	off_t blocks = ((off_t)set_mb << 20) / block;
	long long disk0 = read_bytes_from_disk();
	/* The clock starts now: setup (writing the file) is not part of the run. */
	args.start_ns = wl_now_ns();
	args.deadline_ns = args.start_ns + (int64_t)(args.seconds * (double)WL_NS_PER_S);
	for (int i = 0; i < nreaders; i++) {
		readers[i] = (struct reader){
			.id = i,
			.first = blocks * i / nreaders * block,
			.end = blocks * (i + 1) / nreaders * block,
			.buf = aligned_alloc(4096, (size_t)block),
		};
		if (!readers[i].buf)
			wl_die("memcg-reclaim: out of memory");
		WL_CHECK_PT(pthread_create(&readers[i].tid, NULL, reader_main,
					   &readers[i]));
	}
	uint64_t total = 0, sum = 0;
	for (int i = 0; i < nreaders; i++) {
		pthread_join(readers[i].tid, NULL);
		total += readers[i].blocks;
		sum += readers[i].sum;
		free(readers[i].buf);
	}
	long long disk1 = read_bytes_from_disk();

	report_cgroup();
	cleanup();
	close(file_fd);
	fprintf(stderr, "memcg-reclaim: %s mode, cgroup %s (%s %s), %d readers, "
			"%d MiB set, %llu reads of %d KiB (%.1f MiB), %.1f MiB from the "
			"disk, checksum %llx\n",
		args.fixed ? "fixed" : "plain", cgroup_dir, knob,
		args.fixed ? "unlimited" : "limited", nreaders, set_mb,
		(unsigned long long)total, read_kb,
		(double)total * read_kb / 1024, (double)(disk1 - disk0) / (1 << 20),
		(unsigned long long)sum);
	wl_report(&args, total);
	return 0;
}
