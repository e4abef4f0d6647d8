/* Why yamba's `mem.bandwidth.scale` reads 12–19% above lmbench's `stream`
 * scale on 128 MiB arrays (1.3× on a busy host; issue 26; docs/lmbench.md,
 * "paired rounds" and the `stream` row), while their copies agree within
 * 5%: on a quiet AMD EPYC (Zen 3) guest the whole of yamba's shape here
 * (SSE2, its arrays, its blocks) read 1.11–1.27× lmbench's (scalar,
 * malloc's arrays), and yamba read what its shape did.
 *
 *   gcc -O3 -o /tmp/stream-witness bench/stream-witness.c
 *   taskset -c 1 /tmp/stream-witness
 *
 * lmbench's stream, built as lmbench builds it (-O2), runs scale as a
 * scalar loop (objdump: movsd, mulsd, movsd per element), and copy as a
 * scalar loop too; yamba's scale kernel is vectorised by rustc (mulpd on
 * two 16-byte halves a step). Here the same scale, b[i] = 3·c[i] over two
 * 128 MiB arrays, runs scalar (vectorisation off for that function),
 * with SSE2 and with AVX2, beside lmbench's scalar copy, interleaved in
 * one process so the host's slow minutes fall on all of them. Bytes are
 * counted as both tools count them: each element read and written once.
 *
 * The last three rows run the same scale on yamba's arrays instead of
 * malloc's: each its own anonymous mapping, page-aligned, base pages
 * (MADV_NOHUGEPAGE), faulted in before timing, as yamba's Arrays make
 * them — scalar and SSE2 over the whole array, then SSE2 in yamba's
 * 64 KiB blocks (one call per block, as its loop calls Arrays::block).
 * So a difference that follows the arrays, not the code, shows there.
 *
 * Two more rows take `bw_mem 128m rdwr` (yamba up to 10% above lmbench,
 * lmbench's bytes doubled): lmbench's loop as lmbench builds it (an int
 * every 16 bytes, `sum += p[i]; p[i] = 1`, scalar, on malloc's array) and
 * yamba's (`a[i] += 1` on every 64-bit word, SSE2, on yamba's array in
 * its 64 KiB blocks) over 128 MiB. Both read and write every cache line;
 * their bytes are counted as yamba counts them, the array read and
 * written (lmbench's own figure ×2).
 *
 * Rows (tab-separated): name, the median of 11 passes in MB/s.
 *
 * Mind where the arrays land: the rdwr arrays, mapped here after 640 MiB
 * of others, get physically contiguous pages, which a fresh process's
 * first arrays (each tool's) may not, and base pages stream ~20% faster
 * over contiguous ones (bench/rdwr-memory.c; docs/lmbench.md, the bw_mem
 * row): the rdwr rows read above both tools for that reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define PASSES 11

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

__attribute__((noinline, optimize("no-tree-vectorize"))) static void scale_scalar(double *restrict b, const double *restrict c, long n, double s) {
    for (long i = 0; i < n; i++) b[i] = s * c[i];
}
/* The x86-64 baseline (SSE2), as rustc's default target. */
__attribute__((noinline)) static void scale_sse2(double *restrict b, const double *restrict c, long n, double s) {
    for (long i = 0; i < n; i++) b[i] = s * c[i];
}
__attribute__((noinline, target("avx2"))) static void scale_avx2(double *restrict b, const double *restrict c, long n, double s) {
    for (long i = 0; i < n; i++) b[i] = s * c[i];
}
/* Not turned into a call of memcpy (gcc -O3 does that to this loop). */
__attribute__((noinline, optimize("no-tree-vectorize", "no-tree-loop-distribute-patterns"))) static void copy_scalar(double *restrict b, const double *restrict c, long n) {
    for (long i = 0; i < n; i++) b[i] = c[i];
}

/* lmbench's rdwr (bw_mem.c): an int every 16 bytes read into a sum and
 * overwritten, 32 a 512-byte chunk; scalar, as lmbench's -O2 builds it. */
__attribute__((noinline, optimize("no-tree-vectorize"))) static int rdwr_lmbench(int *p, long ints) {
    int sum = 0;
#define D(i) sum += p[i]; p[i] = 1;
#define D8(i) D(i) D(i + 4) D(i + 8) D(i + 12) D(i + 16) D(i + 20) D(i + 24) D(i + 28)
    for (int *last = p + ints - 128; p <= last; p += 128) { D8(0) D8(32) D8(64) D8(96) }
#undef D8
#undef D
    return sum;
}
/* yamba's rdwr (mem/kernels.rs, Kernel::Rdwr): every 64-bit word += 1. */
__attribute__((noinline)) static void rdwr_yamba(unsigned long *restrict a, long n) {
    for (long i = 0; i < n; i++) a[i] += 1;
}

/* One array as yamba maps it: its own page-aligned anonymous mapping,
 * base pages, every page faulted in writable before any timing. */
static double *yamba_array(long n) {
    size_t len = n * sizeof(double);
    double *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    if (madvise(p, len, MADV_NOHUGEPAGE) != 0) { perror("madvise"); exit(1); }
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, len, MADV_POPULATE_WRITE) != 0)
#endif
        for (size_t o = 0; o < len; o += 4096) ((volatile char *)p)[o] = 0;
    return p;
}
#define BLOCK 8192 /* words: 64 KiB per array, yamba's block */
static void scale_sse2_blocks(double *restrict b, const double *restrict c, long n, double s) {
    for (long lo = 0; lo < n; lo += BLOCK) scale_sse2(b + lo, c + lo, BLOCK, s);
}
static void rdwr_yamba_blocks(unsigned long *a, long n) {
    for (long lo = 0; lo < n; lo += BLOCK) rdwr_yamba(a + lo, BLOCK);
}

int main(void) {
    long n = (128L << 20) / sizeof(double);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b) { perror("malloc"); return 1; }
    for (long i = 0; i < n; i++) { a[i] = 1.0; b[i] = 2.0; }
    double *ya = yamba_array(n), *yb = yamba_array(n);
    for (long i = 0; i < n; i++) ya[i] = 2.0;
    int *ri = malloc(n * sizeof(double));
    if (!ri) { perror("malloc"); return 1; }
    for (long i = 0; i < n * 2; i++) ri[i] = 1;
    unsigned long *ry = (unsigned long *)yamba_array(n);
    int rsum = 0;
    enum { ROWS = 9 };
    static const char *name[ROWS] = {"scale, scalar (lmbench's code)", "scale, SSE2 (yamba's code)", "scale, AVX2", "copy, scalar (lmbench's code)",
                                     "scale, scalar, yamba's arrays", "scale, SSE2, yamba's arrays", "scale, SSE2, yamba's arrays and blocks",
                                     "rdwr, lmbench's code", "rdwr, yamba's code, arrays and blocks"};
    double mbs[ROWS][PASSES];
    for (int k = 0; k < PASSES; k++)
        for (int j = 0; j < ROWS; j++) {
            double t0 = now();
            switch (j) {
            case 0: scale_scalar(b, a, n, 3.0); break;
            case 1: scale_sse2(b, a, n, 3.0); break;
            case 2: scale_avx2(b, a, n, 3.0); break;
            case 3: copy_scalar(b, a, n); break;
            case 4: scale_scalar(yb, ya, n, 3.0); break;
            case 5: scale_sse2(yb, ya, n, 3.0); break;
            case 6: scale_sse2_blocks(yb, ya, n, 3.0); break;
            case 7: rsum += rdwr_lmbench(ri, n * 2); break;
            default: rdwr_yamba_blocks(ry, n); break;
            }
            mbs[j][k] = 2.0 * n * sizeof(double) / (now() - t0) / 1e6;
        }
    for (int j = 0; j < ROWS; j++) {
        qsort(mbs[j], PASSES, sizeof(double), cmp);
        printf("%s\t%.0f\n", name[j], mbs[j][PASSES / 2]);
    }
    /* keep the stores; every word of yamba's array was added to once a pass */
    return b[n / 2] == 0.0 || yb[n / 2] == 0.0 || rsum == 42 || ry[n / 2] != PASSES;
}
