/*
 * main.c - dlchurn: usage `dlchurn K D [exec]`. DC_THREADS threads start together with
 * main (a barrier); each makes K malloc+free pairs in dc_churn(), DC_DEPTH frames deep, and
 * leaks one block of DC_LEAK_SIZE bytes from dc_leak(). Meanwhile main makes D rounds of
 * dlopen (RTLD_NOW) of libjtplugin.so and libjtsolib.so and dlclose of both (found through
 * RUNPATH=$ORIGIN), so that the set of loaded modules changes while threads allocate. Then it
 * joins them, writes "dlchurn: done" and exits 0; exits 1 when a library cannot be loaded.
 * The static builds (-DDLCHURN_STATIC) skip the dlopen rounds.
 * With `exec` the threads churn until killed, and once they have made K pairs in all, main
 * execs this program again as `dlchurn execd`, which writes "dlchurn: exec'd" and exits 0.
 * Output is written with write(2), so stdio allocates nothing.
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "dlchurn.h"
#include "../common/sink.h"
#ifndef DLCHURN_STATIC
#include <dlfcn.h>
#endif

static unsigned long k_pairs;
static int exec_mode;
static pthread_barrier_t start;

static void *
worker(void *arg)
{
	int tid = (int)(long)arg;

	pthread_barrier_wait(&start);
	do
		dc_deep(DC_DEPTH, k_pairs);
	while (exec_mode);
	dc_leak(tid); /* SITE:dc_leak_call */
	return NULL;
}

/* D rounds of loading and unloading both libraries; returns -1 when one cannot be loaded. */
static int
dl_rounds(unsigned long d)
{
#ifdef DLCHURN_STATIC
	(void)d;
#else
	static const char *const libs[] = { "libjtplugin.so", "libjtsolib.so" };
	void *h[2];

	for (unsigned long r = 0; r < d; r++) {
		for (int i = 0; i < 2; i++) {
			h[i] = dlopen(libs[i], RTLD_NOW);
			if (!h[i]) {
				say(2, dlerror());
				say(2, "\n");
				return -1;
			}
		}
		for (int i = 1; i >= 0; i--)
			dlclose(h[i]);
	}
#endif
	return 0;
}

/* Once the threads have made K pairs in all, replaces the process with `dlchurn execd`. */
static int
exec_self(const char *argv0)
{
	char *const argv[] = { (char *)argv0, (char *)"execd", NULL };

	while (__atomic_load_n(&dc_progress, __ATOMIC_RELAXED) < k_pairs)
		usleep(1000);
	execv("/proc/self/exe", argv);
	say(2, "dlchurn: cannot exec itself\n");
	return 1;
}

int
main(int argc, char **argv)
{
	pthread_t th[DC_THREADS];
	unsigned long d;

	if (argc > 1 && strcmp(argv[1], "execd") == 0) {
		say(1, "dlchurn: exec'd\n");
		return 0;
	}
	k_pairs = arg_num(argc > 1 ? argv[1] : NULL, 1000);
	d = arg_num(argc > 2 ? argv[2] : NULL, 100);
	exec_mode = argc > 3 && strcmp(argv[3], "exec") == 0;
	pthread_barrier_init(&start, NULL, DC_THREADS + 1);
	for (long i = 0; i < DC_THREADS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i) != 0)
			return 1;
	pthread_barrier_wait(&start);
	if (dl_rounds(d) != 0)
		return 1;
	if (exec_mode)
		return exec_self(argv[0]);
	for (int i = 0; i < DC_THREADS; i++)
		pthread_join(th[i], NULL);
	say(1, "dlchurn: done\n");
	return 0;
}
