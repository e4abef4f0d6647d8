/* Why bench/stream-witness.c's rdwr rows read 8-15% above both yamba and
 * lmbench (issue 26; docs/lmbench.md, the bw_mem rows): not the code, but
 * which physical memory the array got. The witness mapped its rdwr arrays
 * after 640 MiB of other arrays; each tool maps its arrays first thing in
 * a fresh process.
 *
 * One process, two arrays of 128 MiB mapped as yamba maps them (its own
 * anonymous mapping, base pages, every page faulted in before timing):
 * FIRST, mapped before anything else, and LAST, mapped after PRE MiB of
 * other such arrays. yamba's rdwr loop (every 64-bit word += 1, in 64 KiB
 * blocks) runs over each in turn, pass by pass, so the host's slow minutes
 * fall on both; prints each array's median pass in MB/s (bytes read and
 * written, as yamba counts them) and their ratio. With `huge`, both arrays
 * ask for transparent huge pages (MADV_HUGEPAGE) instead.
 *
 *   gcc -O3 -o /tmp/rdwr-memory bench/rdwr-memory.c
 *   taskset -c 1 /tmp/rdwr-memory [PASSES [PRE_MIB [huge]]]   (21, 640)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#define BLOCK 8192 /* words: 64 KiB, yamba's block */

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

/* yamba's rdwr (mem/kernels.rs, Kernel::Rdwr), as bench/stream-witness.c has it. */
__attribute__((noinline)) static void rdwr_yamba(unsigned long *restrict a, long n) {
    for (long i = 0; i < n; i++) a[i] += 1;
}
static void rdwr_blocks(unsigned long *a, long n) {
    for (long lo = 0; lo < n; lo += BLOCK) rdwr_yamba(a + lo, BLOCK);
}

static int huge;
static unsigned long *array(size_t len) {
    unsigned long *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    if (madvise(p, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) { perror("madvise"); exit(1); }
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, len, MADV_POPULATE_WRITE) != 0)
#endif
        for (size_t o = 0; o < len; o += 4096) ((volatile char *)p)[o] = 0;
    return p;
}

/* The share of the array's neighbouring 4 KiB pages that are neighbours in
 * physical memory too, in the same order (`down`: in reverse order)
 * (/proc/self/pagemap; its frame numbers read as 0 without
 * CAP_SYS_ADMIN: -1 then). */
static double contiguous(const unsigned long *a, size_t len, int down) {
    int fd = open("/proc/self/pagemap", O_RDONLY);
    if (fd < 0) return -1;
    size_t pages = len / 4096, next = 0;
    uint64_t prev = 0;
    for (size_t i = 0; i < pages; i++) {
        uint64_t e;
        if (pread(fd, &e, 8, ((uintptr_t)a / 4096 + i) * 8) != 8) { close(fd); return -1; }
        uint64_t pfn = e & ((1ULL << 55) - 1);
        if (pfn == 0) { close(fd); return -1; }
        next += i > 0 && pfn == (down ? prev - 1 : prev + 1);
        prev = pfn;
    }
    close(fd);
    return (double)next / (pages - 1);
}

int main(int argc, char **argv) {
    int passes = argc > 1 ? atoi(argv[1]) : 21;
    long pre = argc > 2 ? atol(argv[2]) : 640;
    huge = argc > 3 && strcmp(argv[3], "huge") == 0;
    if (passes < 1 || passes > 1000 || pre < 0) { fprintf(stderr, "usage: %s [PASSES [PRE_MIB [huge]]]\n", argv[0]); return 2; }
    size_t len = 128UL << 20;
    long n = len / sizeof(unsigned long);
    unsigned long *first = array(len);
    for (long m = 0; m < pre; m += 128) array(len);
    unsigned long *last = array(len);
    double *mb[2] = {malloc(passes * sizeof(double)), malloc(passes * sizeof(double))};
    for (int k = 0; k < passes; k++)
        for (int j = 0; j < 2; j++) {
            unsigned long *a = (k + j) % 2 ? last : first; /* orders alternate */
            double t0 = now();
            rdwr_blocks(a, n);
            mb[a == last][k] = 2.0 * len / (now() - t0) / 1e6;
        }
    double med[2];
    for (int j = 0; j < 2; j++) {
        qsort(mb[j], passes, sizeof(double), cmp);
        med[j] = mb[j][passes / 2];
    }
    printf("%s pages, %d passes: first %.0f MB/s (%.0f-%.0f), after %ld MiB %.0f MB/s (%.0f-%.0f), last/first %.3f;"
           " pages physically next after the one before: first %.3f, last %.3f (next before it: %.3f, %.3f)\n",
           huge ? "huge" : "base", passes, med[0], mb[0][0], mb[0][passes - 1], pre, med[1], mb[1][0], mb[1][passes - 1],
           med[1] / med[0], contiguous(first, len, 0), contiguous(last, len, 0), contiguous(first, len, 1),
           contiguous(last, len, 1));
    /* every word of both arrays was added to once a pass */
    return first[n / 2] != (unsigned long)passes || last[n / 2] != (unsigned long)passes;
}
