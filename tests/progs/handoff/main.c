/*
 * main.c - handoff: a block one thread frees is another thread's next malloc while the
 * freeing thread makes no allocator call, and a thread frees a block and then makes none.
 *
 * handoff [ROUNDS]: ROUNDS rounds (default 200) of: main mallocs 40 bytes (ho_give) and frees
 * them, then the worker mallocs 40 bytes (ho_take), keeps every fourth block (in a global
 * array, live at the exit) and frees the others itself; main goes on once the worker is done.
 * With one arena and no tcache (the tests run it with MALLOC_ARENA_MAX=1 and
 * GLIBC_TUNABLES=glibc.malloc.tcache_count=0) the worker's block is most often main's, and
 * main's next one the worker's. Prints "reused R of N" (the worker's block was main's freed
 * one) and exits 0 with ROUNDS/4 blocks of 40 bytes live from ho_take.
 *
 * handoff idle MS: mallocs 1 MiB (ho_big), sleeps MS ms, frees it, prints "freed", sleeps
 * MS ms more and exits 0 with it freed: a snapshot in the second sleep sees no block live at
 * ho_big.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "handoff.h"
#include "../common/sink.h"

#define ROUNDS_MAX 100000

static int to_worker[2], to_main[2];
static unsigned long rounds, reused;
void *kept[ROUNDS_MAX / 4 + 1];

static void
xfer(int fd, void *buf, size_t n, int out)
{
	ssize_t r = out ? write(fd, buf, n) : read(fd, buf, n);

	if (r != (ssize_t)n)
		_exit(3);
}

static void *
worker(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; i < rounds; i++) {
		uintptr_t freed;
		void *q;
		char c = 1;

		xfer(to_worker[0], &freed, sizeof(freed), 0);
		q = ho_take();
		reused += (uintptr_t)q == freed;
		if (i % 4 == 0)
			kept[i / 4] = q;
		else
			free(q);
		xfer(to_main[1], &c, 1, 1);
	}
	return NULL;
}

static void
nap(unsigned long ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

int
main(int argc, char **argv)
{
	pthread_t th;

	if (argc > 1 && strcmp(argv[1], "idle") == 0) {
		unsigned long ms = arg_num(argc > 2 ? argv[2] : NULL, 1000);
		void *p = ho_big();

		nap(ms);
		free(p);
		say(1, "freed\n");
		nap(ms);
		return 0;
	}
	rounds = arg_num(argc > 1 ? argv[1] : NULL, 200);
	if (rounds > ROUNDS_MAX || pipe(to_worker) != 0 || pipe(to_main) != 0 ||
	    pthread_create(&th, NULL, worker, NULL) != 0)
		return 2;
	for (unsigned long i = 0; i < rounds; i++) {
		void *p = ho_give();
		uintptr_t a = (uintptr_t)p;
		char c;

		free(p);
		xfer(to_worker[1], &a, sizeof(a), 1);
		xfer(to_main[0], &c, 1, 0);
	}
	pthread_join(th, NULL);
	say(1, "reused ");
	say_num(1, reused);
	say(1, " of ");
	say_num(1, rounds);
	say(1, "\n");
	return 0;
}
