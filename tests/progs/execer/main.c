/*
 * main.c - execer: usage `execer exec PROGRAM [ARGS...]` or `execer leak`.
 * exec: before_leak() keeps 4 blocks of 100 bytes, before_temp() allocates 300 bytes and
 * frees them, then the program execs PROGRAM with ARGS (argv[0] is PROGRAM): 5 mallocs and
 * 1 free in all, 400 bytes in 4 blocks live when its image ends. leak: after_leak() keeps 6
 * blocks of 40 bytes, "execer: leaked 6 blocks" on stdout, exit status 3. thread: as exec,
 * but from the first of THREADS threads that each malloc and free WORK blocks first (so that
 * jmptrace spreads them over its tracer threads), while main waits: the thread that execs
 * takes over main's tid. again N: 8 threads malloc and free a block every 100 us while main
 * waits 5 ms, then execs itself as `execer again N-1` (the threads go with the exec), for ever
 * in effect: a process that execs all the time, for -p to meet an exec mid-attach. N 0: exit 0.
 * No stdio: the C library allocates nothing of its own.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../common/sink.h"

#define THREADS 4
#define WORK 5000

void before_leak(void);
void before_temp(void);
void after_leak(void);

static char **exec_argv;
static volatile int all_made;	/* an exec while main makes a thread fails its pthread_create */

static void *
churner(void *arg)
{
	for (;;) {
		void *volatile p = malloc(32);

		free(p);
		usleep(100);
	}
	return arg;
}

static int
again(const char *self, long n)
{
	char num[24];
	pthread_t t;

	if (n <= 0)
		return 0;
	for (int i = 0; i < 8; i++)
		if (pthread_create(&t, NULL, churner, NULL) != 0)
			return 1;
	usleep(5000);
	{
		long m = n - 1;
		int i = (int)sizeof(num) - 1;

		num[i] = '\0';
		do
			num[--i] = (char)('0' + m % 10);
		while ((m /= 10) > 0);
		execl("/proc/self/exe", self, "again", num + i, (char *)NULL);
	}
	say(2, "execer: exec failed\n");
	return 127;
}

static void *
worker(void *arg)
{
	for (int i = 0; i < WORK; i++) {
		void *volatile p = malloc(32);

		free(p);
	}
	if (arg) {
		while (!all_made)
			usleep(1000);
		before_leak();
		before_temp();
		execv(exec_argv[0], exec_argv);
		say(2, "execer: exec failed\n");
		_exit(127);
	}
	for (;;)
		pause();
	return NULL;
}

int
main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "thread") == 0) {
		pthread_t t;

		exec_argv = argv + 2;
		for (int i = 0; i < THREADS; i++)
			if (pthread_create(&t, NULL, worker, i == 0 ? (void *)1 : NULL) != 0)
				return 1;
		all_made = 1;
		for (;;)
			pause();
	}
	if (argc > 2 && strcmp(argv[1], "exec") == 0) {
		before_leak(); /* CALL:before_leak */
		before_temp();
		execv(argv[2], argv + 2);
		say(2, "execer: exec failed\n");
		return 127;
	}
	if (argc > 2 && strcmp(argv[1], "again") == 0)
		return again(argv[0], atol(argv[2]));
	if (argc > 1 && strcmp(argv[1], "leak") == 0) {
		after_leak(); /* CALL:after_leak */
		say(1, "execer: leaked 6 blocks\n");
		return 3;
	}
	say(2, "usage: execer exec|thread PROGRAM [ARGS...] | execer leak | execer again N\n");
	return 2;
}
