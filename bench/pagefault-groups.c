/* Why Figure 2's unroll degree moves the page-fault cost, without yamba:
 * major faults (one page read per fault, readahead off) touched in groups
 * of d pages, each group a call of a function that touches its d pages.
 *
 *   pagefault-groups DIR ROUNDS
 *
 * DIR: a scratch directory (an ext4 on zram reads pages in the faulting
 * thread, in memory; see bench/pagefault-groups.sh). Prints, per shape, the
 * median over ROUNDS of the time per fault, and for groups of 256 the time
 * per fault of each group in one pass.
 *
 * Shapes: "loop" touches every page from one loop (mem.pagefault.major's
 * shape); "call d" calls touch(p, d) per group (Figure 2's shape, one call of
 * pagefault_func(d) per group); "loop+call" is the plain loop with an empty
 * call after every 16 touches. gcc -O2; every shape in every round, in
 * turn. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGES 2048
#define PAGE 4096

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

__attribute__((noinline)) static void touch(char *p, int d)
{
    for (int i = 0; i < d; i++)
        (void)*(volatile char *)(p + (size_t)i * PAGE);
}

__attribute__((noinline)) static void empty(void) { __asm__ volatile(""); }

static int fd;

/* A fresh mapping with nothing resident (checked with mincore). */
static char *paged_out(void)
{
    char *p = mmap(0, (size_t)PAGES * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    madvise(p, (size_t)PAGES * PAGE, MADV_RANDOM);
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    unsigned char vec[PAGES];
    mincore(p, (size_t)PAGES * PAGE, vec);
    for (int i = 0; i < PAGES; i++)
        if (vec[i] & 1) { fprintf(stderr, "page %d still resident\n", i); exit(1); }
    return p;
}

/* shape: 0 loop, 1 call d, 2 loop+call; per-group times into g (may be 0). */
static double pass(int shape, int d, double *g)
{
    char *p = paged_out();
    double t0 = now();
    if (shape == 0) {
        for (int i = 0; i < PAGES; i++) (void)*(volatile char *)(p + (size_t)i * PAGE);
    } else if (shape == 1) {
        for (int k = 0; k < PAGES / d; k++) {
            if (g) g[k] = now();
            touch(p + (size_t)k * d * PAGE, d);
        }
    } else {
        for (int i = 0; i < PAGES; i++) {
            (void)*(volatile char *)(p + (size_t)i * PAGE);
            if (i % 16 == 15) empty();
        }
    }
    double t1 = now();
    if (g) g[PAGES / d] = t1;
    munmap(p, (size_t)PAGES * PAGE);
    return (t1 - t0) / PAGES;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 3) { fprintf(stderr, "usage: %s DIR ROUNDS\n", argv[0]); return 2; }
    int rounds = atoi(argv[2]);
    char path[4096];
    snprintf(path, sizeof path, "%s/pagefault-groups.dat", argv[1]);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) { perror(path); return 1; }
    char buf[PAGE];
    memset(buf, 1, PAGE);
    for (int i = 0; i < PAGES; i++) pwrite(fd, buf, PAGE, (off_t)i * PAGE);
    fsync(fd);
    struct { const char *name; int shape, d; } shapes[] = {
        {"loop", 0, 1}, {"loop+call", 2, 16}, {"call 1", 1, 1}, {"call 16", 1, 16},
        {"call 256", 1, 256}, {"call 1024", 1, 1024}, {"call 2048", 1, 2048},
    };
    enum { N = sizeof shapes / sizeof shapes[0] };
    double *t = calloc((size_t)N * rounds, sizeof(double));
    for (int r = 0; r < rounds; r++)
        for (int s = 0; s < N; s++) t[s * rounds + r] = pass(shapes[s].shape, shapes[s].d, 0);
    printf("%-10s %s\n", "shape", "median ns per fault (min..max)");
    for (int s = 0; s < N; s++) {
        double *x = t + s * rounds;
        qsort(x, rounds, sizeof(double), cmp);
        printf("%-10s %6.0f (%.0f..%.0f)\n", shapes[s].name, x[rounds / 2], x[0], x[rounds - 1]);
    }
    double g[PAGES / 256 + 1];
    pass(1, 256, g);
    printf("call 256, ns per fault in each group of one pass:");
    for (int k = 0; k < PAGES / 256; k++) printf(" %.0f", (g[k + 1] - g[k]) / 256);
    printf("\n");
    unlink(path);
    return 0;
}
