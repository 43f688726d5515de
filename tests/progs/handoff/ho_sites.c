/* ho_sites.c - handoff's allocation sites: ho_give (main's block), ho_take (the worker's), ho_big (1 MiB). */
#include <stdlib.h>
#include "handoff.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
ho_give(void)
{
	void *p = malloc(opaque_size(40)); /* SITE:ho_give */
	sink(p, 40);
	return p;
}

__attribute__((noinline, noipa)) void *
ho_take(void)
{
	void *p = malloc(opaque_size(40)); /* SITE:ho_take */
	sink(p, 40);
	return p;
}

__attribute__((noinline, noipa)) void *
ho_big(void)
{
	void *p = malloc(opaque_size(1 << 20)); /* SITE:ho_big */
	sink(p, 1 << 20);
	return p;
}
