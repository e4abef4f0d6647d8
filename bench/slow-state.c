/* Is the getppid loop's slow state (~174 ns where it settles at ~134 on an
 * AMD EPYC Zen 3 guest; docs/certainty.md, "Why visits are long") a
 * property of the loop's address, or of the process that runs it?
 *
 *   slow-state at CPU ADDR      a fresh process: yamba's loop at unroll 1
 *                               (bench/getppid-loop.h) copied to ADDR (hex,
 *                               mapped with MAP_FIXED_NOREPLACE), 1000
 *                               calls, then 30 timings of 5000 calls (~20
 *                               ms, a precise block's visit); prints ADDR,
 *                               the median, the first and last timing (ns
 *                               per call)
 *   slow-state sweep CPU FROM TO  one process: the loop at every byte
 *                               offset FROM..TO (hex) of one page in turn,
 *                               15 timings of 2000 calls after 2000; prints
 *                               each offset and its median
 *
 * Run `at` again with the same ADDR, with its page offset on other pages,
 * and its page with other offsets: an address that is slow every time is
 * a placement effect; one slow once and then fast is a state of the
 * process. Every call is checked (the loop counts them and compares the
 * result with the parent's pid); exit 1 on a wrong call.
 *
 * Build: cc -O2 -I bench -o slow-state bench/slow-state.c
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "getppid-loop.h"

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return (x > y) - (x < y); }
static double median(double *t, int n) { qsort(t, n, sizeof t[0], cmp); return t[n / 2]; }
typedef void (*loop_fn)(long, long *);

static int at(unsigned long addr, long *w) {
    size_t len = (char *)loop1_end - (char *)loop1;
    unsigned long page = addr & ~4095UL;
    char *m = mmap((void *)page, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m == MAP_FAILED || (unsigned long)m != page) { perror("slow-state: mmap at ADDR"); return 2; }
    memcpy((char *)addr, (char *)loop1, len);
    loop_fn f = (loop_fn)addr;
    double t[30];
    f(1000, w);
    for (int r = 0; r < 30; r++) { double t0 = now(); f(5000, w); t[r] = (now() - t0) / 5000; }
    double first = t[0], last = t[29];
    printf("%lx %.1f %.1f %.1f\n", addr, median(t, 30), first, last);
    return w[0] != 1000 + 30 * 5000L || w[2] != 0;
}

static int sweep(long from, long to, long *w) {
    size_t len = (char *)loop1_end - (char *)loop1;
    char *m = mmap(0, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) { perror("slow-state: mmap"); return 2; }
    for (long off = from; off <= to && off < 4096; off++) {
        memset(m, 0xcc, 8192);
        memcpy(m + off, (char *)loop1, len);
        loop_fn f = (loop_fn)(m + off);
        double t[15];
        f(2000, w);
        for (int r = 0; r < 15; r++) { double t0 = now(); f(2000, w); t[r] = (now() - t0) / 2000; }
        printf("%lx %.1f\n", off, median(t, 15));
    }
    return w[0] != 16 * 2000L * (to - from + 1) || w[2] != 0;
}

int main(int argc, char **argv) {
    int is_at = argc == 4 && !strcmp(argv[1], "at"), is_sweep = argc == 5 && !strcmp(argv[1], "sweep");
    if (!is_at && !is_sweep) {
        fprintf(stderr, "usage: slow-state at CPU ADDR | slow-state sweep CPU FROM TO (hex)\n");
        return 2;
    }
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(atoi(argv[2]), &s);
    if (sched_setaffinity(0, sizeof s, &s) != 0) { perror("slow-state: sched_setaffinity"); return 2; }
    long w[3] = {0, getppid(), 0};
    return is_at ? at(strtoul(argv[3], 0, 16), w) : sweep(strtol(argv[3], 0, 16), strtol(argv[4], 0, 16), w);
}
