/* Why lmbench's `lat_proc fork` and yamba's `proc.fork.light` differ
 * (issue 26: 110.4 vs 87.2 µs on an Intel Xeon guest; 0.90-0.96 on AMD).
 *
 *   gcc -O2 -o /tmp/fork-witness bench/fork-witness.c
 *   taskset -c 1 /tmp/fork-witness
 *
 * fork + child exit + waitpid, as both tools time it, with the two things
 * the tools differ in taken apart:
 *   - how the child leaves: lmbench's exit(1) (atexit handlers, stdio
 *     flushed) or yamba's _exit;
 *   - how much anonymous memory the parent has touched (fork copies its
 *     page tables and the child's exit tears them down): lmbench's process
 *     holds about 0.1 MiB, yamba's about 1.2 MiB (`parent_rss_anon_bytes`).
 * Each row: the median of 15 timings of 200 forks, µs per fork; rows
 * interleaved. Nothing is buffered in stdio when the children exit (as in
 * lmbench, which prints to stderr at the end), so exit() flushes nothing.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FORKS 200
#define TIMINGS 15

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

static double forks(int use_exit) {
    double t0 = now();
    for (int i = 0; i < FORKS; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            if (use_exit) exit(1);
            _exit(1);
        }
        int st;
        waitpid(pid, &st, 0);
    }
    return (now() - t0) / FORKS / 1e3;
}

static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

int main(void) {
    /* rows: {exit?, extra MiB touched} */
    static const struct { int use_exit; int mib; const char *name; } rows[] = {
        {1, 0, "exit(1), parent +0 MiB (lmbench's)"},
        {0, 0, "_exit(1), parent +0 MiB"},
        {1, 1, "exit(1), parent +1 MiB"},
        {0, 1, "_exit(1), parent +1 MiB (yamba's)"},
    };
    enum { ROWS = sizeof rows / sizeof rows[0] };
    static double t[ROWS][TIMINGS];
    /* One 1 MiB mapping, touched for the +1 MiB rows and dropped (MADV_DONTNEED) for the +0 rows. */
    char *extra = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (extra == MAP_FAILED) { perror("mmap"); return 1; }
    for (int k = -1; k < TIMINGS; k++)
        for (int r = 0; r < ROWS; r++) {
            if (rows[r].mib) memset(extra, 1, 1 << 20); else madvise(extra, 1 << 20, MADV_DONTNEED);
            double v = forks(rows[r].use_exit);
            if (k >= 0) t[r][k] = v;
        }
    for (int r = 0; r < ROWS; r++) {
        qsort(t[r], TIMINGS, sizeof(double), cmp);
        printf("%-38s\t%8.1f µs  (min %.1f)\n", rows[r].name, t[r][TIMINGS / 2], t[r][0]);
    }
    return 0;
}
