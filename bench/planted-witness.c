/* The planted work's witness (issue 25's planted slowdown, measured in C):
 * getppid made inline (the `syscall` or `svc` instruction, as
 * cpu.syscall.getppid does), then N dependent multiplies in a loop whose
 * count the compiler cannot know, then the fence yamba's loop waits on
 * (order::wait_for_earlier), against the same loop with none, the two
 * sides interleaved round by round on one CPU, taking turns to go first.
 * Prints the median over rounds of (time with N) / (time with none).
 *
 * Used by crates/yamba-cli/tests/measure_certainty.rs (the planted-5%
 * check) and bench/trust-at-speed.sh (the planted pairs), which both size
 * their plant by it. What N multiplies add after a system call is neither
 * N latencies nor the same fraction on every core: 8 added 4.0 ns of their
 * 6.5 on a Zen 4 guest and 10.3 ns on a Zen 5 guest.
 *
 * A process can sit in a state of its own for the whole of its life: on
 * an AMD EPYC (Zen 4) guest 2 of 5 and 2 of 8 processes read 13
 * multiplies as x0.83 or x1.39 where every other read x1.0807 (±0.01%),
 * one side of the pair (the loop with N, or the one with none) ~30%
 * slower throughout — getppid's slow state, met by one loop and not the
 * other. The median of three processes lands in such a state often
 * enough to be wrong now and then (one CI, likely so, sized a plant by a
 * reading of ~1% that yamba's pairs measured at 9%). So with PROCESSES > 1 the
 * witness runs itself that many times in fresh processes and prints the
 * median of the largest group of readings within 0.5% of each other, when
 * it holds a majority of them; else it says so on stderr and exits 3.
 *
 * Usage: planted-witness CPU N ROUNDS CALLS [PROCESSES]   (cc -O2; x86-64, aarch64)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
static inline long getppid_inline(void) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "0"(110L) : "rcx", "r11", "memory");
    return r;
}
#define FENCE __asm__ volatile("lfence" ::: "memory")
#elif defined(__aarch64__)
static inline long getppid_inline(void) {
    register long x8 __asm__("x8") = 173;
    register long x0 __asm__("x0");
    __asm__ volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
    return x0;
}
#define FENCE __asm__ volatile("isb" ::: "memory")
#endif
static volatile long zero;
static long sink;
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
__attribute__((noinline)) static double side(long calls, const volatile long *count) {
    long n = *count, z = zero;
    double t0 = now();
    for (long c = 0; c < calls; c++) {
        unsigned long x = getppid_inline();
        for (long i = 0; i < n; i++) {
            x *= 0x9E3779B97F4A7C15UL;
            __asm__ volatile("" : "+r"(x));
        }
        FENCE;
        sink += x & z;
    }
    return (now() - t0) / calls;
}
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
/* One reading in a fresh process: this program with PROCESSES 1. */
static double reading(char **argv) {
    int fd[2];
    if (pipe(fd) != 0) { perror("pipe"); exit(1); }
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(1); }
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        char *args[] = {argv[0], argv[1], argv[2], argv[3], argv[4], "1", NULL};
        execv("/proc/self/exe", args);
        perror("execv");
        _exit(1);
    }
    close(fd[1]);
    char buf[64] = {0};
    ssize_t got = read(fd[0], buf, sizeof buf - 1);
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "planted-witness: a reading process failed\n");
        exit(1);
    }
    return atof(buf);
}
/* The median of the largest group of readings within 0.5% of one of them,
 * if it holds a majority; else a message and exit 3. */
static int modal(char **argv, int processes) {
    double *v = malloc(processes * sizeof(double));
    for (int i = 0; i < processes; i++) v[i] = reading(argv);
    qsort(v, processes, sizeof(double), cmp);
    int best = 0, from = 0;
    for (int i = 0; i < processes; i++) {
        int j = i;
        while (j < processes && v[j] <= v[i] * 1.005) j++;
        if (j - i > best) { best = j - i; from = i; }
    }
    if (2 * best <= processes) {
        fprintf(stderr, "planted-witness: no majority among %d processes' readings:", processes);
        for (int i = 0; i < processes; i++) fprintf(stderr, " %.4f", v[i]);
        fprintf(stderr, "\n");
        return 3;
    }
    printf("%.6f\n", v[from + best / 2]);
    return 0;
}
int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: planted-witness CPU N ROUNDS CALLS [PROCESSES]\n");
        return 2;
    }
    int processes = argc == 6 ? atoi(argv[5]) : 1;
    if (processes > 1) return modal(argv, processes);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(argv[1]), &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) { perror("sched_setaffinity"); return 1; }
    static volatile long none = 0, some;
    some = atol(argv[2]);
    int rounds = atoi(argv[3]);
    long calls = atol(argv[4]);
    double *ratio = malloc(rounds * sizeof(double));
    side(calls, &none);
    side(calls, &some);
    for (int r = 0; r < rounds; r++) {
        double a, b;
        if (r % 2) { b = side(calls, &some); a = side(calls, &none); }
        else { a = side(calls, &none); b = side(calls, &some); }
        ratio[r] = b / a;
    }
    qsort(ratio, rounds, sizeof(double), cmp);
    printf("%.6f\n", ratio[rounds / 2]);
    return 0;
}
