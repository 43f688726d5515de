/* a_aligned_alloc.c - aligned_alloc, kept live */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_aligned_alloc(size_t align, size_t n)
{
	void *p = aligned_alloc(align, n); /* SITE:a_aligned_alloc */
	return opaque_ptr(p);
}
