/* Why lmbench's `lat_sig install` and yamba's `signal.sigaction` differ
 * (issue 26: 165.1 vs 142.9 ns on an Intel Xeon guest, within 6% on AMD).
 *
 *   gcc -O2 -o /tmp/sigaction-witness bench/sigaction-witness.c
 *   taskset -c 1 /tmp/sigaction-witness
 *
 * The two loops differ in three ways, taken apart here one at a time:
 *   lmbench: sa_handler, sa_flags 0, sigemptyset in the loop, and the old
 *            action read back (sigaction(SIGUSR1, &sa, &old));
 *   yamba:   an SA_SIGINFO | SA_RESTART action prepared once, no old action
 *            (sigaction(SIGUSR2, &act, NULL)).
 * Each row is the median of 25 timings of 100 000 calls, ns per call; the
 * rows are interleaved so that a neighbour's burst does not fall on one.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CALLS 100000
#define TIMINGS 25

static void handler(int s) { (void)s; }
static void info_handler(int s, siginfo_t *i, void *c) { (void)s; (void)i; (void)c; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

/* lmbench's loop as it is; with the old action read back or not. */
static double lm(int want_old) {
    struct sigaction sa, old;
    double t0 = now();
    for (int i = 0; i < CALLS; i++) {
        sa.sa_handler = handler;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;
        sigaction(SIGUSR1, &sa, want_old ? &old : NULL);
    }
    return (now() - t0) / CALLS;
}
/* yamba's loop; with the old action read back or not. */
static double yb(int want_old) {
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = info_handler;
    act.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&act.sa_mask);
    double t0 = now();
    for (int i = 0; i < CALLS; i++)
        sigaction(SIGUSR2, &act, want_old ? &old : NULL);
    return (now() - t0) / CALLS;
}
/* The kernel's call alone: a query that installs nothing and reads the old action. */
static double query(void) {
    struct sigaction old;
    double t0 = now();
    for (int i = 0; i < CALLS; i++)
        sigaction(SIGUSR2, NULL, &old);
    return (now() - t0) / CALLS;
}

static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

int main(void) {
    enum { LM_OLD, LM_NULL, YB_NULL, YB_OLD, QUERY, ROWS };
    const char *names[ROWS] = {
        "lmbench's loop (old action read back)",
        "lmbench's loop, old = NULL",
        "yamba's loop (old = NULL)",
        "yamba's loop, old action read back",
        "query only (act = NULL, old read back)",
    };
    static double t[ROWS][TIMINGS];
    for (int r = 0; r < ROWS; r++) (void)(r == QUERY ? query() : r < YB_NULL ? lm(r == LM_OLD) : yb(r == YB_OLD)); /* warm-up */
    for (int k = 0; k < TIMINGS; k++)
        for (int r = 0; r < ROWS; r++)
            t[r][k] = r == QUERY ? query() : r < YB_NULL ? lm(r == LM_OLD) : yb(r == YB_OLD);
    for (int r = 0; r < ROWS; r++) {
        qsort(t[r], TIMINGS, sizeof(double), cmp);
        printf("%-42s\t%8.1f ns  (min %.1f)\n", names[r], t[r][TIMINGS / 2], t[r][0]);
    }
    return 0;
}
