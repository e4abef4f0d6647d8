/* Why lmbench's `lat_fs` and yamba's `fs.create_delete` differ on tmpfs
 * (issue 26: on an Intel Xeon guest yamba reported 1.13 / 1.96 × lmbench's
 * creates per second at 0 / 10 KiB and 1.78 / 1.67 × its deletes; within
 * 1.09–1.29 on AMD).
 *
 *   gcc -O2 -o /tmp/fs-witness bench/fs-witness.c
 *   taskset -c 1 /tmp/fs-witness /dev/shm        (any directory; tmpfs here)
 *
 * The two differ in shape, taken apart here one step at a time:
 *   lmbench: a timing of n files in a fresh tree of directories of at most
 *            100 (lat_fs -n), the names made before the timing; a create is
 *            creat(2) (O_TRUNC), write(2) of SIZE bytes from a 128 KiB stack
 *            buffer, close; its delete timing unlinks n files its setup made
 *            just before;
 *   yamba:   batches of 100 in one directory that is kept, create and
 *            delete batches in turn; a create is open(O_CREAT|O_EXCL|
 *            O_WRONLY|O_CLOEXEC), one write of SIZE bytes, close.
 * lmbench's n is what fills its timing interval, ENOUGH (µs): its runner
 * exports it, measured once; unset, lat_fs measures it itself, and on a
 * busy host that gave 1 s and n = 250 249 (2 503 directories).
 * Rows: files per second, each the median of 15 timings, the shapes
 * interleaved so that a neighbour's burst does not fall on one:
 *   lmbench's shape with n = 10000 (100 directories), 1000 (10), 100 (1),
 *   yamba's shape (batches of 100, one directory),
 *   yamba's shape with lmbench's creat(2) and stack buffer.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TIMINGS 15
#define SHAPES 5
#define MAXN 10000

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *base;
static char names[MAXN][320];

/* lmbench's mkfile: creat, SIZE bytes from a 128 KiB stack buffer in
 * chunks, close. */
static void lm_create(const char *name, size_t size) {
    char buf[128 * 1024];
    int fd = creat(name, 0666);
    if (fd < 0) { perror(name); exit(1); }
    while (size > 0) {
        size_t chunk = size > sizeof buf ? sizeof buf : size;
        if (write(fd, buf, chunk) != (ssize_t)chunk) { perror("write"); exit(1); }
        size -= chunk;
    }
    close(fd);
}

/* yamba's create: O_CREAT|O_EXCL, one write of a prepared buffer. */
static void y_create(const char *name, const char *data, size_t size) {
    int fd = open(name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) { perror(name); exit(1); }
    if (size && write(fd, data, size) != (ssize_t)size) { perror("write"); exit(1); }
    close(fd);
}

/* lmbench's shape: n names in a fresh tree of directories of ≤ 100. */
static void lm_names(int n, int round) {
    char dir[256];
    snprintf(dir, sizeof dir, "%s/lm%d", base, round);
    mkdir(dir, 0777);
    for (int i = 0; i < n; i++) {
        char sub[300];
        snprintf(sub, sizeof sub, "%s/%d", dir, i / 100);
        if (i % 100 == 0) mkdir(sub, 0777);
        snprintf(names[i], sizeof names[i], "%s/%d", sub, i % 100);
    }
}
static void lm_rmdirs(int n, int round) {
    char dir[256], sub[300];
    snprintf(dir, sizeof dir, "%s/lm%d", base, round);
    for (int d = 0; d * 100 < n; d++) {
        snprintf(sub, sizeof sub, "%s/%d", dir, d);
        rmdir(sub);
    }
    rmdir(dir);
}

/* One shape's create and delete rates (files/s) for SIZE-byte files. */
static void shape(int j, size_t size, int round, double *create, double *delete) {
    static char data[10 * 1024];
    int n = j == 0 ? 10000 : j == 1 ? 1000 : 100;
    int lmbench_tree = j <= 2;
    int lm_calls = j != 3;
    char ydir[256];
    if (lmbench_tree) {
        lm_names(n, round);
    } else {
        snprintf(ydir, sizeof ydir, "%s/y%d", base, j);
        mkdir(ydir, 0777); /* kept across rounds, as yamba keeps its own */
        for (int i = 0; i < n; i++) snprintf(names[i], sizeof names[i], "%s/f%d", ydir, i);
    }
    double t0 = now();
    for (int i = 0; i < n; i++)
        if (lm_calls) lm_create(names[i], size); else y_create(names[i], data, size);
    *create = n * 1e9 / (now() - t0);
    if (lmbench_tree) {
        /* lmbench times its deletes in a second benchmark: its setup
         * makes the files again in a fresh tree. */
        for (int i = 0; i < n; i++) unlink(names[i]);
        lm_rmdirs(n, round);
        lm_names(n, round);
        for (int i = 0; i < n; i++) lm_create(names[i], size);
    }
    t0 = now();
    for (int i = 0; i < n; i++)
        if (unlink(names[i])) { perror(names[i]); exit(1); }
    *delete = n * 1e9 / (now() - t0);
    if (lmbench_tree) lm_rmdirs(n, round);
}

int main(int ac, char **av) {
    base = ac > 1 ? av[1] : "/dev/shm";
    static const char *what[SHAPES] = {
        "lmbench: fresh tree, n = 10000, creat + stack buffer",
        "lmbench: fresh tree, n = 1000, creat + stack buffer",
        "lmbench: fresh tree, n = 100, creat + stack buffer",
        "yamba: one kept directory, batches of 100",
        "yamba's directory, lmbench's creat + stack buffer",
    };
    for (size_t size = 0; size <= 10 * 1024; size += 10 * 1024) {
        double c[SHAPES][TIMINGS], d[SHAPES][TIMINGS];
        for (int r = 0; r < TIMINGS; r++)
            for (int j = 0; j < SHAPES; j++) shape(j, size, r, &c[j][r], &d[j][r]);
        for (int j = 0; j < SHAPES; j++) {
            qsort(c[j], TIMINGS, sizeof(double), cmp);
            qsort(d[j], TIMINGS, sizeof(double), cmp);
            printf("%s, %zuk create\t%.0f /s\n", what[j], size >> 10, c[j][TIMINGS / 2]);
            printf("%s, %zuk delete\t%.0f /s\n", what[j], size >> 10, d[j][TIMINGS / 2]);
        }
    }
    char ydir[256];
    for (int j = 3; j < SHAPES; j++) { snprintf(ydir, sizeof ydir, "%s/y%d", base, j); rmdir(ydir); }
    return 0;
}
