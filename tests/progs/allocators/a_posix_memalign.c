/* a_posix_memalign.c - posix_memalign, kept live (with align 8 glibc makes a nested malloc) */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_posix_memalign(size_t align, size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, align, n) != 0) /* SITE:a_posix_memalign */
		return NULL;
	return opaque_ptr(p);
}
