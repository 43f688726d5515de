/* a_malloc.c - malloc, kept live */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_malloc(size_t n)
{
	void *p = malloc(n); /* SITE:a_malloc */
	return opaque_ptr(p);
}
