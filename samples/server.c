/*
 * server.c - a long-running "server" whose memory keeps growing, to try jmptrace -p on.
 *
 *   make server && ./server &  then  ../jmptrace -p $!   (Ctrl-C to detach)
 *
 * Four worker threads handle fake requests forever. Each request allocates a buffer and
 * frees it, but the session cache in remember() never evicts anything: every 10th request
 * adds a 256-byte session that stays for good. That is the growth jmptrace points at.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct session {
	struct session *next;
	char data[256 - sizeof(struct session *)];
};

static struct session *cache;
static char *volatile last_request;	/* for a debugger; also keeps the buffer real */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Keeps a session "for later". The bug: nothing ever takes one out. */
static __attribute__((noinline)) void
remember(unsigned long id)
{
	struct session *s = malloc(sizeof(*s));	/* grows forever */

	snprintf(s->data, sizeof(s->data), "session %lu", id);
	pthread_mutex_lock(&cache_lock);
	s->next = cache;
	cache = s;
	pthread_mutex_unlock(&cache_lock);
}

/* Handles one request: a temporary buffer that is freed again (not a leak). */
static __attribute__((noinline)) void
handle(unsigned long id)
{
	char *buf = malloc(1024 + id % 512);

	snprintf(buf, 1024, "GET /item/%lu", id);
	last_request = buf;
	if (id % 10 == 0)
		remember(id);
	last_request = NULL;
	free(buf);
}

static void *
worker(void *arg)
{
	unsigned long id = (unsigned long)arg;

	for (;;) {
		handle(id);
		id += 4;
		usleep(1000);
	}
	return NULL;
}

int
main(void)
{
	pthread_t t[4];

	printf("server: pid %d, 4 workers\n", (int)getpid());
	fflush(stdout);
	for (unsigned long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (;;)
		pause();
}
