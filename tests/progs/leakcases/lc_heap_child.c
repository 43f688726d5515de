/* lc_heap_child.c - a block only another (reachable) heap block points at: still reachable. */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) void
lc_heap_child(void **parent)
{
	char *c = malloc(LC_CHILD_SIZE); /* SITE:lc_heap_child */
	((volatile char *)c)[0] = 1;
	*(void *volatile *)parent = c;
}
