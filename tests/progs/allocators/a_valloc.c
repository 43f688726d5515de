/* a_valloc.c - valloc, kept live */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_valloc(size_t n)
{
	void *p = valloc(n); /* SITE:a_valloc */
	return opaque_ptr(p);
}
