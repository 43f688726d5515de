/* a_calloc.c - calloc, kept live */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size); /* SITE:a_calloc */
	return opaque_ptr(p);
}
