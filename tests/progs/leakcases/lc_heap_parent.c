/* lc_heap_parent.c - a block a global points at, which points at the next one: still reachable. */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) void
lc_heap_parent(void)
{
	void **p = malloc(LC_PARENT_SIZE); /* SITE:lc_heap_parent */
	for (size_t i = 0; i < LC_PARENT_SIZE / sizeof(void *); i++)
		((void *volatile *)p)[i] = NULL;
	lc_heap_child(p);
	lc_parent_ptr = p;
}
