/* Four ping-pong pairs, one per transport: TCP over loopback, UDP over loopback with
 * unconnected sockets (sendto/recvfrom), a Unix stream socket pair and a pair of pipes.
 * Each ping thread sleeps 200 us, sends 32 bytes and blocks for the answer; each pong
 * thread blocks for the message and answers it. 200 round trips per pair, the pairs
 * one after another. Threads: tcp-ping/tcp-pong, udp-ping/udp-pong, unix-ping/
 * unix-pong, pipe-ping/pipe-pong. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 200
#define MSG 32

struct pair {
	const char *name;
	int ping_rd, ping_wr; /* the ping side's descriptors */
	int pong_rd, pong_wr;
	struct sockaddr_in ping_addr, pong_addr; /* UDP: where each side sends */
	int udp;
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void xsend(struct pair *p, int fd, const struct sockaddr_in *to)
{
	char buf[MSG] = "ping";
	ssize_t n = p->udp ? sendto(fd, buf, MSG, 0, (const struct sockaddr *)to, sizeof *to)
			   : write(fd, buf, MSG);
	if (n != MSG)
		die("send");
}

static void xrecv(int fd)
{
	char buf[MSG];
	size_t got = 0;
	while (got < MSG) {
		ssize_t n = read(fd, buf + got, MSG - got);
		if (n <= 0)
			die("recv");
		got += (size_t)n;
	}
}

static void *pong(void *arg)
{
	struct pair *p = arg;
	char name[16];
	snprintf(name, sizeof name, "%s-pong", p->name);
	pthread_setname_np(pthread_self(), name);
	for (int i = 0; i < ROUNDS; i++) {
		xrecv(p->pong_rd);
		xsend(p, p->pong_wr, &p->ping_addr);
	}
	return NULL;
}

static void *ping(void *arg)
{
	struct pair *p = arg;
	char name[16];
	snprintf(name, sizeof name, "%s-ping", p->name);
	pthread_setname_np(pthread_self(), name);
	struct timespec nap = {0, 200000};
	for (int i = 0; i < ROUNDS; i++) {
		nanosleep(&nap, NULL);
		xsend(p, p->ping_wr, &p->pong_addr);
		xrecv(p->ping_rd);
	}
	return NULL;
}

static void run(struct pair *p)
{
	pthread_t a, b;
	pthread_create(&b, NULL, pong, p);
	pthread_create(&a, NULL, ping, p);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
}

static void bind_udp(int *fd, struct sockaddr_in *addr)
{
	*fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(addr, 0, sizeof *addr);
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof *addr;
	if (*fd < 0 || bind(*fd, (struct sockaddr *)addr, len) ||
	    getsockname(*fd, (struct sockaddr *)addr, &len))
		die("udp");
}

int main(void)
{
	struct pair tcp = {.name = "tcp"};
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	if (l < 0 || bind(l, (struct sockaddr *)&a, len) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		die("listen");
	int c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, len))
		die("connect");
	int s = accept(l, NULL, NULL);
	if (s < 0)
		die("accept");
	tcp.ping_rd = tcp.ping_wr = c;
	tcp.pong_rd = tcp.pong_wr = s;
	run(&tcp);

	struct pair udp = {.name = "udp", .udp = 1};
	bind_udp(&udp.ping_rd, &udp.ping_addr);
	bind_udp(&udp.pong_rd, &udp.pong_addr);
	udp.ping_wr = udp.ping_rd;
	udp.pong_wr = udp.pong_rd;
	run(&udp);

	struct pair unx = {.name = "unix"};
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	unx.ping_rd = unx.ping_wr = sv[0];
	unx.pong_rd = unx.pong_wr = sv[1];
	run(&unx);

	struct pair pip = {.name = "pipe"};
	int to_pong[2], to_ping[2];
	if (pipe(to_pong) || pipe(to_ping))
		die("pipe");
	pip.ping_wr = to_pong[1];
	pip.pong_rd = to_pong[0];
	pip.pong_wr = to_ping[1];
	pip.ping_rd = to_ping[0];
	run(&pip);
	return 0;
}
