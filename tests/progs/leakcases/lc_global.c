/* lc_global.c - a block whose only pointer is a global: still reachable. */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) void
lc_global(void)
{
	char *p = malloc(LC_GLOBAL_SIZE); /* SITE:lc_global */
	((volatile char *)p)[0] = 1;
	lc_global_ptr = p;
}
