/* bw_file_rd 64m io_only against fs.reread.read (issue 26: yamba read
 * 1.14× lmbench, 12 paired rounds, AMD EPYC Zen 3 guest): both read a
 * cached file in 64 KiB read(2)s into one buffer and add up its words;
 * what differs is the adding. Rows (MB/s, the median of 21 passes over
 * the file, the shapes interleaved pass by pass):
 *   read only            64 KiB reads, nothing summed
 *   lmbench's bread      its 128-term sum of longs (lib_timing.c), built
 *                        as lmbench builds it (-O2; scalar where gcc does
 *                        not vectorise it)
 *   summed, vectorised   every 64-bit word added (gcc -O3, SSE2: one
 *                        accumulator, so one add's latency a 16 bytes)
 *   summed, 4 accumulators  the same with four SSE2 accumulators, as
 *                        rustc compiles yamba's word_sum
 *
 *   cc -O2 -o /tmp/file-rd-witness bench/file-rd-witness.c
 *   taskset -c 1 /tmp/file-rd-witness FILE     (a cached file of 64 MiB)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define XFER (64 << 10)
#define PASSES 21
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

/* lmbench's bread: 128 longs a turn, one expression. */
__attribute__((noinline)) static long bread(void *buf, long nbytes) {
    long sum = 0, *p = buf, *next;
    char *end = (char *)buf + nbytes;
#define P8(i) p[i] + p[i + 1] + p[i + 2] + p[i + 3] + p[i + 4] + p[i + 5] + p[i + 6] + p[i + 7]
#define P32(i) P8(i) + P8(i + 8) + P8(i + 16) + P8(i + 24)
    for (next = p + 128; (void *)next <= (void *)end; p = next, next += 128) sum += P32(0) + P32(32) + P32(64) + P32(96);
#undef P32
#undef P8
    return sum;
}
__attribute__((noinline, optimize("O3"))) static unsigned long sum_vec(const unsigned long *p, long words) {
    unsigned long s = 0;
    for (long i = 0; i < words; i++) s += p[i];
    return s;
}
/* The same sum with four independent SSE2 accumulators: two 16-byte
 * loads a cycle instead of one add's latency a cycle (rustc's loop in
 * fs::reread::word_sum unrolls so). */
typedef unsigned long v2 __attribute__((vector_size(16)));
__attribute__((noinline)) static unsigned long sum_vec4(const unsigned long *p, long words) {
    v2 a = {0, 0}, b = a, c = a, d = a;
    const v2 *v = (const v2 *)p;
    for (long i = 0; i + 8 <= words; i += 8, v += 4) { a += v[0]; b += v[1]; c += v[2]; d += v[3]; }
    a += b + c + d;
    return a[0] + a[1];
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: file-rd-witness FILE\n"); return 2; }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) { perror(argv[1]); return 2; }
    off_t size = lseek(fd, 0, SEEK_END);
    void *buf = aligned_alloc(4096, XFER);
    static const char *name[4] = {"read only", "lmbench's bread", "summed, vectorised", "summed, 4 accumulators"};
    double mbs[4][PASSES];
    long sink = 0;
    for (int k = 0; k < PASSES; k++)
        for (int j = 0; j < 4; j++) {
            lseek(fd, 0, SEEK_SET);
            double t0 = now();
            ssize_t n;
            while ((n = read(fd, buf, XFER)) > 0) {
                if (j == 1) sink += bread(buf, n);
                else if (j == 2) sink += (long)sum_vec(buf, n / 8);
                else if (j == 3) sink += (long)sum_vec4(buf, n / 8);
            }
            mbs[j][k] = size / (now() - t0) / 1e6;
        }
    for (int j = 0; j < 4; j++) {
        qsort(mbs[j], PASSES, sizeof(double), cmp);
        printf("%s\t%.0f\n", name[j], mbs[j][PASSES / 2]);
    }
    return sink == 42;
}
