/* lc_interior.c - a block pointed to only at its middle: possibly lost. */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) void
lc_interior(void)
{
	char *p = malloc(LC_INTERIOR_SIZE); /* SITE:lc_interior */
	((volatile char *)p)[0] = 1;
	lc_interior_ptr = p + LC_INTERIOR_OFF;
}
