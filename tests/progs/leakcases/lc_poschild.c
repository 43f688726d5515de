/* lc_poschild.c - the child of the possibly lost parent: possibly lost. */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) void *
lc_poschild(void)
{
	char *c = malloc(LC_POSCHILD_SIZE); /* SITE:lc_poschild */
	((volatile char *)c)[0] = 1;
	return c;
}
