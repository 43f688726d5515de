/* lc_definite.c - a block whose pointer is dropped at once: definitely lost. */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) void
lc_definite(void)
{
	char *p = malloc(LC_DEFINITE_SIZE); /* SITE:lc_definite */
	/* A volatile store: the compiler may neither drop the malloc nor keep p anywhere. */
	((volatile char *)p)[0] = 1;
}
