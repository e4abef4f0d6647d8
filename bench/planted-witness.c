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
 * Usage: planted-witness CPU N ROUNDS CALLS   (cc -O2; x86-64, aarch64)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
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
int main(int argc, char **argv) {
    if (argc != 5) return 2;
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
