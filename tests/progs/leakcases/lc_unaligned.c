/* lc_unaligned.c - a block whose only pointer is stored at an unaligned address: definitely lost. */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) void
lc_unaligned(void)
{
	char *p = malloc(LC_UNALIGNED_SIZE); /* SITE:lc_unaligned */
	((volatile char *)p)[0] = 1;
	lc_unaligned_at.ptr = p;
}
