/*
 * main.c - threadchurn: usage `threadchurn HEARTBEAT`. NCREATORS threads each create a
 * short-lived thread, join it, and start again, forever; each short-lived thread allocates
 * and frees a little. New threads are thus created all the time, and by threads other than
 * main. A signal it should never get (SIGTRAP, SIGSEGV...) prints "BROKEN" and exits 99.
 * Every 20 ms main writes the number of threads that have run to the file HEARTBEAT.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "../common/sink.h"

#define NCREATORS 4

static unsigned long done[NCREATORS];

static void
broken(int sig)
{
	(void)sig;
	say(1, "BROKEN\n");
	_exit(99);
}

static void *
short_lived(void *arg)
{
	for (unsigned i = 0; i < 8; i++) {
		void *p = malloc(opaque_size(24 + i));

		sink(p, 24 + i);
		free(p);
	}
	return arg;
}

static void *
creator(void *arg)
{
	long id = (long)arg;

	for (;;) {
		pthread_t t;

		if (pthread_create(&t, NULL, short_lived, NULL) != 0 || pthread_join(t, NULL) != 0)
			broken(0);
		__atomic_add_fetch(&done[id], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	static const int bad[] = { SIGTRAP, SIGSEGV, SIGBUS, SIGILL, SIGFPE };
	pthread_t t;

	if (argc < 2)
		return 2;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		signal(bad[i], broken);
	for (long i = 0; i < NCREATORS; i++)
		if (pthread_create(&t, NULL, creator, (void *)i) != 0)
			return 1;
	for (;;) {
		unsigned long sum = 0;
		FILE *f;

		for (int i = 0; i < NCREATORS; i++)
			sum += __atomic_load_n(&done[i], __ATOMIC_RELAXED);
		if ((f = fopen(argv[1], "w"))) {
			fprintf(f, "%lu\n", sum);
			fclose(f);
		}
		usleep(20000);
	}
}
