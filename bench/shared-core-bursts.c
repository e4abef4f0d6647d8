/* How a host's neighbour on a vCPU's sibling hyper-thread comes and goes
 * (docs/certainty.md, "A shared core"): pinned to CPU argv[1], every 50 ms
 * for argv[2] seconds, it times 128 Ki independent adds on 8 registers and
 * 32 Ki dependent multiplies (3 cycles each), the fastest of 5 each, and
 * prints "seconds adds-per-cycle": the chain gives the cycles per TSC tick,
 * so the clock's frequency cancels. bench/shared-core-bursts.sh runs it on
 * every CPU at once and tabulates the shared and quiet stretches. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

#define STEPS 8192

static unsigned long long adds(void) {
  unsigned long long t0 = __rdtsc();
  long a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0;
  for (long i = 0; i < STEPS; i++)
    __asm__ volatile(
        "add $1,%0\n add $1,%1\n add $1,%2\n add $1,%3\n"
        "add $1,%4\n add $1,%5\n add $1,%6\n add $1,%7\n"
        "add $1,%0\n add $1,%1\n add $1,%2\n add $1,%3\n"
        "add $1,%4\n add $1,%5\n add $1,%6\n add $1,%7"
        : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h));
  return __rdtsc() - t0;
}

static unsigned long long chain(void) {
  unsigned long long t0 = __rdtsc();
  unsigned long x = 3;
  for (long i = 0; i < STEPS; i++)
    __asm__ volatile("imul %0,%0\n imul %0,%0\n imul %0,%0\n imul %0,%0" : "+r"(x));
  return __rdtsc() - t0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s CPU SECONDS\n", argv[0]);
    return 2;
  }
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(atoi(argv[1]), &s);
  if (sched_setaffinity(0, sizeof s, &s) != 0) {
    perror("sched_setaffinity");
    return 1;
  }
  double t0 = now(), span = atof(argv[2]);
  while (now() - t0 < span) {
    unsigned long long a = ~0ULL, c = ~0ULL;
    for (int k = 0; k < 5; k++) {
      unsigned long long x = adds(), y = chain();
      if (x < a) a = x;
      if (y < c) c = y;
    }
    double cycles_per_tick = 4.0 * 3 * STEPS / c;
    printf("%.3f %.3f\n", now() - t0, 16.0 * STEPS / (a * cycles_per_tick));
    fflush(stdout);
    usleep(50000);
  }
  return 0;
}
