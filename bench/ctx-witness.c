/* Why yamba's `ipc.ctxsw.sweep.0k` and lmbench's `lat_ctx -s 0` differ
 * from 8 processes up on some hosts, both in SCHED_BATCH (issue 26;
 * docs/lmbench.md, lat_ctx).
 *
 *   gcc -O2 -o /tmp/ctx-witness bench/ctx-witness.c
 *   taskset -c 1 chrt --batch 0 /tmp/ctx-witness
 *
 * A token ring of lmbench's shape (N processes, N pipes, each child holding
 * only its two ends, 4-byte token), timed per hop, minus the same writes
 * and reads in one process over the N pipes (lmbench's "overhead"). Each
 * ring runs twice: as lmbench's (a hop touches the few pages of a small C
 * loop) and with each process also reading one word from each of PAGES
 * more pages per hop (its code and data spread as a larger program's are).
 *
 * The hypothesis it tests: an x86 Linux kernel keeps 6 address spaces per
 * CPU tagged in the TLB (PCID; TLB_NR_DYN_ASIDS). A ring of up to 6
 * processes switches among tagged address spaces; from 7 on, each switch
 * reuses the oldest tag and flushes it, so every hop starts with an empty
 * TLB for the process it switches to, and pays one page walk per page it
 * touches. If so, the extra pages cost little per hop up to 6 processes and
 * much more from 7, and the kernel's tlb_flush tracepoint fires with reason
 * 0 ("flush on task switch") and a non-zero page count (a full flush; a
 * switch that keeps the TLB fires it with 0 pages) about once per hop from
 * 7 on and not below. Counted when tracefs is mounted at /sys/kernel/tracing
 * and writable (root), else "n/a".
 *
 * Rows (tab-separated): name, the median of 15 timings in µs per hop; then
 * the full flushes per hop, counted in one more pass of each ring of
 * lmbench's shape.
 *
 *   ctx-witness N...   only rings of N processes, lmbench's shape only, no
 *                      flush count (bench/paired-rounds.sh ctx's third witness)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TIMINGS 15
#define PAGES 8
#define PAGE 4096
static int NS[32] = {2, 4, 6, 7, 8, 16, 96};
static int NN = 7;

static volatile unsigned long sink;
static unsigned char *pages; /* PAGES pages, each process's own after fork */
static int touch;            /* pages touched per hop: 0 or PAGES */

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

static void touch_pages(void) {
    unsigned long s = 0;
    for (int k = 0; k < touch; k++) s += pages[k * PAGE + 64 * (k % 64)];
    sink = s;
}

static void die(const char *what) { perror(what); exit(1); }

/* Child i of the ring: only its two ends open, as lmbench's. */
static void child(int (*p)[2], int n, int i) {
    for (int j = 0; j < n; j++) {
        if (j != i - 1) close(p[j][0]);
        if (j != i) close(p[j][1]);
    }
    int msg;
    for (;;) {
        if (read(p[i - 1][0], &msg, sizeof msg) != sizeof msg) _exit(0);
        touch_pages();
        if (write(p[i][1], &msg, sizeof msg) != sizeof msg) _exit(0);
    }
}

static double median(double *v, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) { double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
    return v[n / 2];
}

/* Full flushes on a task switch so far on this CPU (the filter's), or -1. */
static int cpu;
static long flushes(void) {
    char path[128], line[256];
    snprintf(path, sizeof path, "/sys/kernel/tracing/per_cpu/cpu%d/stats", cpu);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long entries = -1, overrun = 0;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "entries: %ld", &entries);
        sscanf(line, "overrun: %ld", &overrun);
    }
    fclose(f);
    return entries < 0 ? -1 : entries + overrun;
}
static int tracefs_write(const char *file, const char *what) {
    char path[128];
    snprintf(path, sizeof path, "/sys/kernel/tracing/%s", file);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int ok = fputs(what, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* `count` rounds of the ring: the token out through the first pipe and
 * back from the last, then this process's own touches. */
static void rounds_of(int (*p)[2], int n, int count) {
    int msg = 1;
    for (int r = 0; r < count; r++) {
        if (write(p[0][1], &msg, sizeof msg) != sizeof msg || read(p[n - 1][0], &msg, sizeof msg) != sizeof msg) die("ring");
        touch_pages();
    }
}

/* One ring of n processes: µs per hop (ring minus alone), and, unless
 * flush_per_hop is NULL, the full flushes per hop (-1 if not counted). */
static void ring(int n, double *per_hop, double *flush_per_hop) {
    int (*p)[2] = malloc(sizeof(int[2]) * n);
    for (int i = 0; i < n; i++) if (pipe(p[i])) die("pipe");
    pid_t *pid = calloc(n, sizeof *pid);
    for (int i = 1; i < n; i++) {
        pid[i] = fork();
        if (pid[i] < 0) die("fork");
        if (pid[i] == 0) child(p, n, i);
    }
    int rounds = 20000 / n + 1;
    double t[TIMINGS];
    rounds_of(p, n, rounds / 4 + 1); /* warm-up: everyone has run */
    for (int k = 0; k < TIMINGS; k++) {
        double t0 = now();
        rounds_of(p, n, rounds);
        t[k] = (now() - t0) / rounds / n;
    }
    double hop = median(t, TIMINGS);
    if (flush_per_hop) {
        *flush_per_hop = -1;
        if (tracefs_write("trace", "") == 0 && tracefs_write("events/tlb/tlb_flush/enable", "1") == 0) {
            long f0 = flushes();
            rounds_of(p, n, rounds);
            long f1 = flushes();
            tracefs_write("events/tlb/tlb_flush/enable", "0");
            if (f0 >= 0 && f1 >= 0) *flush_per_hop = (double)(f1 - f0) / rounds / n;
        }
    }
    for (int i = 1; i < n; i++) { kill(pid[i], SIGKILL); waitpid(pid[i], NULL, 0); }
    /* Alone: the same writes, reads and touches in this process over the n pipes. */
    int msg = 1, ops = rounds * n;
    for (int k = 0; k < TIMINGS; k++) {
        double t0 = now();
        for (int r = 0, i = 0; r < ops; r++) {
            if (write(p[i][1], &msg, sizeof msg) != sizeof msg || read(p[i][0], &msg, sizeof msg) != sizeof msg) die("alone");
            touch_pages();
            if (++i == n) i = 0;
        }
        t[k] = (now() - t0) / ops;
    }
    *per_hop = (hop - median(t, TIMINGS)) / 1000.0;
    for (int i = 0; i < n; i++) { close(p[i][0]); close(p[i][1]); }
    free(p);
    free(pid);
}

int main(int argc, char **argv) {
    cpu = sched_getcpu();
    if (argc > 1) {
        if (argc - 1 > (int)(sizeof NS / sizeof NS[0])) { fprintf(stderr, "ctx-witness: at most %d process counts\n", (int)(sizeof NS / sizeof NS[0])); return 2; }
        for (NN = 0; NN < argc - 1; NN++) {
            char *end;
            long n = strtol(argv[NN + 1], &end, 10);
            if (*end || n < 2 || n > 4096) { fprintf(stderr, "ctx-witness: '%s' is not a process count (2-4096)\n", argv[NN + 1]); return 2; }
            NS[NN] = (int)n;
        }
        double hop;
        for (int i = 0; i < NN; i++) {
            ring(NS[i], &hop, NULL);
            printf("ring of %d, lmbench's shape\t%.3f\n", NS[i], hop);
        }
        return 0;
    }
    pages = aligned_alloc(PAGE, PAGES * PAGE);
    if (!pages) die("aligned_alloc");
    memset(pages, 1, PAGES * PAGE);
    /* Only full flushes on a task switch are counted (reason 0 with pages 0 is a switch that kept the TLB); the buffer is large enough to hold a ring's. */
    int traced = tracefs_write("events/tlb/tlb_flush/filter", "reason == 0 && pages != 0") == 0 && tracefs_write("buffer_size_kb", "8192") == 0;
    double hop[2][32], fl[32];
    for (int i = 0; i < NN; i++)
        for (int s = 0; s < 2; s++) { /* the two shapes interleaved; flushes counted in lmbench's */
            touch = s ? PAGES : 0;
            ring(NS[i], &hop[s][i], s == 0 && traced ? &fl[i] : NULL);
        }
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < NN; i++)
            if (s) printf("ring of %d, lmbench's shape + %d pages per hop\t%.3f\n", NS[i], PAGES, hop[s][i]);
            else printf("ring of %d, lmbench's shape\t%.3f\n", NS[i], hop[s][i]);
    for (int i = 0; i < NN; i++) {
        if (traced && fl[i] >= 0) printf("ring of %d, full TLB flushes per hop (count)\t%.3f\n", NS[i], fl[i]);
        else printf("ring of %d, full TLB flushes per hop (count)\tn/a\n", NS[i]);
    }
    if (traced) tracefs_write("events/tlb/tlb_flush/filter", "0");
    return 0;
}
