/* Which reading of the core clock tracks the clock a workload ran at?
 *
 *   gcc -O2 -o /tmp/clock-track bench/clock-track.c && taskset -c 1 /tmp/clock-track 30
 *
 * On a VM whose host moves the core between turbo bins, a CPU-bound time in
 * ns moves with the bin and its time in cycles should not. For half-second
 * blocks of a workload this prints the workload's median ns/op and its
 * cycles by three readings of the clock (64-bit multiply chains, 3 cycles
 * each):
 *   during — the median of 32K-multiply chains run every 16 observations
 *            (what yamba's loop method does now);
 *   after5 — the fastest of five 256K chains right after the block (yamba's
 *            earlier probe);
 *   after9 — the median of nine 64K chains right after the block (yamba's
 *            probe for methods other than the loop).
 * Workloads: a dependent crc32 chain (3 cycles an operation: ground truth)
 * and the getppid syscall. The summary gives each column's CV over the
 * blocks: a reading that tracks the clock leaves the cycles steadier than
 * the time; one that does not adds its own noise.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
#define R8(x) x x x x x x x x
static void mul_chain(uint64_t n) { uint64_t x = 3; for (uint64_t i = 0; i < n / 8; i++) __asm__ volatile(R8("imul %0,%0\n\t") : "+r"(x)); }
static double chain_mhz(uint64_t n) { double t0 = now(); mul_chain(n); return n * 3.0 / (now() - t0) * 1e3; }
static void crc(uint64_t n) { uint64_t x = 1; for (uint64_t i = 0; i < n / 8; i++) __asm__ volatile(R8("crc32q %0,%0\n\t") : "+r"(x)); }
static void getppid_raw(uint64_t n) { for (uint64_t i = 0; i < n; i++) { long r; __asm__ volatile("syscall" : "=a"(r) : "a"(SYS_getppid) : "rcx", "r11", "memory"); } }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static double median(double *v, int n) { qsort(v, n, sizeof *v, cmp); return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; }
static double cv(const double *v, int n) { double m = 0, s = 0; for (int i = 0; i < n; i++) m += v[i]; m /= n; for (int i = 0; i < n; i++) s += (v[i] - m) * (v[i] - m); return sqrt(s / (n - 1)) / m * 100; }

static double obs[200000], mh[20000];
int main(int argc, char **argv) {
  int blocks = argc > 1 ? atoi(argv[1]) : 30;
  if (blocks < 2 || blocks > 1000) { fprintf(stderr, "usage: clock-track [BLOCKS 2..1000]\n"); return 2; }
  for (int w = 0; w < 2; w++) {
    const char *name = w ? "getppid" : "crc32 (3 cycles)";
    uint64_t ops = w ? 200 : 16000;
    double t[1000], c_during[1000], c_after5[1000], c_after9[1000];
    printf("%s: block, ns/op, cycles/op by during / after5 / after9, MHz by the same\n", name);
    for (int b = 0; b < blocks; b++) {
      int no = 0, nm = 0;
      double start = now();
      while (now() - start < 0.5e9 && no < 200000) {
        if (no % 16 == 0 && nm < 20000) mh[nm++] = chain_mhz(32 * 1024);
        double t0 = now();
        if (w) getppid_raw(ops); else crc(ops);
        obs[no++] = (now() - t0) / ops;
      }
      double p = median(obs, no), during = median(mh, nm), after5 = 0, a9[9];
      for (int i = 0; i < 5; i++) { double m = chain_mhz(256 * 1024); if (m > after5) after5 = m; }
      for (int i = 0; i < 9; i++) a9[i] = chain_mhz(64 * 1024);
      double after9 = median(a9, 9);
      t[b] = p; c_during[b] = p * during / 1e3; c_after5[b] = p * after5 / 1e3; c_after9[b] = p * after9 / 1e3;
      printf("  %3d %9.4f  %8.3f %8.3f %8.3f   %6.0f %6.0f %6.0f\n", b, p, c_during[b], c_after5[b], c_after9[b], during, after5, after9);
      fflush(stdout);
    }
    printf("  CV over %d blocks: time %.3f%%, cycles during %.3f%%, after5 %.3f%%, after9 %.3f%%\n\n", blocks,
           cv(t, blocks), cv(c_during, blocks), cv(c_after5, blocks), cv(c_after9, blocks));
  }
  return 0;
}
