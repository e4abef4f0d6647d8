/* Code that has just arrived at an address runs in a state that settles
 * there (docs/certainty.md, "Code placement", "Why visits are long").
 * Copies yamba's getppid loop (unroll 1, each call checked: the same
 * loop as bench/trust-at-speed.sh part 4) to PLACES placements 1040 bytes
 * apart (16-byte steps through a cache line), visits each in turn for
 * TIMINGS timings of CALLS calls from the moment it arrives, ROUNDS
 * times, and prints a line a visit: how many timings read slow (above
 * 152 ns a call, between the fast ~135 and slow ~175 ns states of the
 * AMD EPYC Zen 3 guest it was written on) and the first 80 as . or S.
 *
 *   cc -O2 -o /tmp/placement-settle bench/placement-settle.c
 *   /tmp/placement-settle 16 400 148 2   # PLACES TIMINGS CALLS ROUNDS, on CPU 1
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
#include "getppid-loop.h"

int main(int argc, char **argv) {
    int cpu = 1; cpu_set_t cs; CPU_ZERO(&cs); CPU_SET(cpu, &cs); sched_setaffinity(0, sizeof cs, &cs);
    int places = atoi(argv[1]), timings = atoi(argv[2]), calls = atoi(argv[3]), rounds = argc > 4 ? atoi(argv[4]) : 1;
    char *code = (char *)loop1; size_t len = (char *)loop1_end - code;
    long w[3] = {0, getppid(), 0};
    char *m = mmap(0, (size_t)1040 * places + 4096 + len, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int p = 0; p < places; p++) memcpy(m + (size_t)p * 1040, code, len);
    for (int r = 0; r < rounds; r++)
    for (int p = 0; p < places; p++) {
        void (*f)(long, long *) = (void (*)(long, long *))(m + (size_t)p * 1040);
        printf("r%d p%02d off%02d:", r, p, (int)(((long)m + p * 1040) % 64));
        int slow = 0, firstfast = -1;
        char line[4096]; int k = 0;
        for (int t = 0; t < timings; t++) {
            double t0 = now(); f(calls, w); double x = (now() - t0) / calls;
            int s_ = x > 152; slow += s_; if (!s_ && firstfast < 0) firstfast = t;
            if (k < 4000) line[k++] = s_ ? 'S' : '.';
        }
        line[k] = 0;
        printf(" slow %d/%d firstfast %d  %.*s\n", slow, timings, firstfast, 80, line);
    }
    return 0;
}
