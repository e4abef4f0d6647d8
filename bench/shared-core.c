/* Is a slow process a shared core? Times, in turn, 200 getppid calls, 200
 * 1-byte reads from /dev/zero, a dependent chain of 8000 imuls (latency:
 * blind to a sibling hardware thread) and 36000 independent adds on 6
 * registers (throughput: halved by one), pinned to CPU 1, and prints one
 * line per round in TSC ticks: round getppid read chain adds.
 * bench/shared-core.sh runs it in many processes and tabulates.
 * x86-64 only. Build: cc -O2 -o shared-core bench/shared-core.c */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

static inline uint64_t now(void) {
  unsigned aux;
  return __rdtscp(&aux);
}

static uint64_t chain(void) {
  uint64_t x = 3, t0 = now();
  for (int i = 0; i < 2000; i++)
    __asm__ volatile("imul %0,%0\n\timul %0,%0\n\timul %0,%0\n\timul %0,%0" : "+r"(x));
  return now() - t0;
}

static uint64_t adds(void) {
  uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, t0 = now();
  for (int i = 0; i < 2000; i++)
    __asm__ volatile(
        "add $1,%0\n\tadd $1,%1\n\tadd $1,%2\n\tadd $1,%3\n\tadd $1,%4\n\tadd $1,%5\n\t"
        "add $1,%0\n\tadd $1,%1\n\tadd $1,%2\n\tadd $1,%3\n\tadd $1,%4\n\tadd $1,%5\n\t"
        "add $1,%0\n\tadd $1,%1\n\tadd $1,%2\n\tadd $1,%3\n\tadd $1,%4\n\tadd $1,%5\n\t"
        : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
  return now() - t0;
}

int main(int argc, char **argv) {
  cpu_set_t m;
  CPU_ZERO(&m);
  CPU_SET(1, &m);
  sched_setaffinity(0, sizeof m, &m);
  int fd = open("/dev/zero", O_RDONLY);
  char buf[1];
  int rounds = argc > 1 ? atoi(argv[1]) : 800;
  for (int k = 0; k < rounds; k++) {
    uint64_t t0 = now();
    for (int i = 0; i < 200; i++) syscall(SYS_getppid);
    uint64_t g = now() - t0;
    t0 = now();
    for (int i = 0; i < 200; i++)
      if (read(fd, buf, 1) != 1) return 1;
    uint64_t r = now() - t0;
    printf("%d %lu %lu %lu %lu\n", k, g / 200, r / 200, chain(), adds());
  }
  return 0;
}
