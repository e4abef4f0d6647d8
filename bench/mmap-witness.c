/* Why lmbench's `lat_mmap` and yamba's `mem.mmap` differ (issue 26:
 * yamba / lmbench 0.81 at 512k on an AMD guest; 0.82-0.84 at every size
 * on an Intel Xeon guest, where AMD's rounds later agreed within 5%).
 *
 *   gcc -O2 -o /tmp/mmap-witness bench/mmap-witness.c
 *   taskset -c 1 /tmp/mmap-witness FILE      (FILE ≥ 32 MiB, cached)
 *
 * lmbench's domapping(): mmap the first SIZE bytes of FILE, shared and
 * writable; write one byte every 16 KiB of the first tenth; munmap. The
 * tools time it differently, and the rows take the two ways apart on the
 * same file, in the same minutes:
 *   - "loop": lmbench's way, a loop of operations timed as a whole, the
 *     time per operation its mean; the median of 11 such timings;
 *   - "alone": yamba's way, each operation timed alone, the median of
 *     them all (and their mean: a loop's mean holds the operations' tail,
 *     a median does not);
 *   - "faults": minor faults per operation (getrusage), which should be
 *     the pages written (4, 26, 205) when the file is cached in base pages.
 * And where the mapping lies, which neither tool chooses: a mapping alone
 * in its 2 MiB region has a page-table page to itself, allocated and freed
 * with every operation (two levels more alone in its 1 GiB region), while
 * one beside other mappings shares it. The 512k rows place the mapping
 * (MAP_FIXED_NOREPLACE, each op timed alone) beside another mapping in its
 * 2 MiB region, alone in its 2 MiB region, and alone in its 1 GiB region;
 * the kernel puts a 512k mapping beside the last one made (both tools'
 * shared their 2 MiB region with others, read from /proc/PID/maps) and
 * aligns one of 2 MiB or more of a large-folio file to 2 MiB (4m and 32m:
 * a region of their own in both tools).
 * Each row: µs per operation (faults: a count), per size, rows interleaved.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define PSIZE (16 << 10)
#define TIMINGS 11
#define ALONE 400

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

static long minflt(void) { struct rusage r; getrusage(RUSAGE_SELF, &r); return r.ru_minflt; }

/* One of lmbench's operations: map (at `at`, or where the kernel chooses
 * when NULL), write a byte per 16 KiB of the first tenth, unmap. */
static void op_at(int fd, size_t size, char *at) {
    char *where = mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | (at ? MAP_FIXED_NOREPLACE : 0), fd, 0);
    if (where == MAP_FAILED || (at && where != at)) { perror("mmap"); exit(1); }
    char *end = where + size / 10;
    for (volatile char *p = where; p < end; p += PSIZE) *p = (char)(size & 0xff);
    munmap(where, size);
}

static void op(int fd, size_t size) { op_at(fd, size, NULL); }

static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median(double *v, int n) { qsort(v, n, sizeof *v, cmp); return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; }

/* lmbench's way: loops of `iters` operations, µs per operation, median of TIMINGS. */
static double loop(int fd, size_t size, int iters) {
    double t[TIMINGS];
    for (int k = 0; k < TIMINGS; k++) {
        double t0 = now();
        for (int i = 0; i < iters; i++) op(fd, size);
        t[k] = (now() - t0) / iters / 1e3;
    }
    return median(t, TIMINGS);
}

/* Operations timed alone: their median and mean, µs. */
struct timed { double median, mean; };

/* yamba's way: each operation timed alone, mapped at `at` (NULL: the
 * kernel's choice). */
static struct timed alone_at(int fd, size_t size, char *at) {
    static double t[ALONE];
    for (int i = 0; i < 20; i++) op_at(fd, size, at); /* warm-up */
    for (int k = 0; k < ALONE; k++) {
        double t0 = now();
        op_at(fd, size, at);
        t[k] = (now() - t0) / 1e3;
    }
    double mean = 0;
    for (int k = 0; k < ALONE; k++) mean += t[k] / ALONE;
    return (struct timed){median(t, ALONE), mean};
}

static struct timed alone(int fd, size_t size) { return alone_at(fd, size, NULL); }

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s FILE (32 MiB or more, cached)\n", argv[0]); return 2; }
    int fd = open(argv[1], O_RDWR);
    if (fd < 0) { perror(argv[1]); return 1; }
    if (lseek(fd, 0, SEEK_END) < (32 << 20)) { fprintf(stderr, "%s: smaller than 32 MiB\n", argv[1]); return 1; }
    static const size_t sizes[] = {512 << 10, 4 << 20, 32 << 20};
    static const char *names[] = {"512k", "4m", "32m"};
    for (int s = 0; s < 3; s++) {
        size_t size = sizes[s];
        /* About 20 ms a timing, as the list gives lmbench (ENOUGH=20000). */
        struct timed a1 = alone(fd, size);
        int iters = (int)(20e3 / a1.median) + 1;
        long f0 = minflt();
        for (int i = 0; i < 100; i++) op(fd, size);
        double faults = (minflt() - f0) / 100.0;
        double l1 = loop(fd, size, iters);
        struct timed a2 = alone(fd, size);
        double l2 = loop(fd, size, iters);
        printf("mmap %s loop mean (lmbench's way)\t%.3f\n", names[s], (l1 + l2) / 2);
        printf("mmap %s each alone, median (yamba's way)\t%.3f\n", names[s], (a1.median + a2.median) / 2);
        printf("mmap %s each alone, mean\t%.3f\n", names[s], (a1.mean + a2.mean) / 2);
        printf("mmap %s minor faults per op (count)\t%.2f\n", names[s], faults);
    }
    /* The 512k mapping placed: three regions far from everything else, in
     * distinct 1 GiB regions; the first holds another page at the end of
     * its 2 MiB region, the second one at the end of its 1 GiB region. */
    const size_t size = 512 << 10, m2 = 2 << 20, g1 = 1 << 30;
    char *beside = (char *)0x7c0000000000ULL, *own2m = (char *)0x7d0000000000ULL, *own1g = (char *)0x7e0000000000ULL;
    char *pins[] = {beside + m2 - 4096, own2m + g1 - 4096};
    for (int i = 0; i < 2; i++) {
        char *p = mmap(pins[i], 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (p != pins[i]) { perror("mmap (neighbour)"); return 1; }
        *p = 1;
    }
    double b = 0, o2 = 0, o1 = 0, k = 0;
    for (int r = 0; r < 2; r++) { /* interleaved, twice; the mean of the two medians */
        b += alone_at(fd, size, beside).median / 2;
        o2 += alone_at(fd, size, own2m).median / 2;
        o1 += alone_at(fd, size, own1g).median / 2;
        k += alone(fd, size).median / 2;
    }
    printf("mmap 512k beside another mapping in its 2 MiB region\t%.3f\n", b);
    printf("mmap 512k alone in its 2 MiB region\t%.3f\n", o2);
    printf("mmap 512k alone in its 1 GiB region\t%.3f\n", o1);
    printf("mmap 512k where the kernel puts it\t%.3f\n", k);
    return 0;
}
