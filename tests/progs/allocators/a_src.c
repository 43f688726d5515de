/* a_src.c - mallocs a block that main.c hands to another function (never live at exit) */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_src(size_t n)
{
	void *p = malloc(n); /* SITE:a_src */
	return opaque_ptr(p);
}
