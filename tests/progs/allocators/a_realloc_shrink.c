/* a_realloc_shrink.c - realloc to a smaller size: the block moves to this stack */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_realloc_shrink(void *p, size_t n)
{
	void *q = realloc(p, n); /* SITE:a_realloc_shrink */
	return opaque_ptr(q);
}
