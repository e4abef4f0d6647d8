/* The C witness of yamba's 32-bit x86 system-call shapes: getppid in a
 * loop through `int 0x80` (cpu.syscall.getppid on i686), through a call
 * to the vDSO's __kernel_vsyscall (cpu.syscall.getppid.vdso) and through
 * glibc's getppid() (cpu.syscall.getppid.libc), and CPUID (one VM exit in
 * a guest: int 0x80's yardstick there). Built with gcc -m32 -O2 by
 * bench/syscall-i686.sh.
 *
 * Each shape: BATCHES batches, each as many calls as take ~20 us
 * (counted from a first batch of 1000), timed with CLOCK_MONOTONIC_RAW;
 * prints the median batch's ns per call, the clock's own cost (two reads
 * back to back, median) taken out. Short batches, as yamba's observations:
 * the median batch holds no interrupt, where a long batch holds some.
 * The loop's own increment and compare stay in (~1 cycle beside a system
 * call).
 * Every call's result is checked against getppid(); a wrong one fails. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <cpuid.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#ifndef __i386__
#error "this witness is 32-bit x86 code: build it with gcc -m32"
#endif

#define BATCHES 1001
#define BATCH_NS 2e4
#define NR_GETPPID 64 /* i386's table */

static long entry; /* __kernel_vsyscall, from AT_SYSINFO */

static inline long via_int80(void) {
  long r;
  __asm__ volatile("int $0x80" : "=a"(r) : "0"(NR_GETPPID) : "memory");
  return r;
}

static inline long via_vsyscall(void) {
  long r;
  /* As glibc's i386 wrappers: the number in eax, call the entry; it
     returns with every register but eax as it was. */
  __asm__ volatile("call *%1" : "=a"(r) : "r"(entry), "0"(NR_GETPPID) : "memory");
  return r;
}

static inline long via_libc(void) { return getppid(); }

/* CPUID, which every x86 hypervisor traps: in a guest, one VM exit and
   its return, the yardstick for int 0x80's cost there (Linux >= 6.7 reads
   the local APIC on every int 0x80; cpu/syscall.rs). Returns the parent's
   pid, read once, so the shape's check holds. */
static long parent;
static inline long via_cpuid(void) {
  unsigned a, b, c, d;
  __cpuid(0, a, b, c, d);
  __asm__ volatile("" : : "r"(a), "r"(b), "r"(c), "r"(d));
  return parent;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static double clock_cost; /* ns, two back-to-back reads, median */

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define SHAPE(NAME, CALL)                                                    \
  static double NAME(long want) {                                            \
    double per[BATCHES];                                                     \
    long calls = 1000;                                                       \
    for (int b = -1; b < BATCHES; b++) {                                     \
      long wrong = 0;                                                        \
      double t0 = now_ns();                                                  \
      for (long i = 0; i < calls; i++)                                       \
        wrong += CALL() != want;                                             \
      double ns = (now_ns() - t0 - clock_cost) / calls;                      \
      if (b < 0)                                                             \
        calls = BATCH_NS / ns > 4 ? (long)(BATCH_NS / ns) : 4;               \
      else                                                                   \
        per[b] = ns;                                                         \
      if (wrong) {                                                           \
        fprintf(stderr, #NAME ": %ld wrong results\n", wrong);               \
        exit(1);                                                             \
      }                                                                      \
    }                                                                        \
    qsort(per, BATCHES, sizeof per[0], cmp);                                 \
    return per[BATCHES / 2];                                                 \
  }
SHAPE(shape_int80, via_int80)
SHAPE(shape_vsyscall, via_vsyscall)
SHAPE(shape_libc, via_libc)
SHAPE(shape_cpuid, via_cpuid)

int main(void) {
  long want = getppid();
  double pair[BATCHES];
  for (int b = 0; b < BATCHES; b++) {
    double t0 = now_ns();
    pair[b] = now_ns() - t0;
  }
  qsort(pair, BATCHES, sizeof pair[0], cmp);
  clock_cost = pair[BATCHES / 2];
  entry = (long)getauxval(AT_SYSINFO);
  /* Warm up: the first batches after start-up run at a lower clock. */
  shape_int80(want);
  printf("witness.int80 %.2f\n", shape_int80(want));
  if (entry)
    printf("witness.vsyscall %.2f\n", shape_vsyscall(want));
  else
    fprintf(stderr, "no AT_SYSINFO: __kernel_vsyscall not measured\n");
  printf("witness.libc %.2f\n", shape_libc(want));
  parent = want;
  printf("witness.cpuid %.2f\n", shape_cpuid(want));
  return 0;
}
