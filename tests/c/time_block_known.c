/*
 * Ground truth for TIME_BLOCK (driven by crates/yamba-core/tests/time_block.rs).
 *
 * usage: time_block_known SPIN_NS SPINS THREADS PER_THREAD
 *
 * - the "spin" site busy-waits SPIN_NS nanoseconds of CLOCK_MONOTONIC,
 *   SPINS times: its count must be exactly SPINS, and its total in counter
 *   ticks what the spins took by CLOCK_MONOTONIC at the counter's rate
 *   (measured by the test against CLOCK_MONOTONIC, not by the counter under
 *   test), written to stderr as `spun_ns=S` (an interruption lengthens a
 *   spin past SPIN_NS: both clocks see it);
 * - the "threads" site runs PER_THREAD times in each of THREADS threads at
 *   once: its count must be exactly THREADS * PER_THREAD;
 * - the "other" site lives in another translation unit (time_block_other.c):
 *   it must show up in the same report, proving the state is shared;
 * - then the cost of an empty TIME_BLOCK, by the BASE method (minimum and
 *   median of an outer timestamp pair around it, minus the minimum of an
 *   empty outer pair), goes to stderr as `overhead_ticks min=M median=D`.
 *
 * Reports go to stdout at exit only (interval 0), unless YAMBA_TIME_BLOCK_INTERVAL
 * is set (then the environment decides, as in any program).
 */
#include <yamba/time_block.h>
#include <pthread.h>

void other_site(int n);

static uint64_t spin_ns;

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What the spins took by CLOCK_MONOTONIC, interruptions included. */
static uint64_t spun_ns;

static void spin(void)
{
	uint64_t t0 = monotonic_ns(), t;
	while ((t = monotonic_ns()) - t0 < spin_ns)
		;
	spun_ns += t - t0;
}

static long per_thread;
static volatile uint64_t sink;

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < per_thread; i++) {
		TIME_BLOCK(sink++;) /* SITE:threads */
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

#define OVERHEAD_N 20000
static uint64_t with_block[OVERHEAD_N], empty_pair[OVERHEAD_N];

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s SPIN_NS SPINS THREADS PER_THREAD\n", argv[0]);
		return 2;
	}
	spin_ns = strtoull(argv[1], NULL, 10);
	long spins = atol(argv[2]);
	int threads = atoi(argv[3]);
	per_thread = atol(argv[4]);
	if (!getenv("YAMBA_TIME_BLOCK_INTERVAL"))
		yamba_time_block_set_interval(0);

	for (long i = 0; i < spins; i++) {
		TIME_BLOCK(spin();) /* SITE:spin */
	}

	pthread_t tid[64];
	if (threads > 64)
		threads = 64;
	for (int i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);

	other_site(7);
	fprintf(stderr, "spun_ns=%llu\n", (unsigned long long)spun_ns);

	for (int i = 0; i < OVERHEAD_N; i++) {
		uint64_t t0 = yamba_tb_start();
		uint64_t t1 = yamba_tb_stop();
		empty_pair[i] = t1 - t0;
	}
	for (int i = 0; i < OVERHEAD_N; i++) {
		uint64_t t0 = yamba_tb_start();
		TIME_BLOCK(); /* SITE:empty */
		uint64_t t1 = yamba_tb_stop();
		with_block[i] = t1 - t0;
	}
	qsort(empty_pair, OVERHEAD_N, sizeof empty_pair[0], cmp_u64);
	qsort(with_block, OVERHEAD_N, sizeof with_block[0], cmp_u64);
	fprintf(stderr, "overhead_ticks min=%llu median=%llu base=%llu\n",
		(unsigned long long)(with_block[0] - empty_pair[0]),
		(unsigned long long)(with_block[OVERHEAD_N / 2] - empty_pair[0]),
		(unsigned long long)empty_pair[0]);
	return 0;
}
