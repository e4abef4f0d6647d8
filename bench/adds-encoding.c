/* The core-throughput probe's add loop (yamba_core::coreclock::add_streams)
 * in two encodings and at one placement, as a C program: 16 independent
 * adds with a 1-byte immediate (IMM=1, 4 bytes each: the loop packs a
 * 64-byte line) or a 32-bit one (IMM=4096, 7 bytes), starting OFFSET bytes
 * past a 64-byte boundary. Prints one adds-per-cycle reading per line (a
 * 32 Ki dependent-multiply chain for the clock, then 128 Ki adds), 400
 * readings pinned to CPU 1. Built by bench/adds-encoding.sh. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define S(x) #x
#define STR(x) S(x)
#define ADD(r) "add $" STR(IMM) ", %" #r "\n"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void mul(uint64_t steps) {
  uint64_t x = 3;
  __asm__ volatile(".p2align 6\n1: imul %0,%0\n imul %0,%0\n imul %0,%0\n imul %0,%0\n"
                   "imul %0,%0\n imul %0,%0\n imul %0,%0\n imul %0,%0\n dec %1\n jnz 1b"
                   : "+r"(x), "+r"(steps));
}

static void adds(uint64_t steps) {
  uint64_t a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0;
  __asm__ volatile(".p2align 6\n .fill " STR(OFFSET) ",1,0x90\n1:\n"
                   ADD(0) ADD(1) ADD(2) ADD(3) ADD(4) ADD(5) ADD(6) ADD(7)
                   ADD(0) ADD(1) ADD(2) ADD(3) ADD(4) ADD(5) ADD(6) ADD(7)
                   "dec %8\n jnz 1b"
                   : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g),
                     "+r"(h), "+r"(steps));
}

int main(void) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(1, &s);
  sched_setaffinity(0, sizeof s, &s);
  for (int i = 0; i < 400; i++) {
    double t0 = now();
    mul(32 * 1024 / 8);
    double t1 = now();
    adds(128 * 1024 / 16);
    double t2 = now();
    double mhz = 32 * 1024 * 3 / (t1 - t0) / 1e6;
    printf("%.2f\n", 128 * 1024 / ((t2 - t1) * mhz * 1e6));
  }
  return 0;
}
