/* a_realloc_zero.c - realloc(p, 0): glibc frees p (through a nested free) and returns NULL */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_realloc_zero(void *p)
{
	void *q = realloc(p, opaque_size(0)); /* SITE:a_realloc_zero */
	return opaque_ptr(q);
}
