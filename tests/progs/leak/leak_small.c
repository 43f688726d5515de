/* leak_small.c - leaks one small block, so the report has a second, smaller stack. */
#include <stdlib.h>
#include "leak.h"

void *leak_small_block;

__attribute__((noinline, noipa)) void
leak_small(void)
{
	leak_small_block = malloc(LEAK_SMALL_SIZE); /* SMALL-SITE */
}
