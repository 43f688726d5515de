/*
 * lc_freed.c - a block whose only pointer is in a block that has been freed: freed memory is
 * no root (memcheck never scans it), so definitely lost, although the pointer is still there.
 */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) void
lc_freed(void)
{
	void **parent = malloc(LC_FREED_PARENT_SIZE);
	char *p = malloc(LC_FREED_SIZE); /* SITE:lc_freed */

	((volatile char *)p)[0] = 1;
	/* Past the words malloc reuses for its free lists: the pointer survives the free. */
	for (size_t i = 0; i < LC_FREED_PARENT_SIZE / sizeof(void *); i++)
		((void *volatile *)parent)[i] = p;
	free(parent);
}
