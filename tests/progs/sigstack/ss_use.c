/*
 * ss_use.c - one call of each allocator during which a SIGUSR1 handler runs, and a round
 * of all three for the timer; main's blocks are freed.
 */
#include <stdlib.h>
#include <string.h>
#include "../common/sink.h"
#include "sigstack.h"

#define SS_CHURN_STUBS 10000

__attribute__((noinline, noipa)) void
ss_use_malloc(void)
{
	void *p;

	ss_kick = SIGUSR1;
	p = malloc(opaque_size(100)); /* SITE:use_malloc */
	sink(p, 1);
	free(p);
}

__attribute__((noinline, noipa)) void
ss_use_calloc(void)
{
	void *p;

	ss_kick = SIGUSR1;
	p = calloc(opaque_size(3), 40); /* SITE:use_calloc */
	sink(p, 1);
	free(p);
}

__attribute__((noinline, noipa)) void
ss_use_realloc(void)
{
	void *p = malloc(opaque_size(8)), *q;

	sink(p, 1);
	ss_kick = SIGUSR1;
	q = realloc(p, opaque_size(200)); /* SITE:use_realloc */
	sink(q, 1);
	free(q);
}

__attribute__((noinline, noipa)) void
ss_use_nested(void)
{
	void *p;

	ss_nest = 1;
	ss_kick = SIGUSR1;
	p = malloc(opaque_size(64)); /* SITE:use_nested */
	sink(p, 1);
	free(p);
}

/*
 * Between the allocator calls, memset through the PLT over and over: the timer lands on
 * the stub's jump then, in most runs of a static executable, whose stubs into the
 * ifunc-chosen memset have no CFI (the unwinder must know the stack is as at an entry).
 */
__attribute__((noinline, noipa)) void
ss_churn(void)
{
	/* In this order the allocator gets every block back, unless a handler took one between. */
	void *q = calloc(opaque_size(2), 24), *p = malloc(opaque_size(32));
	char b[16];

	for (int i = 0; i < SS_CHURN_STUBS; i++)
		memset(b, i, opaque_size(sizeof(b)));
	sink(b, 1);
	p = realloc(p, opaque_size(64));
	sink(p, 1);
	sink(q, 1);
	free(p);
	free(q);
}
