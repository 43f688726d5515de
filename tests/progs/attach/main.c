/*
 * main.c - attach: a program to attach to with jmptrace -p.
 * Before the attach: old_leak() mallocs OLD_BLOCKS blocks, NTHREADS threads start and
 * wait, and "ready" is written to stdout. Then main blocks reading one byte from stdin:
 * the test attaches, makes sure jmptrace is ready, and writes that byte. After it, each
 * thread leaks NEW_BLOCKS blocks from new_leak() and main frees the old blocks (frees of
 * blocks jmptrace never saw), writes "done" and exits 0 while the threads still wait.
 * Only write(2) and read(2) are used for I/O, so from the attach on, the program makes
 * exactly NTHREADS * NEW_BLOCKS mallocs and OLD_BLOCKS frees.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "attach.h"
#include "../common/sink.h"

static pthread_barrier_t go, leaked;

static void *
worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&go);
	new_leak();
	pthread_barrier_wait(&leaked);
	for (;;)
		pause();
	return NULL;
}

int
main(void)
{
	pthread_t th;
	char c;

	old_leak();
	pthread_barrier_init(&go, NULL, NTHREADS + 1);
	pthread_barrier_init(&leaked, NULL, NTHREADS + 1);
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&th, NULL, worker, NULL) != 0)
			return 1;
	say(1, "ready\n");
	if (read(0, &c, 1) != 1)
		return 2;
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&leaked);
	old_free();
	say(1, "done\n");
	exit(0);
}
