/*
 * main.c - racer: 4 threads malloc and free as fast as they can while main calls exit(0):
 * the process ends with threads in the middle of allocator calls. main waits until each
 * thread has made 200 pairs, leaks one block from racer_leak() and exits 0.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include "../common/sink.h"

#define NTHREADS 4

void racer_churn(atomic_ulong *count);
void racer_leak(void);

static atomic_ulong counts[NTHREADS];

static void *
worker(void *arg)
{
	racer_churn(arg);
	return NULL;
}

int
main(void)
{
	pthread_t th;

	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&th, NULL, worker, &counts[i]) != 0)
			return 1;
	for (int i = 0; i < NTHREADS; i++)
		while (atomic_load(&counts[i]) < 200)
			usleep(1000);
	racer_leak();
	say(1, "racer: done\n");
	exit(0);
}
