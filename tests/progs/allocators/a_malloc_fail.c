/* a_malloc_fail.c - a malloc that fails: counted as a call, allocates nothing */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_malloc_fail(size_t n)
{
	void *p = malloc(n); /* SITE:a_malloc_fail */
	return opaque_ptr(p);
}
