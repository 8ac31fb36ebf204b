/*
 * retitle - a parent forks two children that give themselves titles, as pre-forked
 * servers do: "retitle: log flusher" renames its thread (prctl) and rewrites its argv;
 * "retitle: checkpointer" only rewrites its argv (the kernel reports no event for
 * that). Each then sleeps for 1.5 s. Run it with a long padding argument so the argv
 * area has room for the titles.
 */
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void set_title(int argc, char **argv, const char *title)
{
	char *start = argv[0];
	char *end = argv[argc - 1] + strlen(argv[argc - 1]);
	size_t room = (size_t)(end - start);
	memset(start, 0, room);
	strncpy(start, title, room - 1);
}

static void child(int argc, char **argv, const char *comm, const char *title)
{
	if (comm)
		prctl(PR_SET_NAME, comm, 0, 0, 0);
	set_title(argc, argv, title);
	for (int i = 0; i < 15; i++)
		usleep(100000);
	_exit(0);
}

int main(int argc, char **argv)
{
	if (fork() == 0)
		child(argc, argv, "log-flusher", "retitle: log flusher");
	if (fork() == 0)
		child(argc, argv, NULL, "retitle: checkpointer");
	while (wait(NULL) > 0)
		;
	return 0;
}
