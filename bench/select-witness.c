/* Why lmbench's `lat_select -n N file|tcp` and yamba's
 * `cpu.syscall.select.{file,tcp}.N` differ (issue 26: at N = 250 yamba read
 * 1.54 µs against lmbench's 1.25 over files in one run of
 * bench/lmbench-list.sh on an Intel Xeon guest, and 1.16-1.21 × lmbench's
 * over TCP sockets in two rounds of the whole list there; the two agreed
 * within 3% at every N on AMD).
 *
 *   gcc -O2 -o /tmp/select-witness bench/select-witness.c
 *   taskset -c 1 /tmp/select-witness          (files)
 *   taskset -c 1 /tmp/select-witness tcp      (connected loopback sockets)
 *
 * The two set up their descriptors in two ways, taken apart here:
 *   lmbench: one open(2) of the file, or one connect(2) to its server,
 *            dup(2)ed N times, select(nfds = N): it examines the dups
 *            below N. It runs in benchmp's child, whose pipes to its
 *            parent hold descriptors 4, 5, 7 and 9 (strace -f, lmbench 3
 *            on Linux 6.18): the file opens at 3, its dups take 6, 8, 10,
 *            11, … — so `-n 10` selects on two descriptors ([6 8]),
 *            `-n 100` on 92, `-n 250` on 242 (one fewer where the shell
 *            left 10 open). Over TCP the server's listening socket is 3
 *            (made before benchmp forks, inherited), the child keeps 5, 6,
 *            8 and 11, the connection opens at 4 and its dups take 7, 9,
 *            10, 12, …: 2 examined at 10, 241 at 250.
 *            The server ends live in lmbench's server process.
 *   yamba:   N open(2)s of the file (N struct files), or N connects with
 *            their server ends held in the same process (client and
 *            server alternate), select(nfds = the highest + 1): all N.
 * File rows: lmbench's child's descriptors rebuilt (descriptors held where
 * its pipes are); dups from 4, as a process with no pipes would (N-4
 * examined); one file dup'd with all N examined; yamba's N opens.
 * TCP rows: lmbench's child rebuilt (its listener at 3, one connection
 * dup'd); one connection dup'd, all N examined; N connections with their
 * server ends kept out of the set's range (distinct sockets alone); yamba's
 * shape (server ends interleaved, nfds about 2N).
 * Rows: each shape at N = 10, 100, 250; each the median of 25 timings of
 * 20 000 calls, ns per call, the shapes interleaved so that a neighbour's
 * burst does not fall on one.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define CALLS 20000
#define TIMINGS 25
#define SHAPES 4

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

struct shape {
    const char *name;
    int fds[FD_SETSIZE];
    int count, nfds, examined;
    int held[8], holding;
    int servers[FD_SETSIZE], nservers;
    fd_set set;
};

/* Where benchmp's child keeps its pipes: over a file 4, 5, 7, 9, with 3,
 * 6 and 8 free; over TCP (the listener at 3 when benchmp made its pipes)
 * 5, 6, 8, 11, with 4, 7, 9 and 10 free (strace -f of lat_select -n 10
 * tcp: the connection at 4, its dups at 7, 9, …). Puts /dev/null on those
 * pipe descriptors not already open. */
static void hold_benchmp_pipes(struct shape *s, int tcp) {
    static const int file_pipes[] = {4, 5, 7, 9, -1}, file_free[] = {3, 6, 8, -1};
    static const int tcp_pipes[] = {5, 6, 8, 11, -1}, tcp_free[] = {4, 7, 9, 10, -1};
    const int *pipes = tcp ? tcp_pipes : file_pipes, *free_ones = tcp ? tcp_free : file_free;
    int null = open("/dev/null", O_RDONLY), null_held = 0;
    if (null < 0) { perror("/dev/null"); exit(1); }
    s->holding = 0;
    for (int i = 0; pipes[i] >= 0; i++) {
        if (pipes[i] == null) { null_held = 1; s->held[s->holding++] = null; continue; }
        if (fcntl(pipes[i], F_GETFD) >= 0) continue;
        if (dup2(null, pipes[i]) < 0) { perror("dup2"); exit(1); }
        s->held[s->holding++] = pipes[i];
    }
    if (!null_held) close(null);
    for (int i = 0; free_ones[i] >= 0; i++)
        if (fcntl(free_ones[i], F_GETFD) >= 0) {
            fprintf(stderr, "descriptor %d is open (inherited?): cannot rebuild lmbench's child\n", free_ones[i]);
            exit(1);
        }
}

/* What the descriptors are: one regular file, or connections to a
 * loopback listener (their server ends kept in s->servers). */
static const char *file_path;
static int listener = -1;
static struct sockaddr_in listener_addr;

/* Moves fd to the lowest free descriptor at or above `at` (out of the
 * set's range), closing the original. */
static int move_up(int fd, int at) {
    int moved = fcntl(fd, F_DUPFD, at);
    if (moved < 0) { perror("F_DUPFD"); exit(1); }
    close(fd);
    return moved;
}

/* One descriptor of the kind: a file open, or a connection whose server
 * end is accepted and kept — interleaved (yamba: the next descriptor) or
 * moved out of the set's range (servers_high). */
static int open_one(struct shape *s, int servers_high) {
    if (file_path) return open(file_path, O_RDONLY);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&listener_addr, sizeof listener_addr) < 0) { perror("connect"); exit(1); }
    int a = accept(listener, NULL, NULL);
    if (a < 0) { perror("accept"); exit(1); }
    s->servers[s->nservers++] = servers_high ? move_up(a, 700) : a;
    return c;
}

static void fill(struct shape *s, int n, int dups, int lmbench_nfds, int servers_high) {
    int top = 0;
    FD_ZERO(&s->set);
    s->nservers = 0;
    int first = open_one(s, 1);
    if (first < 0) { perror("open"); exit(1); }
    for (int i = 0; i < n; i++) {
        int fd = dups ? dup(first) : open_one(s, servers_high);
        if (fd < 0 || fd >= FD_SETSIZE) { perror("dup/open"); exit(1); }
        s->fds[i] = fd;
        FD_SET(fd, &s->set);
        if (fd > top) top = fd;
    }
    close(first); /* lmbench closes it too: its dups start one above it */
    s->count = n;
    s->nfds = lmbench_nfds ? n : top + 1;
    s->examined = 0;
    for (int i = 0; i < n; i++) s->examined += s->fds[i] < s->nfds;
}

static void clear(struct shape *s) {
    for (int i = 0; i < s->count; i++) close(s->fds[i]);
    for (int i = 0; i < s->nservers; i++) close(s->servers[i]);
    s->nservers = 0;
    for (int i = 0; i < s->holding; i++) close(s->held[i]);
    s->holding = 0;
}

static double timing(struct shape *s) {
    struct timeval none = {0, 0};
    fd_set ready;
    double t0 = now();
    for (int i = 0; i < CALLS; i++) {
        ready = s->set;
        select(s->nfds, NULL, &ready, NULL, &none);
    }
    return (now() - t0) / CALLS;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The shapes of each mode: lmbench's child's descriptors rebuilt or not,
 * dups of one or N opens, nfds = N (lmbench) or the highest + 1, and
 * where the server ends of connections go. */
struct layout {
    const char *name;
    int lmbench_child, dups, lmbench_nfds, servers_high;
};
static const struct layout file_layouts[SHAPES] = {
    {"lmbench as it runs: benchmp's child, dups from 6, nfds = N", 1, 1, 1, 1},
    {"dups from 4, nfds = N", 0, 1, 1, 1},
    {"dup of one file, all N examined", 0, 1, 0, 1},
    {"yamba: N opens, all N examined", 0, 0, 0, 1},
};
static const struct layout tcp_layouts[SHAPES] = {
    {"tcp: lmbench as it runs: benchmp's child, one connection dup'd, nfds = N", 1, 1, 1, 1},
    {"tcp: one connection dup'd, all N examined", 0, 1, 0, 1},
    {"tcp: N connections, server ends out of range", 0, 0, 0, 1},
    {"tcp: yamba: N connections, server ends interleaved", 0, 0, 0, 0},
};

int main(int argc, char **argv) {
    int tcp = argc > 1 && strcmp(argv[1], "tcp") == 0;
    if (argc > 1 && !tcp && strcmp(argv[1], "file") != 0) { fprintf(stderr, "usage: %s [file|tcp]\n", argv[0]); return 2; }
    static char path[] = "/tmp/select-witnessXXXXXX";
    /* Descriptors a shell or script left open would take the numbers the
     * layouts rebuild (lmbench starts with 0-2 only). */
    close_range(3, ~0U, 0);
    if (tcp) {
        /* lmbench's server socket: made before benchmp forks, so it is
         * descriptor 3 in its child. Taken at 3 here too (the rebuilt
         * shape needs it there), the others see it out of their range. */
        listener = socket(AF_INET, SOCK_STREAM, 0);
        listener_addr.sin_family = AF_INET;
        listener_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof listener_addr;
        if (listener != 3 || bind(listener, (struct sockaddr *)&listener_addr, sizeof listener_addr) < 0 ||
            listen(listener, 16) < 0 || getsockname(listener, (struct sockaddr *)&listener_addr, &len) < 0) {
            fprintf(stderr, "cannot make the listener at descriptor 3 (got %d): %s\n", listener, strerror(errno));
            return 1;
        }
    } else {
        int fd = mkstemp(path);
        if (fd < 0) { perror("mkstemp"); return 1; }
        if (write(fd, "x", 1) != 1) { perror("write"); return 1; }
        close(fd);
        file_path = path;
    }
    static const int sizes[] = {10, 100, 250};
    static struct shape shapes[SHAPES];
    for (unsigned k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int n = sizes[k];
        /* Built one at a time and torn down, so that every shape's
         * descriptors start where lmbench's do. */
        double t[SHAPES][TIMINGS];
        for (int r = 0; r < TIMINGS; r++) {
            for (int j = 0; j < SHAPES; j++) {
                struct shape *s = &shapes[j];
                const struct layout *l = &(tcp ? tcp_layouts : file_layouts)[j];
                s->name = l->name;
                if (l->lmbench_child) hold_benchmp_pipes(s, tcp);
                fill(s, n, l->dups, l->lmbench_nfds, l->servers_high);
                timing(s); /* warm */
                t[j][r] = timing(s);
                clear(s);
            }
        }
        for (int j = 0; j < SHAPES; j++) {
            qsort(t[j], TIMINGS, sizeof(double), cmp);
            printf("%s, N = %d (%d examined)\t%.1f ns\n", shapes[j].name, n, shapes[j].examined, t[j][TIMINGS / 2]);
        }
    }
    if (!tcp) unlink(path);
    return 0;
}
