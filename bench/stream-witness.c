/* Why yamba's `mem.bandwidth.scale` reads ~1.3× lmbench's `stream` scale
 * on 128 MiB arrays (issue 26; docs/lmbench.md, "paired rounds" and the
 * `stream` row), while their copies agree within 5%.
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
 * Rows (tab-separated): name, the median of 11 passes in MB/s.
 */
#include <stdio.h>
#include <stdlib.h>
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
__attribute__((noinline, optimize("no-tree-vectorize"))) static void copy_scalar(double *restrict b, const double *restrict c, long n) {
    for (long i = 0; i < n; i++) b[i] = c[i];
}

int main(void) {
    long n = (128L << 20) / sizeof(double);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b) { perror("malloc"); return 1; }
    for (long i = 0; i < n; i++) { a[i] = 1.0; b[i] = 2.0; }
    static const char *name[] = {"scale, scalar (lmbench's code)", "scale, SSE2 (yamba's code)", "scale, AVX2", "copy, scalar (lmbench's code)"};
    double mbs[4][PASSES];
    for (int k = 0; k < PASSES; k++)
        for (int j = 0; j < 4; j++) {
            double t0 = now();
            switch (j) {
            case 0: scale_scalar(b, a, n, 3.0); break;
            case 1: scale_sse2(b, a, n, 3.0); break;
            case 2: scale_avx2(b, a, n, 3.0); break;
            default: copy_scalar(b, a, n); break;
            }
            mbs[j][k] = 2.0 * n * sizeof(double) / (now() - t0) / 1e6;
        }
    for (int j = 0; j < 4; j++) {
        qsort(mbs[j], PASSES, sizeof(double), cmp);
        printf("%s\t%.0f\n", name[j], mbs[j][PASSES / 2]);
    }
    return b[n / 2] == 0.0; /* keep the stores */
}
