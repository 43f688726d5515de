/* ar_interior.c - a block a global points into the middle of: possibly lost. */
#include "arena.h"

char *volatile ar_middle;

__attribute__((noinline, noipa)) void
ar_interior(struct arena *a)
{
	char *p = arena_alloc(a, AR_MID_SIZE); /* SITE:ar_interior */

	ar_middle = p + AR_MID_SIZE / 2;
}
