/* Why lmbench's `lat_usleep -u itimer D` and yamba's `sched.wakeup.itimer`
 * differ (issue 26: at D = 10 µs lmbench printed 80.7-105.6 µs a period and
 * yamba D + its median lateness 39.8-60.0 on an Intel Xeon guest, 0.49-0.57;
 * at 1 ms they agree).
 *
 *   gcc -O2 -o /tmp/usleep-witness bench/usleep-witness.c
 *   taskset -c 1 /tmp/usleep-witness [CPU whose timer interrupts to count]
 *
 * Both re-arm ITIMER_REAL for D after each SIGALRM. They differ in two
 * ways, taken apart here:
 *   lmbench: the timer is periodic as well (it_interval = D), a handler
 *            re-arms it while the main loop sleeps; it prints the mean
 *            period (its loop's time / n);
 *   yamba:   a one-shot, SIGALRM blocked and taken with sigtimedwait,
 *            re-armed after; it reports D + the median lateness.
 * Shapes: lmbench's; lmbench's with a one-shot timer; yamba's; yamba's
 * with the periodic flag. Rows, for D = 10, 100, 1000 µs: each shape's
 * mean period, median period (µs) and local timer interrupts per period
 * (/proc/interrupts, LOC), each the median over TIMINGS timings of enough
 * periods to last ~20 ms (lmbench's ENOUGH as the list runs it), the
 * shapes interleaved. Last, what a setitimer costs when it reprograms the
 * CPU's clock event and when it does not: the price of each extra arming.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define TIMINGS 15
#define SHAPES 4
#define MAXP 4096

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }

static struct itimerval value;
static volatile int caught, target;
static double stamps[MAXP + 1];

/* lmbench's interval(): count, then re-arm — or, after the last period,
 * disarm, so that the timer interrupts counted are the timing's own. */
static void handler(int s) {
    (void)s;
    static const struct itimerval off;
    if (caught < target) stamps[++caught] = now();
    setitimer(ITIMER_REAL, caught < target ? &value : &off, NULL);
}

/* The local timer interrupts CPU `cpu` has taken (/proc/interrupts, LOC). */
static long timer_interrupts(int cpu) {
    FILE *f = fopen("/proc/interrupts", "r");
    char line[8192];
    long v = -1;
    while (f && fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ') p++;
        if (strncmp(p, "LOC:", 4) != 0) continue;
        p += 4;
        for (int c = 0; c <= cpu; c++) v = strtol(p, &p, 10);
        break;
    }
    if (f) fclose(f);
    return v;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One timing of `periods` periods: a handler (lmbench) or sigtimedwait
 * (yamba) takes each SIGALRM, the timer one-shot or periodic as well
 * (lmbench's it_interval = D); fills stamps[0..periods]. */
static void timing(int handled, int periodic, int d_us, int periods) {
    value.it_interval.tv_sec = 0;
    value.it_interval.tv_usec = periodic ? d_us : 0;
    value.it_value.tv_sec = d_us / 1000000;
    value.it_value.tv_usec = d_us % 1000000;
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    caught = 0;
    target = periods;
    if (handled) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = handler;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
        sigprocmask(SIG_UNBLOCK, &alrm, NULL);
        stamps[0] = now();
        setitimer(ITIMER_REAL, &value, NULL);
        /* lmbench sleeps 100000 s; 1 s here, so that a last SIGALRM taken
         * between two sleeps cannot leave the loop asleep (the sleep's own
         * timer, 1 s away, is never the earliest either way). */
        while (caught < periods) sleep(1);
    } else {
        sigprocmask(SIG_BLOCK, &alrm, NULL);
        stamps[0] = now();
        setitimer(ITIMER_REAL, &value, NULL);
        for (int k = 1; k <= periods; k++) {
            struct timespec wait = {1, 0};
            if (sigtimedwait(&alrm, NULL, &wait) != SIGALRM) { perror("sigtimedwait"); exit(1); }
            stamps[k] = now();
            if (k < periods) setitimer(ITIMER_REAL, &value, NULL);
        }
    }
    static const struct itimerval off;
    setitimer(ITIMER_REAL, &off, NULL);
    sigprocmask(SIG_BLOCK, &alrm, NULL);
    /* A SIGALRM the periodic timer left pending: taken, not left. */
    struct timespec zero = {0, 0};
    while (sigtimedwait(&alrm, NULL, &zero) == SIGALRM) {}
}

/* ns a setitimer call takes when it arms a timer CPU-wide earliest (the
 * clock event device is reprogrammed, and again at the cancel), or one
 * 5 s away (nothing reprogrammed). */
static double setitimer_ns(int earliest) {
    struct itimerval arm = {{0, 0}, {earliest ? 0 : 5, earliest ? 50 : 0}}, off = {{0, 0}, {0, 0}};
    double t0 = now();
    for (int i = 0; i < 10000; i++) {
        setitimer(ITIMER_REAL, &arm, NULL);
        setitimer(ITIMER_REAL, &off, NULL);
    }
    return (now() - t0) * 1000 / 20000;
}

int main(int argc, char **argv) {
    int cpu = argc > 1 ? atoi(argv[1]) : sched_getcpu();
    static const int ds[] = {10, 100, 1000};
    static const struct { const char *name; int handled, periodic; } shapes[SHAPES] = {
        {"lmbench's shape: periodic, a handler re-arms", 1, 1},
        {"lmbench's shape, one-shot", 1, 0},
        {"yamba's shape: one-shot, sigtimedwait, re-armed after", 0, 0},
        {"yamba's shape, periodic", 0, 1},
    };
    for (unsigned k = 0; k < sizeof ds / sizeof *ds; k++) {
        int d = ds[k];
        int periods = 20000 / d;
        if (periods < 10) periods = 10;
        if (periods > MAXP) periods = MAXP;
        double mean[SHAPES][TIMINGS], median[SHAPES][TIMINGS], irqs[SHAPES][TIMINGS];
        double gaps[MAXP];
        for (int r = 0; r < TIMINGS; r++)
            for (int j = 0; j < SHAPES; j++) {
                long l0 = timer_interrupts(cpu);
                timing(shapes[j].handled, shapes[j].periodic, d, periods);
                irqs[j][r] = (double)(timer_interrupts(cpu) - l0) / periods;
                for (int i = 0; i < periods; i++) gaps[i] = stamps[i + 1] - stamps[i];
                mean[j][r] = (stamps[periods] - stamps[0]) / periods;
                qsort(gaps, periods, sizeof(double), cmp);
                median[j][r] = gaps[periods / 2];
            }
        for (int j = 0; j < SHAPES; j++) {
            qsort(mean[j], TIMINGS, sizeof(double), cmp);
            qsort(median[j], TIMINGS, sizeof(double), cmp);
            qsort(irqs[j], TIMINGS, sizeof(double), cmp);
            printf("itimer %d us: %s, mean period\t%.2f us\n", d, shapes[j].name, mean[j][TIMINGS / 2]);
            printf("itimer %d us: %s, median period\t%.2f us\n", d, shapes[j].name, median[j][TIMINGS / 2]);
            printf("itimer %d us: %s, timer interrupts per period (count)\t%.2f\n", d, shapes[j].name, irqs[j][TIMINGS / 2]);
        }
    }
    /* The cost each extra arming adds on this machine. */
    signal(SIGALRM, SIG_IGN);
    double re[TIMINGS], no[TIMINGS];
    for (int r = 0; r < TIMINGS; r++) {
        re[r] = setitimer_ns(1);
        no[r] = setitimer_ns(0);
    }
    qsort(re, TIMINGS, sizeof(double), cmp);
    qsort(no, TIMINGS, sizeof(double), cmp);
    printf("setitimer that makes its timer the CPU's earliest (reprograms the clock event)\t%.0f ns\n", re[TIMINGS / 2]);
    printf("setitimer that does not (its timer 5 s away)\t%.0f ns\n", no[TIMINGS / 2]);
    return 0;
}
