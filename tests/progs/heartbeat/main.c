/*
 * main.c - heartbeat: a busy program to attach to again and again.
 * NTHREADS threads loop forever: each fills a malloc'd block with a pattern, checks it and
 * frees it, and every KEEP_EVERY rounds keeps one KEEP_SIZE block from hb_keep(). Any
 * corruption, or a signal it should not get (SIGTRAP, SIGSEGV...), writes "BROKEN" to
 * stdout and exits 99. Every 20 ms main writes the sum of all rounds to the file named by
 * argv[1] (the heartbeat), so a test can see the program keeps running.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "heartbeat.h"

static volatile unsigned long rounds[NTHREADS];

static void
broken(int sig)
{
	static const char msg[] = "BROKEN\n";

	(void)sig;
	write(1, msg, sizeof(msg) - 1);
	_exit(99);
}

static void *
worker(void *arg)
{
	long id = (long)arg;

	for (unsigned long r = 0;; r++) {
		size_t n = 16 + (r * 7 + (unsigned long)id) % 300;
		unsigned char *p = malloc(n);

		if (!p)
			broken(0);
		memset(p, (int)(id + 1), n);
		for (size_t i = 0; i < n; i++)
			if (p[i] != (unsigned char)(id + 1))
				broken(0);
		free(p);
		if (r % KEEP_EVERY == 0 && !hb_keep())
			broken(0);
		rounds[id]++;
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	static const int bad[] = { SIGTRAP, SIGSEGV, SIGBUS, SIGILL, SIGFPE };
	pthread_t t[NTHREADS];

	if (argc < 2)
		return 2;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		signal(bad[i], broken);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (;;) {
		unsigned long sum = 0;
		FILE *f;

		for (int i = 0; i < NTHREADS; i++)
			sum += rounds[i];
		if ((f = fopen(argv[1], "w"))) {
			fprintf(f, "%lu\n", sum);
			fclose(f);
		}
		usleep(20000);
	}
}
