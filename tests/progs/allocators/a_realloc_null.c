/* a_realloc_null.c - realloc(NULL, n), which glibc turns into a nested malloc */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_realloc_null(void *p, size_t n)
{
	void *q = realloc(p, n); /* SITE:a_realloc_null */
	return opaque_ptr(q);
}
