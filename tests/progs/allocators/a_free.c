/* a_free.c - free of a live block and free(NULL) */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
a_free(void *p, void *null)
{
	free(p); /* SITE:a_free */
	free(null); /* SITE:a_free_null */
}
