/* Why lmbench's `lat_select -n N file` and yamba's `cpu.syscall.select.file.N`
 * differ (issue 26: at N = 250 yamba read 1.54 µs against lmbench's 1.25 in
 * one run of bench/lmbench-list.sh on an Intel Xeon guest; the two agreed
 * within 3% at every N on AMD).
 *
 *   gcc -O2 -o /tmp/select-witness bench/select-witness.c
 *   taskset -c 1 /tmp/select-witness
 *
 * The two set up their descriptors in two ways, taken apart here:
 *   lmbench: one open(2) of the file, dup(2)ed N times, select(nfds = N):
 *            it examines the dups below N. It runs in benchmp's child,
 *            whose pipes to its parent hold descriptors 4, 5, 7 and 9
 *            (strace -f, lmbench 3 on Linux 6.18): the file opens at 3,
 *            its dups take 6, 8, 10, 11, … — so `-n 10` selects on two
 *            descriptors ([6 8]), `-n 100` on 92, `-n 250` on 242 (one
 *            fewer where the shell left 10 open);
 *   yamba:   N open(2)s of the file (N struct files), select(nfds = the
 *            highest + 1): all N.
 * The first row rebuilds lmbench's child's descriptors (descriptors held
 * where its pipes are); the second has dups from 4, as a process with no
 * pipes would (N-4 examined).
 * Rows: each shape at N = 10, 100, 250; each the median of 25 timings of
 * 20 000 calls, ns per call, the shapes interleaved so that a neighbour's
 * burst does not fall on one.
 */
#define _GNU_SOURCE
#include <fcntl.h>
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
    fd_set set;
};

/* Where benchmp's child keeps its pipes: 4, 5, 7, 9, with 3, 6 and 8
 * free. Puts /dev/null on those of 4, 5, 7, 9 not already open. */
static void hold_benchmp_pipes(struct shape *s) {
    static const int pipes[] = {4, 5, 7, 9}, free_ones[] = {3, 6, 8};
    int null = open("/dev/null", O_RDONLY);
    if (null < 0) { perror("/dev/null"); exit(1); }
    s->holding = 0;
    for (int i = 0; i < 4; i++) {
        if (pipes[i] == null || fcntl(pipes[i], F_GETFD) >= 0) continue;
        if (dup2(null, pipes[i]) < 0) { perror("dup2"); exit(1); }
        s->held[s->holding++] = pipes[i];
    }
    if (null != 4 && null != 5 && null != 7 && null != 9) close(null);
    else s->held[s->holding++] = null;
    for (int i = 0; i < 3; i++)
        if (fcntl(free_ones[i], F_GETFD) >= 0) {
            fprintf(stderr, "descriptor %d is open (inherited?): cannot rebuild lmbench's child\n", free_ones[i]);
            exit(1);
        }
}

static void fill(struct shape *s, const char *path, int n, int dups, int lmbench_nfds) {
    int top = 0;
    FD_ZERO(&s->set);
    int first = open(path, O_RDONLY);
    if (first < 0) { perror("open"); exit(1); }
    for (int i = 0; i < n; i++) {
        int fd = dups ? dup(first) : open(path, O_RDONLY);
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

int main(void) {
    char path[] = "/tmp/select-witnessXXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) { perror("mkstemp"); return 1; }
    if (write(fd, "x", 1) != 1) { perror("write"); return 1; }
    close(fd);
    static const int sizes[] = {10, 100, 250};
    static struct shape shapes[SHAPES];
    for (unsigned k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int n = sizes[k];
        /* Built one at a time and torn down, so that every shape's
         * descriptors start at 4, as in lmbench's process. */
        double t[SHAPES][TIMINGS];
        for (int r = 0; r < TIMINGS; r++) {
            for (int j = 0; j < SHAPES; j++) {
                struct shape *s = &shapes[j];
                s->holding = 0;
                if (j == 0) { s->name = "lmbench as it runs: benchmp's child, dups from 6, nfds = N"; hold_benchmp_pipes(s); fill(s, path, n, 1, 1); }
                if (j == 1) { s->name = "dups from 4, nfds = N"; fill(s, path, n, 1, 1); }
                if (j == 2) { s->name = "dup of one file, all N examined"; fill(s, path, n, 1, 0); }
                if (j == 3) { s->name = "yamba: N opens, all N examined"; fill(s, path, n, 0, 0); }
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
    unlink(path);
    return 0;
}
