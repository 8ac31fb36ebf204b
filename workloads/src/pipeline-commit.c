/*
 * pipeline-commit - a request pipeline whose one sync thread commits one request
 * per fdatasync, between network threads and reply threads.
 *
 * Problem: the server process ("pc-server") listens on 127.0.0.1 (ephemeral
 * port).  Its "acceptor" thread accepts connections and deals them out to
 * --net-threads "net-i" threads (default 2), each running an epoll loop over
 * its connections: it reads a 64-byte request, parses it and puts it on the
 * request queue (mutex + condvar).  The single "sync" thread takes one request
 * at a time, appends a 4 KiB record to a log (pwrite, append_request) and
 * fdatasyncs it (sync_log), then hands it to the reply queue, from which
 * --reply-threads "reply-i" threads (default 2) write the replies back.  The
 * client process ("pc-client", forked) runs --clients "client-i" threads
 * (default 16), one connection each, request -> reply, as a server's own
 * load generator does.
 *
 * Expected diagnosis: knot {sync, disk} at fdatasync (sync_log ->
 * fdatasync): the clients wait for the reply threads (socket), the reply
 * threads for the sync thread (reply queue), and the net threads feed the
 * request queue.
 *
 * --fixed: group commit: the sync thread takes every pending request,
 * appends them all and syncs once for the batch.
 */
#include "common.h"
#include "io.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CLIENTS 256
#define MAX_THREADS 16
#define REQ_SIZE 64
#define REC_SIZE 4096
#define LOG_SLOTS 4096 /* 16 MiB ring */

static int nclients = 16, nnet = 2, nreply = 2;
static struct wl_args args;
static int log_fd = -1, listen_fd = -1;
static struct sockaddr_in server_addr;

/* Set once at shutdown and never read, so it stays readable in every poll and
 * epoll set that holds it: one write stops the acceptor and all net threads. */
static int stop_fd = -1;

/* One connection; it carries its one request through the pipeline (a client
 * has one request in flight, so the connection is never in two queues). */
struct conn {
	struct conn *next;
	int fd;
	unsigned char data[REQ_SIZE];
};

static struct conn conns[MAX_CLIENTS];
static int nconns;

/* A mutex + condvar FIFO of connections with a pending request. */
struct queue {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct conn *head, **tail;
	int stopping;
};

static struct queue requests, replies;
static int net_ep[MAX_THREADS];
static uint64_t seq, syncs;

static void queue_init(struct queue *q)
{
	WL_CHECK_PT(pthread_mutex_init(&q->lock, NULL));
	wl_cond_init(&q->cv);
	q->head = NULL;
	q->tail = &q->head;
}

/* Appends a chain of connections (linked by next, NULL-terminated). */
static void queue_put(struct queue *q, struct conn *first)
{
	struct conn *last = first;
	while (last->next)
		last = last->next;
	pthread_mutex_lock(&q->lock);
	*q->tail = first;
	q->tail = &last->next;
	if (first == last)
		pthread_cond_signal(&q->cv);
	else
		pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->lock);
}

/* Takes the oldest entry, or every entry when `all`; NULL once stopping and empty. */
static struct conn *queue_take(struct queue *q, int all)
{
	pthread_mutex_lock(&q->lock);
	while (!q->head && !q->stopping)
		pthread_cond_wait(&q->cv, &q->lock);
	struct conn *c = q->head;
	if (c) {
		if (all || !c->next) {
			q->head = NULL;
			q->tail = &q->head;
		} else {
			q->head = c->next;
			c->next = NULL;
		}
	}
	pthread_mutex_unlock(&q->lock);
	return c;
}

static void queue_stop(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->stopping = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->lock);
}

/* ---- sync thread ------------------------------------------------- */

static __attribute__((noinline)) void append_request(const struct conn *c)
{
	unsigned char rec[REC_SIZE];
	memset(rec, c->data[0], sizeof rec);
	off_t off = (off_t)(seq++ % LOG_SLOTS) * REC_SIZE;
	if (pwrite(log_fd, rec, REC_SIZE, off) != REC_SIZE)
		wl_die("pipeline-commit: pwrite: %s", strerror(errno));
}

/* Kept out of line so the sync is an obvious frame in stacks. */
static __attribute__((noinline)) void sync_log(void)
{
	if (wl_flush(log_fd, 1) != 0)
		wl_die("pipeline-commit: fdatasync: %s", strerror(errno));
	syncs++;
}

static void *sync_main(void *arg)
{
	(void)arg;
	wl_name_thread("sync");
	struct conn *batch;
	/* Plain: one request per sync, the disk's latency paces every request. */
	while ((batch = queue_take(&requests, args.fixed))) {
		for (struct conn *c = batch; c; c = c->next)
			append_request(c);
		sync_log();
		queue_put(&replies, batch);
	}
	return NULL;
}

/* ---- reply threads ----------------------------------------------- */

static __attribute__((noinline)) void send_reply(struct conn *c)
{
	wl_burn_ns(2 * WL_NS_PER_US); /* encode the reply */
	c->data[1] = 'k';
	/* After this send the client may send its next request at once: c must
	 * not be touched again here. */
	if (wl_io_full(c->fd, c->data, sizeof c->data, 1) != 1)
		wl_die("pipeline-commit: reply: %s", strerror(errno));
}

static void *reply_main(void *arg)
{
	wl_name_thread_idx("reply", (int)(intptr_t)arg);
	struct conn *c;
	while ((c = queue_take(&replies, 0)))
		send_reply(c);
	return NULL;
}

/* ---- net threads ------------------------------------------------- */

static __attribute__((noinline)) void parse_request(struct conn *c)
{
	wl_burn_ns(5 * WL_NS_PER_US); /* decode, check, route */
	c->next = NULL;
	queue_put(&requests, c);
}

static void *net_main(void *arg)
{
	int idx = (int)(intptr_t)arg;
	wl_name_thread_idx("net", idx);
	struct epoll_event evs[64];
	for (;;) {
		int n = epoll_wait(net_ep[idx], evs, 64, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			wl_die("pipeline-commit: epoll_wait: %s", strerror(errno));
		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			if (!c)
				return NULL; /* stop_fd */
			/* epoll said readable; a 64-byte request arrives in one piece. */
			int r = wl_io_full(c->fd, c->data, sizeof c->data, 0);
			if (r == 1) {
				parse_request(c);
			} else {
				/* The client is done (it has no request in flight). */
				epoll_ctl(net_ep[idx], EPOLL_CTL_DEL, c->fd, NULL);
			}
		}
	}
}

/* ---- acceptor ---------------------------------------------------- */

static void *acceptor_main(void *arg)
{
	(void)arg;
	wl_name_thread("acceptor");
	struct pollfd pf[2] = { { .fd = listen_fd, .events = POLLIN },
				{ .fd = stop_fd, .events = POLLIN } };
	for (;;) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			wl_die("pipeline-commit: poll: %s", strerror(errno));
		}
		if (pf[1].revents)
			return NULL;
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (nconns == MAX_CLIENTS)
			wl_die("pipeline-commit: too many connections");
		wl_set_nodelay(fd);
		struct conn *c = &conns[nconns];
		c->fd = fd;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
		/* Round robin over the net threads, as a server's I/O threads are fed. */
		if (epoll_ctl(net_ep[nconns % nnet], EPOLL_CTL_ADD, fd, &ev) != 0)
			wl_die("pipeline-commit: epoll_ctl: %s", strerror(errno));
		nconns++;
	}
}

/* ---- client process ---------------------------------------------- */

struct client {
	pthread_t tid;
	int id;
	uint64_t requests;
} __attribute__((aligned(64)));

static struct client clients[MAX_CLIENTS];

static __attribute__((noinline)) int call_server(int fd, char *req)
{
	return wl_io_full(fd, req, REQ_SIZE, 1) == 1 && wl_io_full(fd, req, REQ_SIZE, 0) == 1;
}

static void *client_thread(void *p)
{
	struct client *c = p;
	wl_name_thread_idx("client", c->id);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&server_addr, sizeof server_addr) != 0)
		wl_die("pipeline-commit: connect: %s", strerror(errno));
	wl_set_nodelay(fd);
	char req[REQ_SIZE];
	memset(req, 'a' + c->id % 26, sizeof req);
	while (!wl_time_up(&args)) {
		if (!call_server(fd, req))
			wl_die("pipeline-commit: request failed");
		c->requests++;
	}
	close(fd);
	return NULL;
}

static void client_main(int out)
{
	wl_name_process("pc-client");
	for (int i = 0; i < nclients; i++) {
		clients[i].id = i;
		if (pthread_create(&clients[i].tid, NULL, client_thread, &clients[i]))
			wl_die("pipeline-commit: pthread_create failed");
	}
	uint64_t total = 0;
	for (int i = 0; i < nclients; i++) {
		pthread_join(clients[i].tid, NULL);
		total += clients[i].requests;
	}
	if (write(out, &total, sizeof total) != sizeof total)
		wl_die("pipeline-commit: result pipe: %s", strerror(errno));
	_exit(0);
}

/* ---- server ------------------------------------------------------ */

static void setup(const char *dir)
{
	log_fd = wl_log_create("pipeline-commit", dir);
	queue_init(&requests);
	queue_init(&replies);
	stop_fd = eventfd(0, EFD_CLOEXEC);
	if (stop_fd < 0)
		wl_die("pipeline-commit: eventfd: %s", strerror(errno));
	for (int i = 0; i < nnet; i++) {
		net_ep[i] = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
		if (net_ep[i] < 0 || epoll_ctl(net_ep[i], EPOLL_CTL_ADD, stop_fd, &ev) != 0)
			wl_die("pipeline-commit: epoll: %s", strerror(errno));
	}

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		wl_die("pipeline-commit: socket: %s", strerror(errno));
	server_addr.sin_family = AF_INET;
	server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof server_addr;
	if (bind(listen_fd, (struct sockaddr *)&server_addr, sizeof server_addr) ||
	    listen(listen_fd, MAX_CLIENTS) ||
	    getsockname(listen_fd, (struct sockaddr *)&server_addr, &len))
		wl_die("pipeline-commit: listen: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	const struct wl_opt extra[] = {
		WL_SYNC_US_OPT,
		{ "clients", WL_OPT_INT, &nclients, 1, MAX_CLIENTS,
		  "client threads, one connection each (default 16)" },
		{ "net-threads", WL_OPT_INT, &nnet, 1, MAX_THREADS,
		  "epoll threads reading requests (default 2)" },
		{ "reply-threads", WL_OPT_INT, &nreply, 1, MAX_THREADS,
		  "threads writing replies (default 2)" },
		{ "dir", WL_OPT_STR, &dir, 0, 0,
		  "directory for the log file (default . or /tmp, not tmpfs)" },
		{ 0 },
	};
	wl_init(argc, argv, "pipeline-commit",
		"Network threads queue requests to one sync thread that appends and "
		"fdatasyncs one request at a time, then reply threads answer "
		"(--fixed: one sync per batch of pending requests).",
		extra, &args);
	wl_name_process("pc-server");
	setup(wl_log_dir("pipeline-commit", dir));

	int res[2];
	if (pipe(res) != 0)
		wl_die("pipeline-commit: pipe: %s", strerror(errno));
	pid_t client = fork();
	if (client < 0)
		wl_die("pipeline-commit: fork: %s", strerror(errno));
	if (client == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		close(res[0]);
		client_main(res[1]);
	}
	close(res[1]);
	pthread_t acceptor_t, sync_t, net_t[MAX_THREADS], reply_t[MAX_THREADS];
	WL_CHECK_PT(pthread_create(&sync_t, NULL, sync_main, NULL));
	for (int i = 0; i < nreply; i++)
		WL_CHECK_PT(pthread_create(&reply_t[i], NULL, reply_main, (void *)(intptr_t)i));
	for (int i = 0; i < nnet; i++)
		WL_CHECK_PT(pthread_create(&net_t[i], NULL, net_main, (void *)(intptr_t)i));
	WL_CHECK_PT(pthread_create(&acceptor_t, NULL, acceptor_main, NULL));

	uint64_t total = 0;
	if (read(res[0], &total, sizeof total) != sizeof total)
		wl_die("pipeline-commit: the client died");
	while (waitpid(client, NULL, 0) < 0 && errno == EINTR)
		;
	/* The client waited for every reply, so nothing is in flight any more. */
	uint64_t one = 1;
	if (write(stop_fd, &one, sizeof one) != sizeof one)
		wl_die("pipeline-commit: eventfd write: %s", strerror(errno));
	pthread_join(acceptor_t, NULL);
	for (int i = 0; i < nnet; i++)
		pthread_join(net_t[i], NULL);
	queue_stop(&requests);
	pthread_join(sync_t, NULL);
	queue_stop(&replies);
	for (int i = 0; i < nreply; i++)
		pthread_join(reply_t[i], NULL);
	for (int i = 0; i < nconns; i++)
		close(conns[i].fd);
	fprintf(stderr, "pipeline-commit: %" PRIu64 " requests, %" PRIu64 " syncs\n", total,
		syncs);
	unlink(wl_log_path());
	wl_report(&args, total);
	return 0;
}
