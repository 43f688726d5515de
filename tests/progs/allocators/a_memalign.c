/* a_memalign.c - memalign, kept live */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_memalign(size_t align, size_t n)
{
	void *p = memalign(align, n); /* SITE:a_memalign */
	return opaque_ptr(p);
}
