/*
 * blocking-net - a request/response server whose thread pool is too small.
 *
 * Problem: the process runs a TCP server on 127.0.0.1 (ephemeral port)
 * with a pool of --server-threads "server-i" threads (default 1) that
 * share one epoll set (EPOLLONESHOT: one thread per ready connection).
 * Each request needs ~50 us of CPU plus a blocking ~500 us backend call
 * (simulated with a sleep) before the response goes out.  --clients
 * "client-i" threads (default 4) each connect once and then loop
 * request -> wait for response.  With one server thread, requests are
 * served one at a time and the backend waits are serialised; the clients
 * spend their time blocked in recv().
 *
 * Expected diagnosis: clients wait on the server thread (recv on the
 * socket, woken through the loopback device / softirq when the server
 * writes), the server thread waits on the clients (epoll_wait) and on the
 * backend sleep (timer): a client <-> loopback <-> server cycle whose
 * server side is a single, never-parallel thread.
 *
 * --fixed: the pool gets one server thread per client, so backend waits
 * overlap and throughput scales with the number of clients.
 */
#include "common.h"
#include "io.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_THREADS 256
#define REQ_SIZE 64
#define RESP_SIZE 256

/* epoll tags: which kind of fd an event is for (fd in the low 32 bits). */
#define TAG_LISTEN (1ULL << 32)
#define TAG_CONN (2ULL << 32)
#define TAG_QUIT (3ULL << 32)

static int server_threads = 1;
static int nclients = 4;
static int work_us = 50;
static int backend_us = 500;

static struct wl_args args;
static int listen_fd, epoll_fd, quit_fd;
static struct sockaddr_in server_addr;

struct client {
	pthread_t tid;
	int id;
	uint64_t requests;
} __attribute__((aligned(64)));

static struct client clients[MAX_THREADS];
static pthread_t servers[MAX_THREADS];

/* ---- helpers ----------------------------------------------------- */

/* Returns 0 on orderly EOF before any byte, 1 when `len` bytes arrived. */
static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = recv(fd, (char *)buf + got, len - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && got == 0)
			return 0;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 1;
}

static int write_full(int fd, const void *buf, size_t len)
{
	size_t put = 0;
	while (put < len) {
		ssize_t n = send(fd, (const char *)buf + put, len - put, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		put += (size_t)n;
	}
	return 0;
}

static void epoll_arm(int op, int fd, uint64_t tag, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag | (uint32_t)fd };
	if (epoll_ctl(epoll_fd, op, fd, &ev) != 0)
		wl_die("blocking-net: epoll_ctl: %s", strerror(errno));
}

/* ---- server ------------------------------------------------------ */

static __attribute__((noinline)) void compute_response(char *resp, const char *req)
{
	wl_burn_ns(work_us * WL_NS_PER_US);
	memset(resp, req[0], RESP_SIZE);
}

/* A blocking call to a slower service behind this one. */
static __attribute__((noinline)) void call_backend(void)
{
	wl_sleep_ns(backend_us * WL_NS_PER_US);
}

static void accept_one(void)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0) {
		wl_set_nodelay(fd);
		epoll_arm(EPOLL_CTL_ADD, fd, TAG_CONN, EPOLLIN | EPOLLONESHOT);
	} else if (errno != EAGAIN && errno != EINTR) {
		wl_die("blocking-net: accept: %s", strerror(errno));
	}
	epoll_arm(EPOLL_CTL_MOD, listen_fd, TAG_LISTEN, EPOLLIN | EPOLLONESHOT);
}

static void serve_one(int fd)
{
	char req[REQ_SIZE], resp[RESP_SIZE];
	if (read_full(fd, req, sizeof req) != 1) {
		close(fd); /* client finished (or broke); closing unregisters it */
		return;
	}
	compute_response(resp, req);
	call_backend();
	if (write_full(fd, resp, sizeof resp) != 0) {
		close(fd);
		return;
	}
	epoll_arm(EPOLL_CTL_MOD, fd, TAG_CONN, EPOLLIN | EPOLLONESHOT);
}

static void *server_main(void *arg)
{
	wl_name_thread_idx("server", (int)(intptr_t)arg);
	for (;;) {
		struct epoll_event ev;
		int n = epoll_wait(epoll_fd, &ev, 1, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			wl_die("blocking-net: epoll_wait: %s", strerror(errno));
		uint64_t tag = ev.data.u64 & ~0xffffffffULL;
		int fd = (int)(uint32_t)ev.data.u64;
		if (tag == TAG_QUIT)
			break; /* level-triggered: every server thread sees it */
		if (tag == TAG_LISTEN)
			accept_one();
		else
			serve_one(fd);
	}
	return NULL;
}

static void start_server(void)
{
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		wl_die("blocking-net: socket: %s", strerror(errno));
	server_addr.sin_family = AF_INET;
	server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	server_addr.sin_port = 0; /* ephemeral: never a fixed port */
	socklen_t alen = sizeof server_addr;
	if (bind(listen_fd, (struct sockaddr *)&server_addr, sizeof server_addr) ||
	    listen(listen_fd, 128) ||
	    getsockname(listen_fd, (struct sockaddr *)&server_addr, &alen))
		wl_die("blocking-net: bind/listen on 127.0.0.1: %s", strerror(errno));

	epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	quit_fd = eventfd(0, EFD_CLOEXEC);
	if (epoll_fd < 0 || quit_fd < 0)
		wl_die("blocking-net: epoll/eventfd: %s", strerror(errno));
	epoll_arm(EPOLL_CTL_ADD, listen_fd, TAG_LISTEN, EPOLLIN | EPOLLONESHOT);
	epoll_arm(EPOLL_CTL_ADD, quit_fd, TAG_QUIT, EPOLLIN);

	for (int i = 0; i < server_threads; i++)
		WL_CHECK_PT(pthread_create(&servers[i], NULL, server_main,
					   (void *)(intptr_t)i));
}

static void stop_server(void)
{
	uint64_t one = 1;
	if (write(quit_fd, &one, sizeof one) != (ssize_t)sizeof one)
		wl_die("blocking-net: eventfd write: %s", strerror(errno));
	for (int i = 0; i < server_threads; i++)
		pthread_join(servers[i], NULL);
	close(epoll_fd);
	close(quit_fd);
	close(listen_fd);
}

/* ---- clients ----------------------------------------------------- */

static void *client_main(void *arg)
{
	struct client *c = arg;
	wl_name_thread_idx("client", c->id);

	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&server_addr,
			      sizeof server_addr) != 0)
		wl_die("blocking-net: client connect: %s", strerror(errno));
	wl_set_nodelay(fd);

	char req[REQ_SIZE], resp[RESP_SIZE];
	memset(req, 'a' + c->id % 26, sizeof req);
	while (!wl_time_up(&args)) {
		if (write_full(fd, req, sizeof req) != 0 ||
		    read_full(fd, resp, sizeof resp) != 1)
			wl_die("blocking-net: client %d: connection lost", c->id);
		c->requests++;
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	const struct wl_opt opts[] = {
		{ "server-threads", WL_OPT_INT, &server_threads, 1, MAX_THREADS,
		  "server pool size (default 1; --fixed: >= clients)" },
		{ "clients", WL_OPT_INT, &nclients, 1, MAX_THREADS,
		  "client threads, one connection each (default 4)" },
		{ "backend-us", WL_OPT_INT, &backend_us, 0, 1000000,
		  "blocking backend wait per request in us (default 500)" },
		{ 0 },
	};
	wl_init(argc, argv, "blocking-net",
		"loopback TCP request/response with a server pool smaller than "
		"the client count.\n--fixed: one server thread per client.",
		opts, &args);

	/* The fix: size the pool for the number of concurrent clients. */
	if (args.fixed && server_threads < nclients)
		server_threads = nclients;

	start_server();
	for (int i = 0; i < nclients; i++) {
		clients[i].id = i;
		WL_CHECK_PT(pthread_create(&clients[i].tid, NULL, client_main,
					   &clients[i]));
	}
	uint64_t total = 0;
	for (int i = 0; i < nclients; i++) {
		pthread_join(clients[i].tid, NULL);
		total += clients[i].requests;
	}
	stop_server();

	fprintf(stderr, "blocking-net: %s mode, port %d, %d server threads, "
			"%d clients, %llu requests\n",
		args.fixed ? "fixed" : "plain", ntohs(server_addr.sin_port),
		server_threads, nclients, (unsigned long long)total);
	wl_report(&args, total);
	return 0;
}
