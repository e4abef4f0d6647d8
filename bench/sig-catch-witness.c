/* Why lmbench's `lat_sig catch` reads below yamba's `signal.self` (the
 * list's "lat_sig catch (ref)" row, 1.23 on an AMD EPYC Zen 4 guest).
 *
 *   gcc -O2 -o /tmp/sig-catch-witness bench/sig-catch-witness.c
 *   taskset -c 1 /tmp/sig-catch-witness
 *
 * lmbench times kill(me, SIGUSR1) with a handler installed, then kill(me,
 * 0) — a send that delivers nothing — and prints the difference: the
 * catch without the send. yamba's signal.self is the send and the catch.
 * Each row is the median of 25 timings of 20 000 calls, ns per call, the
 * two loops interleaved; the last column is lmbench's figure rebuilt.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CALLS 20000
#define TIMINGS 25

static volatile sig_atomic_t caught;
static void handler(int s) { (void)s; caught++; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median(double *v) { qsort(v, TIMINGS, sizeof *v, cmp); return v[TIMINGS / 2]; }

int main(void) {
  pid_t me = getpid();
  struct sigaction sa = {0};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGUSR1, &sa, 0)) return perror("sigaction"), 1;
  double send[TIMINGS], both[TIMINGS];
  for (int t = 0; t < TIMINGS; t++) {
    double t0 = now();
    for (int i = 0; i < CALLS; i++) kill(me, 0);
    double t1 = now();
    for (int i = 0; i < CALLS; i++) kill(me, SIGUSR1);
    double t2 = now();
    send[t] = (t1 - t0) / CALLS;
    both[t] = (t2 - t1) / CALLS;
  }
  if (caught != (sig_atomic_t)(TIMINGS * CALLS)) return fprintf(stderr, "caught %d signals, sent %d\n", (int)caught, TIMINGS * CALLS), 1;
  double s = median(send), b = median(both);
  printf("kill(me, 0) %.1f ns   kill(me, SIGUSR1) + catch %.1f ns (yamba's signal.self)   difference %.1f ns (lmbench's lat_sig catch)\n", s, b, b - s);
  return 0;
}
