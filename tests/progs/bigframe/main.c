/*
 * main.c - bigframe: allocations under frames with big locals, in main's thread and in
 * another: bf_4k, bf_20k and bf_60k each hold a local of that size and call bf_leaf, which
 * leaks one block of 4096, 20480 or 61440 bytes. Usage `bigframe`: prints
 * "bigframe: leaked 6 blocks", exits 0. Every stack must reach main (or, in the thread,
 * bf_thread) whatever the source: a stack copy that ends at a fixed size cuts them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "../common/sink.h"

__attribute__((noinline, noipa)) static void
bf_leaf(size_t n)
{
	void *p = malloc(n); /* SITE:bf_leaf */
	sink(p, n);
}

/* A local of n bytes that the compiler must keep: written, and passed to sink. Its lines are the macro's use. */
#define BF_FRAME(name, n) \
	__attribute__((noinline, noipa)) static void name(void) \
	{ \
		volatile char local[n]; \
		local[0] = 1; \
		local[n - 1] = 2; \
		bf_leaf(n); \
		sink((void *)local, 1); \
	}
BF_FRAME(bf_4k, 4096) /* SITE:bf_4k */
BF_FRAME(bf_20k, 20480) /* SITE:bf_20k */
BF_FRAME(bf_60k, 61440) /* SITE:bf_60k */

__attribute__((noinline, noipa)) static void
bf_all(void)
{
	bf_4k();
	bf_20k();
	bf_60k();
	sink(NULL, 0);	/* not a tail call: bf_all stays on the stack */
}

static void *
bf_thread(void *arg)
{
	(void)arg;
	bf_all();
	return NULL;
}

int
main(void)
{
	pthread_t t;

	bf_all();
	if (pthread_create(&t, NULL, bf_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	printf("bigframe: leaked 6 blocks\n");
	return 0;
}
