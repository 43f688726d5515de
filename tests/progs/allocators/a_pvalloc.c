/* a_pvalloc.c - pvalloc of a whole number of pages, kept live */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_pvalloc(size_t n)
{
	void *p = pvalloc(n); /* SITE:a_pvalloc */
	return opaque_ptr(p);
}
