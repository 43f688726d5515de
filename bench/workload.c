/* workload.c - deterministic malloc+free workload for the benchmark, called from a 10-deep noinline chain. */
/*
 * usage: workload pairs N [T]     N malloc+free pairs, split over T threads (default 1;
 *                                 T=1 runs in main, so no thread is ever created)
 *                                 and writes "workload: N pairs in NS ns" to stderr, the time
 *                                 from the first pair to the last (a tracer's start-up
 *                                 and tear-down left out)
 *        workload hold M [GATE]   allocates M blocks of 32 bytes and keeps them all; with
 *                                 GATE, creates that file and waits until someone removes
 *                                 it (so a benchmark can read a tracer's memory while M
 *                                 blocks are live), then frees them all
 *
 * Every malloc is called from chain_10(), which is reached through main (or the thread
 * start) and chain_01..chain_09, so a tracer that unwinds sees about a dozen frames.
 * Each chain function does work after its call, and is noinline/noipa, so the compiler
 * can neither inline nor tail-call its way out of the frame.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINL __attribute__((noinline, noipa))
#define MAX_THREADS 256
/* Sizes stay below glibc's tcache limit (1032 bytes) so the untraced loop is the fast path. */
#define HOLD_SIZE 32

enum wl_mode { WL_PAIRS, WL_HOLD };

struct wl_job {
	enum wl_mode mode;
	unsigned long count;	/* pairs for WL_PAIRS, blocks for WL_HOLD */
	unsigned long seed;	/* varies the size sequence between threads */
	const char *gate;	/* WL_HOLD only: file to create and wait on, or NULL */
};

/* Keeps the compiler from proving the block unused and dropping the malloc/free pair. */
static inline void
wl_escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* A fixed pseudo-random size in 16..520 bytes: deterministic, but not one size class. */
static inline size_t
wl_size(unsigned long i)
{
	return 16 + ((((unsigned)i * 2654435761u) >> 24) & 63) * 8;
}

static NOINL unsigned long
wl_pairs(unsigned long n, unsigned long seed)
{
	unsigned long failed = 0;

	for (unsigned long i = 0; i < n; i++) {
		void *p = malloc(wl_size(i + seed));

		wl_escape(p);
		failed += p == NULL;
		free(p);
	}
	return failed;
}

/* Waits, without allocating, until the benchmark removes the gate file. */
static void
wl_gate_wait(const char *gate)
{
	int fd = open(gate, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0) {
		perror(gate);
		exit(2);
	}
	close(fd);
	while (access(gate, F_OK) == 0)
		usleep(2000);
}

static NOINL unsigned long
wl_hold(unsigned long m, const char *gate)
{
	void **v = malloc(m * sizeof(*v));
	unsigned long failed = 0;

	if (!v)
		return m;
	for (unsigned long i = 0; i < m; i++) {
		v[i] = malloc(HOLD_SIZE);
		wl_escape(v[i]);
		failed += v[i] == NULL;
	}
	if (gate)
		wl_gate_wait(gate);
	for (unsigned long i = 0; i < m; i++)
		free(v[i]);
	free(v);
	return failed;
}

/* The chain: each level adds its depth to the result, which is what keeps its frame. */
static NOINL unsigned long
chain_10(const struct wl_job *j)
{
	if (j->mode == WL_HOLD)
		return wl_hold(j->count, j->gate) + 10;
	return wl_pairs(j->count, j->seed) + 10;
}

static NOINL unsigned long chain_09(const struct wl_job *j) { return chain_10(j) + 9; }
static NOINL unsigned long chain_08(const struct wl_job *j) { return chain_09(j) + 8; }
static NOINL unsigned long chain_07(const struct wl_job *j) { return chain_08(j) + 7; }
static NOINL unsigned long chain_06(const struct wl_job *j) { return chain_07(j) + 6; }
static NOINL unsigned long chain_05(const struct wl_job *j) { return chain_06(j) + 5; }
static NOINL unsigned long chain_04(const struct wl_job *j) { return chain_05(j) + 4; }
static NOINL unsigned long chain_03(const struct wl_job *j) { return chain_04(j) + 3; }
static NOINL unsigned long chain_02(const struct wl_job *j) { return chain_03(j) + 2; }
static NOINL unsigned long chain_01(const struct wl_job *j) { return chain_02(j) + 1; }

/* The chain adds 1+2+...+10 = 55 on the way out; anything more is failed allocations. */
#define CHAIN_SUM 55

static void *
wl_thread(void *arg)
{
	struct wl_job *j = arg;

	j->count = chain_01(j) - CHAIN_SUM;	/* reuse count for the number of failures */
	return NULL;
}

static unsigned long
wl_parse(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end) {
		fprintf(stderr, "workload: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

/* Runs n pairs over t threads; returns the number of failed allocations. */
static unsigned long
wl_run_threads(unsigned long n, unsigned long t)
{
	static struct wl_job jobs[MAX_THREADS];
	static pthread_t th[MAX_THREADS];
	unsigned long failed = 0;

	for (unsigned long i = 0; i < t; i++) {
		jobs[i] = (struct wl_job){ WL_PAIRS, n / t + (i < n % t), i * 7919, NULL };
		if (pthread_create(&th[i], NULL, wl_thread, &jobs[i]) != 0) {
			fprintf(stderr, "workload: pthread_create failed\n");
			exit(2);
		}
	}
	for (unsigned long i = 0; i < t; i++) {
		pthread_join(th[i], NULL);
		failed += jobs[i].count;
	}
	return failed;
}

static unsigned long long
wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	unsigned long long t0;
	struct wl_job job = { WL_PAIRS, 0, 0, NULL };
	unsigned long t = 1, failed;

	if (argc < 3 || (strcmp(argv[1], "pairs") && strcmp(argv[1], "hold"))) {
		fprintf(stderr, "usage: workload pairs N [THREADS] | workload hold M [GATEFILE]\n");
		return 2;
	}
	job.count = wl_parse(argv[2], "count");
	if (!strcmp(argv[1], "hold")) {
		job.mode = WL_HOLD;
		job.gate = argc > 3 ? argv[3] : NULL;
	} else if (argc > 3) {
		t = wl_parse(argv[3], "thread count");
		if (t < 1 || t > MAX_THREADS) {
			fprintf(stderr, "workload: threads must be 1..%d\n", MAX_THREADS);
			return 2;
		}
	}
	t0 = wl_now_ns();
	if (t == 1)
		failed = chain_01(&job) - CHAIN_SUM;
	else
		failed = wl_run_threads(job.count, t);
	if (job.mode == WL_PAIRS)	/* stderr is unbuffered: this allocates nothing */
		fprintf(stderr, "workload: %lu pairs in %llu ns\n", job.count, wl_now_ns() - t0);
	if (failed) {
		fprintf(stderr, "workload: %lu allocations failed\n", failed);
		return 1;
	}
	return 0;
}
