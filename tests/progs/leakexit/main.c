/* leakexit - threads busy in malloc/free while main leaks one block and calls _exit: the --leak-check at _exit must run although the hit arrives while jmptrace stops the process for another thread. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../common/sink.h"

#define LOOPERS 3

static void *
looper(void *arg)
{
	(void)arg;
	for (;;) {
		void *p = malloc(24);	/* jt-site: looper */
		sink(p, 24);
		free(p);
	}
	return NULL;
}

/* The one lost block: its only pointer is dropped before _exit. */
static __attribute__((noinline)) void
lose(void)
{
	char *p = opaque_ptr(malloc(opaque_size(4242)));	/* jt-site: lost */

	((volatile char *)p)[0] = 1;
}

/* argv[1]: how many looping threads (default LOOPERS). */
int
main(int argc, char **argv)
{
	unsigned long loopers = arg_num(argc > 1 ? argv[1] : NULL, LOOPERS);
	pthread_t t;
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	for (unsigned long i = 0; i < loopers; i++)
		pthread_create(&t, NULL, looper, NULL);
	lose();
	/* Kept (in main's TLS slot of sink) after the lost block: glibc's top chunk must not border it. */
	sink(malloc(opaque_size(100)), 100);	/* jt-site: kept */
	scrub();
	nanosleep(&ts, NULL);
	_exit(0);
}
