/*
 * commit-loop - one thread inserts rows and commits each one: write the row, then
 * fsync the file (an embedded database with a commit per insert).
 *
 * Problem: the thread's only wait is the disk. Each row costs a little CPU to
 * build (--row-us, default 20 us) and one flush; the flush is most of the round.
 *
 * Expected diagnosis: the knot {inserter, disk}; the inserter -> disk edge carries
 * the fsync stack under commit_row. Removing that edge's waits (`whatif --edge`,
 * `--waits-on` the disk, or `--site commit_row`, the same waits) predicts the
 * rows/s without the flush.
 *
 * --fixed: no flush (the database's "synchronous off"): the rows go to the page
 * cache only, and the loop runs at its CPU's pace.
 *
 * The file lives in --dir (default: the current directory if writable, else /tmp,
 * else /var/tmp, skipping tmpfs, where fsync is a no-op) and is removed at exit.
 */
#include "common.h"
#include "io.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/statfs.h>
#include <unistd.h>

#define ROW_SIZE 4096
/* The file is a 16 MiB ring so a long run never fills the disk. */
#define SLOTS 4096

static int row_us = 20;
static const char *dir;

static __attribute__((noinline)) void insert_row(int fd, unsigned char *row, uint64_t n)
{
	wl_burn_ns(row_us * WL_NS_PER_US); /* encoding and index stand-in */
	memset(row, 'a' + (int)(n % 26), ROW_SIZE);
	if (pwrite(fd, row, ROW_SIZE, (off_t)(n % SLOTS) * ROW_SIZE) != ROW_SIZE)
		wl_die("commit-loop: write: %s", strerror(errno));
}

static __attribute__((noinline)) void commit_row(int fd)
{
	if (wl_flush(fd, 0) != 0)
		wl_die("commit-loop: fsync: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	static const struct wl_opt opts[] = {
		{ "row-us", WL_OPT_INT, &row_us, 0, 1000000,
		  "CPU to build each row, us (default 20)" },
		{ "dir", WL_OPT_STR, &dir, 0, 0,
		  "directory for the table file (default: ., /tmp or /var/tmp)" },
		WL_SYNC_US_OPT,
		{ 0 },
	};
	struct wl_args a;
	wl_init(argc, argv, "commit-loop",
		"One thread inserting rows with a commit (fsync) per row; "
		"--fixed commits none.",
		opts, &a);
	wl_name_thread("inserter");
	int fd = wl_log_create("commit-loop", wl_log_dir("commit-loop", dir));
	static unsigned char row[ROW_SIZE];
	uint64_t n = 0;
	while (!wl_time_up(&a)) {
		insert_row(fd, row, n);
		if (!a.fixed)
			commit_row(fd);
		n++;
	}
	wl_report(&a, n);
	close(fd);
	unlink(wl_log_path());
	return 0;
}
