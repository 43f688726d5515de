/*
 * main.c - fastleak: a program that allocates and keeps blocks as fast as it can, for a tracer
 * whose own memory grows with the live blocks (fatal.t runs jmptrace out of memory on it).
 * NTHREADS threads each malloc a block, fill it with a pattern, link it to the previous one and
 * never free it; every 256 rounds they check their last 64 blocks. A corruption, or a signal it
 * should not get (SIGTRAP, SIGSEGV...), writes "BROKEN" to stdout and exits 99. Every 20 ms
 * main writes the sum of all rounds to the file named by argv[1] (the heartbeat).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHREADS 4
#define CHECK_EVERY 256
#define CHECK_LAST 64

struct block {
	struct block *prev;
	size_t len;
	unsigned char fill[];
};

static volatile unsigned long rounds[NTHREADS];

static void
broken(int sig)
{
	static const char msg[] = "BROKEN\n";

	(void)sig;
	write(1, msg, sizeof(msg) - 1);
	_exit(99);
}

static void
check(const struct block *b, unsigned char v)
{
	for (int k = 0; b && k < CHECK_LAST; k++, b = b->prev)
		for (size_t i = 0; i < b->len; i++)
			if (b->fill[i] != v)
				broken(0);
}

static void *
worker(void *arg)
{
	long id = (long)arg;
	unsigned char v = (unsigned char)(0x40 + id);
	struct block *last = NULL;

	for (unsigned long r = 0;; r++) {
		size_t len = 8 + (r * 13 + (unsigned long)id) % 40;
		struct block *b = malloc(sizeof(*b) + len);

		if (!b)
			broken(0);
		b->prev = last;
		b->len = len;
		memset(b->fill, v, len);
		last = b;
		if (r % CHECK_EVERY == 0)
			check(last, v);
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
