/*
 * race.c - sigtrap race S: SIGTRAPs sent to a thread that is in the middle of our breakpoints.
 * A second thread mallocs 24-byte blocks in race_alloc() and keeps them, without end; the
 * main thread sends it SIGTRAP with pthread_kill until the handler has counted S, one at a
 * time: the next once the last was counted, or again when it was not within 300 ms (a
 * SIGTRAP sent while another is pending is merged with it: under a tracer, with the one an
 * int3 breakpoint raises). Under a tracer the thread spends most of its time stopped at
 * allocator breakpoints, so many of those signals arrive there. Writes
 * "sigtrap: race handler COUNT\n" to stdout, and the blocks kept and signals sent again to
 * stderr; exits 0, or 1 when a signal was not counted after 100 tries.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../common/sink.h"

static volatile sig_atomic_t n_race;
static volatile int stop;
static unsigned long kept;

static void
on_race(int sig)
{
	(void)sig;
	n_race++;
}

__attribute__((noinline)) static void
race_alloc(void)
{
	void *p = malloc(opaque_size(24));	/* SITE:race_alloc */

	sink(p, 24);
	kept++;
}

static void *
race_loop(void *arg)
{
	(void)arg;
	while (!stop)
		race_alloc();
	return NULL;
}

/* Waits until the handler counted `want` signals; 0, or -1 after 300 ms. */
static int
race_wait(unsigned long want)
{
	struct timespec ts = { 0, 100 * 1000 };

	for (int i = 0; i < 3000; i++) {
		if ((unsigned long)n_race >= want)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

int
race_main(unsigned long s)
{
	struct sigaction sa;
	pthread_t th;
	unsigned long again = 0;
	int lost = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_race;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, NULL);
	pthread_create(&th, NULL, race_loop, NULL);
	for (unsigned long i = 1; i <= s && !lost; i++) {
		int tries = 0;

		do
			pthread_kill(th, SIGTRAP);
		while (race_wait(i) < 0 && ++tries < 100);
		again += tries;
		lost = tries == 100;
	}
	stop = 1;
	pthread_join(th, NULL);
	say(1, "sigtrap: race handler ");
	say_num(1, (unsigned long)n_race);
	say(1, "\n");
	say(2, "kept ");
	say_num(2, kept);
	say(2, " again ");
	say_num(2, again);
	say(2, "\n");
	return lost;
}
