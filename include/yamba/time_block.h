/*
 * yamba/time_block.h -- the TIME_BLOCK macro, header only.
 *
 * Wrap a block of code to learn how often it runs and how many cycles it
 * takes (after Minix's <timers.h>):
 *
 *     #include <yamba/time_block.h>
 *     TIME_BLOCK(assert(ptr);)
 *     TIME_BLOCK({ int a, b; work(&a, &b); })     commas are fine
 *
 * Per call site it counts executions and counter ticks. Periodically, and
 * once more at exit, it prints one line per site that ran since the last
 * report, in the Minix format:
 *
 *     file:line,executions,mean cycles per execution,total cycles,percentage of real time spent there
 *     /usr/src/lib/libsys/asynsend.c:136,2477,427,1058031,0.0002%
 *
 * Each report covers the interval since the previous one (counters are reset
 * when printed), so the lines of several reports add up: `yamba blocks`
 * (or the awk pipeline of the Minix page) totals them per site. The
 * percentage is the site's ticks over the interval's wall-clock ticks; it is
 * wall time, so blocked time (waiting for I/O) counts, and nested or
 * concurrent sites can add up to more than 100%.
 *
 * Counter: x86-64 `lfence; rdtsc` ... `rdtscp; lfence` (the invariant TSC:
 * reference cycles at a constant rate, not core clock cycles); aarch64 the
 * virtual counter CNTVCT_EL0 (ticks at CNTFRQ, often 24-100 MHz); elsewhere
 * clock_gettime(CLOCK_MONOTONIC) in nanoseconds. "cycles" means these ticks.
 *
 * Configuration (environment, read once at the first report check, or the
 * API, which wins when called):
 *   YAMBA_TIME_BLOCK_INTERVAL=S   seconds between reports; 0 = only at exit
 *                                 (default 10)
 *   YAMBA_TIME_BLOCK_FD=N         file descriptor to write to (default 1)
 *   yamba_time_block_set_interval(double seconds);
 *   yamba_time_block_set_fd(int fd);
 *   yamba_time_block_report();    print now (and reset the counters)
 *
 * Thread safety: counters are updated with relaxed atomic adds; a site
 * registers itself (one compare-and-swap into a lock-free list) the first
 * time it runs; one thread at a time prints. A report taken while another
 * thread is inside a block may attribute that execution's ticks to the next
 * report: totals stay exact, one line's mean may be off by one execution.
 *
 * Cost: a site that never runs costs nothing but its static counters (no
 * constructor, no registration). A site that runs costs two ordered counter
 * reads, two atomic adds and one well-predicted compare. Measured on the
 * reference machine (AMD EPYC, 2-vCPU Firecracker VM, TSC at ~2.6 GHz,
 * gcc -O2) with the BASE method of yamba's core (an outer timestamp pair
 * around an empty TIME_BLOCK, minus the minimum of an empty outer pair):
 * 130 TSC ticks (~50 ns) minimum, 130-156 median, per execution of an empty
 * block, single-threaded. Of that, the site itself sees ~55 ticks (its mean
 * for an empty block): subtract that bias when timing very short blocks.
 * Threads hammering one site at once pay for the shared cache line
 * (~290 ticks per execution with 2 threads on 2 vCPUs).
 *
 * One copy of the shared state per program: the globals and functions below
 * are weak definitions, so every translation unit that includes this header
 * shares them (GCC and Clang on ELF). No build step, no library to link.
 */
#ifndef YAMBA_TIME_BLOCK_H
#define YAMBA_TIME_BLOCK_H

/* clock_gettime under strict -std=c99/c11: effective when this header is
 * included first (else define _POSIX_C_SOURCE 200809L yourself). */
#if !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) && !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define YAMBA_TB_WEAK __attribute__((weak))
#define YAMBA_TB_INLINE static inline __attribute__((always_inline))

/* One call site: its counters and its link in the list of registered sites. */
struct yamba_tb_site {
	const char *file;
	int line;
	int registered;            /* 0 never ran, 1 registering, 2 in the list */
	uint64_t executions;       /* since the last report */
	uint64_t ticks;            /* since the last report */
	struct yamba_tb_site *next;
};

/* Process-wide state, shared by every translation unit (weak definition). */
struct yamba_tb_state {
	struct yamba_tb_site *sites;   /* lock-free push-only list */
	uint64_t start_ticks;          /* counter at the first site's first run */
	uint64_t last_report_ticks;    /* counter at the last report */
	uint64_t next_check_ticks;     /* when record() next looks at the clock */
	uint64_t ref_ticks;            /* (ticks, ns) reference to convert intervals */
	uint64_t ref_ns;
	int64_t interval_us;           /* < 0: not configured yet */
	int fd;                        /* < 0: not configured yet */
	int reporting;                 /* one reporter at a time */
	int exit_hooked;
};

YAMBA_TB_WEAK struct yamba_tb_state yamba_tb_state_ = {
	0, 0, 0, 0, 0, 0, -1, -1, 0, 0
};

/* ---- the counter (platform adapter) ---------------------------------- */

YAMBA_TB_INLINE uint64_t yamba_tb_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
YAMBA_TB_INLINE uint64_t yamba_tb_start(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
	return ((uint64_t)hi << 32) | lo;
}
YAMBA_TB_INLINE uint64_t yamba_tb_stop(void)
{
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
	return ((uint64_t)hi << 32) | lo;
}
#define YAMBA_TB_COUNTER "tsc"
#elif defined(__aarch64__)
YAMBA_TB_INLINE uint64_t yamba_tb_start(void)
{
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v)::"memory");
	return v;
}
#define yamba_tb_stop yamba_tb_start
#define YAMBA_TB_COUNTER "cntvct"
#else
#define yamba_tb_start yamba_tb_mono_ns
#define yamba_tb_stop yamba_tb_mono_ns
#define YAMBA_TB_COUNTER "clock_gettime"
#endif

/* ---- configuration ---------------------------------------------------- */

YAMBA_TB_WEAK void yamba_time_block_set_interval(double seconds)
{
	__atomic_store_n(&yamba_tb_state_.interval_us,
		(int64_t)(seconds > 0 ? seconds * 1e6 : 0), __ATOMIC_RELAXED);
}

YAMBA_TB_WEAK void yamba_time_block_set_fd(int fd)
{
	__atomic_store_n(&yamba_tb_state_.fd, fd, __ATOMIC_RELAXED);
}

static inline void yamba_tb_configure(void)
{
	struct yamba_tb_state *s = &yamba_tb_state_;
	if (__atomic_load_n(&s->interval_us, __ATOMIC_RELAXED) < 0) {
		const char *e = getenv("YAMBA_TIME_BLOCK_INTERVAL");
		double v = e ? strtod(e, NULL) : 10.0;
		int64_t unset = -1;
		__atomic_compare_exchange_n(&s->interval_us, &unset, (int64_t)(v > 0 ? v * 1e6 : 0), 0,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	if (__atomic_load_n(&s->fd, __ATOMIC_RELAXED) < 0) {
		const char *e = getenv("YAMBA_TIME_BLOCK_FD");
		int v = e ? atoi(e) : 1;
		int unset = -1;
		__atomic_compare_exchange_n(&s->fd, &unset, v < 0 ? 1 : v, 0,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
}

/* ---- reporting -------------------------------------------------------- */

static inline void yamba_tb_write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

/* Prints every site that ran since the last report and resets its counters. */
YAMBA_TB_WEAK void yamba_time_block_report(void)
{
	struct yamba_tb_state *s = &yamba_tb_state_;
	int idle = 0;
	if (!__atomic_compare_exchange_n(&s->reporting, &idle, 1, 0,
			__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	yamba_tb_configure();
	uint64_t now = yamba_tb_stop();
	uint64_t since = __atomic_load_n(&s->last_report_ticks, __ATOMIC_RELAXED);
	if (since == 0)
		since = __atomic_load_n(&s->start_ticks, __ATOMIC_RELAXED);
	double real = now > since ? (double)(now - since) : 1.0;
	char buf[8192];
	size_t used = 0;
	int fd = __atomic_load_n(&s->fd, __ATOMIC_RELAXED);
	struct yamba_tb_site *site;
	for (site = __atomic_load_n(&s->sites, __ATOMIC_ACQUIRE); site; site = site->next) {
		uint64_t n = __atomic_exchange_n(&site->executions, 0, __ATOMIC_RELAXED);
		uint64_t t = __atomic_exchange_n(&site->ticks, 0, __ATOMIC_RELAXED);
		if (n == 0)
			continue;
		if (used > sizeof buf - 600) {
			yamba_tb_write_all(fd, buf, used);
			used = 0;
		}
		int w = snprintf(buf + used, sizeof buf - used, "%s:%d,%llu,%llu,%llu,%.4f%%\n",
			site->file, site->line, (unsigned long long)n,
			(unsigned long long)(t / n), (unsigned long long)t, 100.0 * (double)t / real);
		if (w > 0)
			used += (size_t)w < sizeof buf - used ? (size_t)w : sizeof buf - used - 1;
	}
	yamba_tb_write_all(fd, buf, used);
	__atomic_store_n(&s->last_report_ticks, now, __ATOMIC_RELAXED);
	__atomic_store_n(&s->reporting, 0, __ATOMIC_RELEASE);
}

static void yamba_tb_at_exit(void)
{
	yamba_time_block_report();
}

/* Slow path of record(): is a periodic report due? Converts the interval to
 * ticks with a (ticks, CLOCK_MONOTONIC) reference taken at the first run. */
YAMBA_TB_WEAK void yamba_tb_check(uint64_t now)
{
	struct yamba_tb_state *s = &yamba_tb_state_;
	yamba_tb_configure();
	double interval = (double)__atomic_load_n(&s->interval_us, __ATOMIC_RELAXED) / 1e6;
	uint64_t ns = yamba_tb_mono_ns();
	uint64_t ref_t = __atomic_load_n(&s->ref_ticks, __ATOMIC_RELAXED);
	uint64_t ref_ns = __atomic_load_n(&s->ref_ns, __ATOMIC_RELAXED);
	/* ticks per ns, guessed as 1 until 1 ms has passed since the reference */
	double rate = (ns > ref_ns + 1000000 && now > ref_t)
		? (double)(now - ref_t) / (double)(ns - ref_ns) : 1.0;
	double wait_ns = interval > 0 ? interval * 1e9 / 4 : 1e9;
	if (wait_ns < 1e6)
		wait_ns = 1e6;
	__atomic_store_n(&s->next_check_ticks, now + (uint64_t)(wait_ns * rate), __ATOMIC_RELAXED);
	if (interval <= 0)
		return;
	uint64_t last = __atomic_load_n(&s->last_report_ticks, __ATOMIC_RELAXED);
	if (last == 0)
		last = __atomic_load_n(&s->start_ticks, __ATOMIC_RELAXED);
	if ((double)(now - last) >= interval * 1e9 * rate)
		yamba_time_block_report();
}

/* Registers a site the first time it runs (and, for the first site of the
 * program, starts the clock and hooks the report at exit). */
YAMBA_TB_WEAK void yamba_tb_register(struct yamba_tb_site *site, uint64_t began)
{
	struct yamba_tb_state *s = &yamba_tb_state_;
	int fresh = 0;
	if (!__atomic_compare_exchange_n(&site->registered, &fresh, 1, 0,
			__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	int hooked = 0;
	if (__atomic_compare_exchange_n(&s->exit_hooked, &hooked, 1, 0,
			__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		__atomic_store_n(&s->ref_ns, yamba_tb_mono_ns(), __ATOMIC_RELAXED);
		uint64_t t = yamba_tb_start();
		__atomic_store_n(&s->ref_ticks, t, __ATOMIC_RELAXED);
		/* real time starts with the first timed block, not after it */
		__atomic_store_n(&s->start_ticks, began, __ATOMIC_RELAXED);
		__atomic_store_n(&s->next_check_ticks, t + 1000000, __ATOMIC_RELAXED);
		atexit(yamba_tb_at_exit);
	}
	struct yamba_tb_site *head = __atomic_load_n(&s->sites, __ATOMIC_RELAXED);
	do {
		site->next = head;
	} while (!__atomic_compare_exchange_n(&s->sites, &head, site, 1,
			__ATOMIC_RELEASE, __ATOMIC_RELAXED));
	__atomic_store_n(&site->registered, 2, __ATOMIC_RELEASE);
}

/* Fast path: count one execution of `ticks` ticks ending at `now`. */
YAMBA_TB_INLINE void yamba_tb_record(struct yamba_tb_site *site, uint64_t now, uint64_t ticks)
{
	if (__builtin_expect(__atomic_load_n(&site->registered, __ATOMIC_RELAXED) != 2, 0))
		yamba_tb_register(site, now - ticks);
	__atomic_fetch_add(&site->executions, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&site->ticks, ticks, __ATOMIC_RELAXED);
	if (__builtin_expect(now >= __atomic_load_n(&yamba_tb_state_.next_check_ticks,
			__ATOMIC_RELAXED), 0))
		yamba_tb_check(now);
}

/* TIME_BLOCK(code...): run `code`, count it at this file and line. A
 * braced block, so `TIME_BLOCK(assert(ptr);)` needs no semicolon after it
 * (as in Minix); with one, brace it before an `else`. */
#define TIME_BLOCK(...) {                                                      \
	static struct yamba_tb_site yamba_tb_site_ = { __FILE__, __LINE__, 0, 0, 0, 0 }; \
	uint64_t yamba_tb_t0_ = yamba_tb_start();                              \
	{ __VA_ARGS__ }                                                        \
	uint64_t yamba_tb_t1_ = yamba_tb_stop();                               \
	yamba_tb_record(&yamba_tb_site_, yamba_tb_t1_, yamba_tb_t1_ - yamba_tb_t0_); \
}

#ifdef __cplusplus
}
#endif

#endif /* YAMBA_TIME_BLOCK_H */
