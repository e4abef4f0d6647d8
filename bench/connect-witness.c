/* A third witness for lat_connect: socket + connect + close from the
 * client against a server on another CPU, timed per batch of connections,
 * the median batch printed.
 * Usage: connect-witness CLIENT_CPU SERVER_CPU [thread|process] [close|read]
 *        [batches] [per_batch]
 * Prints "connect_close_us <median> (min, max, failed)"; EACH=1 prints
 * every batch. The server is a thread (yamba's net.tcp.connect_close) or a
 * process (lmbench's lat_connect -s); after accept it closes at once
 * ("close": yamba's) or reads until the client's end of stream first
 * ("read": lmbench's server, whose client then closes first). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int lfd;
static int server_cpu;
static int read_first;

static void pin(int cpu) {
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof s, &s)) { perror("sched_setaffinity"); exit(1); }
}

static void *serve(void *arg) {
	(void)arg;
	pin(server_cpu);
	for (;;) {
		int c = accept(lfd, 0, 0);
		char b;
		if (c < 0) continue;
		if (read_first) while (read(c, &b, 1) > 0) {}
		close(c);
	}
	return 0;
}

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
	if (argc < 3) { fprintf(stderr, "usage: %s CLIENT_CPU SERVER_CPU [thread|process] [close|read] [batches] [per_batch]\n", argv[0]); return 2; }
	int client_cpu = atoi(argv[1]);
	server_cpu = atoi(argv[2]);
	int as_thread = argc > 3 && strcmp(argv[3], "thread") == 0;
	read_first = argc > 4 && strcmp(argv[4], "read") == 0;
	int batches = argc > 5 ? atoi(argv[5]) : 11, per = argc > 6 ? atoi(argv[6]) : 200;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 100) || getsockname(lfd, (struct sockaddr *)&a, &al)) { perror("listen"); return 1; }
	pid_t pid = 0;
	pthread_t t;
	if (as_thread) pthread_create(&t, 0, serve, 0);
	else if ((pid = fork()) == 0) { serve(0); _exit(0); }
	pin(client_cpu);
	double *b = calloc(batches, sizeof *b);
	int failed = 0;
	for (int i = 0; i < batches; i++) {
		double t0 = now();
		for (int k = 0; k < per; k++) {
			int s = socket(AF_INET, SOCK_STREAM, 0);
			if (connect(s, (struct sockaddr *)&a, sizeof a)) failed++;
			close(s);
		}
		b[i] = (now() - t0) / per / 1000.0;
		if (getenv("EACH")) printf("batch %d %.2f\n", i, b[i]);
	}
	qsort(b, batches, sizeof *b, cmp);
	printf("connect_close_us %.2f (min %.2f max %.2f, %d failed)\n", b[batches / 2], b[0], b[batches - 1], failed);
	if (pid) kill(pid, SIGKILL), waitpid(pid, 0, 0);
	return failed != 0;
}
