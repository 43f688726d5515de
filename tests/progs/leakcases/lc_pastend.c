/* lc_pastend.c - a block whose only pointer points one past its end: no pointer into it, definitely lost. */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) void
lc_pastend(void)
{
	char *p = malloc(LC_PASTEND_SIZE); /* SITE:lc_pastend */
	((volatile char *)p)[0] = 1;
	lc_pastend_ptr = p + LC_PASTEND_SIZE;
}
