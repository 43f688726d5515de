/* a_realloc_grow.c - realloc to a larger size: the block moves to this stack */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_realloc_grow(void *p, size_t n)
{
	void *q = realloc(p, n); /* SITE:a_realloc_grow */
	return opaque_ptr(q);
}
