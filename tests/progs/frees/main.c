/*
 * main.c - frees: usage `frees [K [E]]` (defaults 100, 0). NTHREADS threads (64 KiB
 * stacks, so that glibc's stack cache never frees one) each make (i + 1) * K malloc+free
 * pairs in fr_churn() and i + 1 calls of free(NULL), so they end one after the other;
 * they return, except that with E=1 the odd ones call pthread_exit (whose unwinder
 * allocates and frees on its own: in a dynamic program it loads libgcc_s). The last is
 * detached: main waits only for its semaphore, posted after its last free, and exits
 * while that thread may still be ending. main makes K pairs itself. Every block is freed: the program makes exactly
 * K * (1 + NTHREADS * (NTHREADS + 1) / 2) mallocs and as many frees, plus
 * NTHREADS * (NTHREADS + 1) / 2 calls of free(NULL). At each thread's end glibc frees
 * its tcache, which holds blocks of NSIZES sizes: none of that is the program's.
 * Output is written with write(2), so stdio allocates nothing. Exits 0.
 */
#include <pthread.h>
#include <semaphore.h>
#include "frees.h"
#include "../common/sink.h"

static unsigned long k_pairs, use_exit;
static sem_t detached_done;

static void *
worker(void *arg)
{
	long i = (long)arg;

	fr_churn((i + 1) * k_pairs);
	fr_free_null(i + 1);
	if (i == NTHREADS - 1) {
		sem_post(&detached_done);
		return NULL;
	}
	if (use_exit && i % 2)
		pthread_exit(NULL);
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t th[NTHREADS];
	pthread_attr_t attr;

	k_pairs = arg_num(argc > 1 ? argv[1] : NULL, 100);
	use_exit = arg_num(argc > 2 ? argv[2] : NULL, 0);
	sem_init(&detached_done, 0, 0);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < NTHREADS; i++) {
		pthread_attr_setdetachstate(&attr, i == NTHREADS - 1 ? PTHREAD_CREATE_DETACHED
								     : PTHREAD_CREATE_JOINABLE);
		if (pthread_create(&th[i], &attr, worker, (void *)i) != 0)
			return 1;
	}
	fr_churn(k_pairs);
	for (int i = 0; i < NTHREADS - 1; i++)
		pthread_join(th[i], NULL);
	while (sem_wait(&detached_done) != 0)
		;
	say(1, "frees: done\n");
	return 0;
}
