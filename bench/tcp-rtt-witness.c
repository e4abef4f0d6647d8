/* Why lmbench's `lat_tcp` and yamba's `net.tcp.rtt` (with
 * `--set net.peer_cpu=same`) differ on one CPU (issue 26: 6.42 vs 5.63 µs on
 * an Intel Xeon guest; within 6% on AMD).
 *
 *   gcc -O2 -pthread -o /tmp/tcp-rtt-witness bench/tcp-rtt-witness.c
 *   taskset -c 1 /tmp/tcp-rtt-witness
 *
 * A loopback TCP round trip, the echoing peer on the same CPU, with the two
 * things the tools differ in taken apart:
 *   - the peer: lmbench's is a process of its own (`lat_tcp -s` forks a
 *     server), yamba's a thread of the benchmark's process, so each of
 *     lmbench's two switches per round trip also switches address space;
 *   - the message: lmbench's 1 byte, yamba's 64 bytes.
 * Each row: the median of 15 timings of 20 000 round trips, µs per round
 * trip; rows interleaved, one connection per row kept for the whole run.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRIPS 20000
#define TIMINGS 15

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static void die(const char *what) { perror(what); exit(1); }

/* Echoes what it reads until the connection ends. */
static void echo(int fd) {
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        if (write(fd, buf, n) != n) break;
    close(fd);
}
static void *echo_thread(void *fd) { echo((int)(long)fd); return NULL; }

/* A connected pair over loopback: *client gets one end, *server the other. */
static void connected(int *client, int *server) {
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (l < 0 || bind(l, (void *)&a, sizeof a) || listen(l, 1) || getsockname(l, (void *)&a, &len)) die("listen");
    *client = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(*client, (void *)&a, sizeof a)) die("connect");
    if ((*server = accept(l, NULL, NULL)) < 0) die("accept");
    setsockopt(*client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(*server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    close(l);
}

static double trips(int fd, int size) {
    char buf[64] = {0};
    double t0 = now();
    for (int i = 0; i < TRIPS; i++) {
        if (write(fd, buf, size) != size) die("write");
        for (int got = 0; got < size;) {
            ssize_t n = read(fd, buf + got, size - got);
            if (n <= 0) die("read");
            got += n;
        }
    }
    return (now() - t0) / TRIPS / 1e3;
}

static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

int main(void) {
    static const struct { int process; int size; const char *name; } rows[] = {
        {1, 1, "peer process, 1 B (lmbench's)"},
        {1, 64, "peer process, 64 B"},
        {0, 1, "peer thread, 1 B"},
        {0, 64, "peer thread, 64 B (yamba's)"},
    };
    enum { ROWS = sizeof rows / sizeof rows[0] };
    int fd[ROWS];
    pid_t pid[ROWS] = {0};
    pthread_t th[ROWS];
    signal(SIGPIPE, SIG_IGN);
    for (int r = 0; r < ROWS; r++) {
        int server;
        connected(&fd[r], &server);
        if (rows[r].process) {
            if ((pid[r] = fork()) == 0) {
                /* Only its own end: another row's client end held here would keep that row's peer from seeing the end of its stream. */
                for (int i = 0; i <= r; i++) close(fd[i]);
                echo(server);
                _exit(0);
            }
            close(server);
        } else if (pthread_create(&th[r], NULL, echo_thread, (void *)(long)server)) die("pthread_create");
    }
    static double t[ROWS][TIMINGS];
    for (int k = -1; k < TIMINGS; k++)
        for (int r = 0; r < ROWS; r++) {
            double v = trips(fd[r], rows[r].size);
            if (k >= 0) t[r][k] = v;
        }
    for (int r = 0; r < ROWS; r++) {
        close(fd[r]);
        if (rows[r].process) waitpid(pid[r], NULL, 0); else pthread_join(th[r], NULL);
        qsort(t[r], TIMINGS, sizeof(double), cmp);
        printf("%-34s\t%8.2f µs  (min %.2f)\n", rows[r].name, t[r][TIMINGS / 2], t[r][0]);
    }
    return 0;
}
