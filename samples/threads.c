/*
 * threads.c - four worker threads with a leak on an error path, to try jmptrace on.
 *
 *   make threads && ../jmptrace -- ./threads
 *
 * Each worker handles 1000 jobs. handle_job() allocates a buffer for every job and frees
 * it, except when the job "fails" (every 10th job): then it returns early and the buffer
 * leaks. jmptrace follows every thread: the report shows 4 x 100 = 400 blocks of 256
 * bytes live at the malloc() in handle_job().
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NWORKERS 4
#define NJOBS 1000

/* Returns 0 on success, -1 when the job fails. */
static int
handle_job(int id)
{
	char *buf = malloc(256);	/* LEAK: not freed when the job fails */

	if (!buf)
		return -1;
	snprintf(buf, 256, "job %d", id);
	if (id % 10 == 0)
		return -1;	/* the bug: forgets free(buf) */
	free(buf);
	return 0;
}

static void *
worker(void *arg)
{
	long failed = 0;

	(void)arg;
	for (int i = 0; i < NJOBS; i++)
		if (handle_job(i) != 0)
			failed++;
	return (void *)failed;
}

int
main(void)
{
	pthread_t th[NWORKERS];
	long failed = 0;

	for (int i = 0; i < NWORKERS; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < NWORKERS; i++) {
		void *ret;
		pthread_join(th[i], &ret);
		failed += (long)ret;
	}
	printf("%d jobs, %ld failed\n", NWORKERS * NJOBS, failed);
	return 0;
}
