/*
 * main.c - dlchurn: usage `dlchurn K D [exec]`. DC_THREADS threads start together with
 * main (a barrier); each makes K malloc+free pairs in dc_churn(), DC_DEPTH frames deep (dc_deep.c), and
 * leaks one block of DC_LEAK_SIZE bytes from dc_leak(). Meanwhile main makes D rounds of
 * dlopen (RTLD_NOW) and dlclose of libraries (libdcnarrow1.so and libdcnarrow2.so, or
 * libdcwide.so, found through RUNPATH=$ORIGIN), so that the set of loaded modules changes
 * in every round while threads allocate (dl_round). Then it joins them, writes
 * "dlchurn: done" and exits 0; exits 1 when a library cannot be loaded.
 * The static builds (-DDLCHURN_STATIC) skip the dlopen rounds.
 * With `exec` the threads churn until killed; main goes on with its rounds until they have
 * made K pairs in all, then execs this program again, right after a dlopen, as
 * `dlchurn execd`, which writes "dlchurn: exec'd" and exits 0.
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
		dc_deep0(k_pairs);
	while (exec_mode);
	dc_leak(tid); /* CALL:dc_leak */
	return NULL;
}

/*
 * Round r of loading and unloading libraries, in turns: the narrow ones in one order, in the
 * other (each takes the place where the other was mapped), then the wide one, which covers
 * where both were, and both of which cover it in the next round. Every round thus replaces
 * modules, and their number goes down and up, below the libraries loaded at the start
 * (mapped above). With keep the libraries stay loaded. Returns -1 when one cannot be loaded.
 */
static int
dl_round(unsigned long r, int keep)
{
#ifdef DLCHURN_STATIC
	(void)r;
	(void)keep;
	usleep(1000);
#else
	static const char *const sets[3][2] = {
		{ "libdcnarrow1.so", "libdcnarrow2.so" },
		{ "libdcnarrow2.so", "libdcnarrow1.so" },
		{ "libdcwide.so", NULL },
	};
	const char *const *set = sets[r % 3];
	int n = set[1] ? 2 : 1;
	void *h[2];

	for (int i = 0; i < n; i++) {
		h[i] = dlopen(set[i], RTLD_NOW);
		if (!h[i]) {
			say(2, dlerror());
			say(2, "\n");
			return -1;
		}
	}
	while (!keep && n-- > 0)
		dlclose(h[n]);
#endif
	return 0;
}

/*
 * Once the threads have made K pairs in all, replaces the process with `dlchurn execd`:
 * right after a dlopen, while the unwinds of the threads' allocations start over.
 */
static int
exec_self(const char *argv0, unsigned long r)
{
	char *const argv[] = { (char *)argv0, (char *)"execd", NULL };

	while (__atomic_load_n(&dc_progress, __ATOMIC_RELAXED) < k_pairs)
		if (dl_round(r++, 0) != 0)
			return 1;
	if (dl_round(r, 1) != 0)
		return 1;
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
	for (unsigned long r = 0; r < d; r++)
		if (dl_round(r, 0) != 0)
			return 1;
	if (exec_mode)
		return exec_self(argv[0], d);
	for (int i = 0; i < DC_THREADS; i++)
		pthread_join(th[i], NULL);
	say(1, "dlchurn: done\n");
	return 0;
}
