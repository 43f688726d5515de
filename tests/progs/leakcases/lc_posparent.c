/*
 * lc_posparent.c - a possibly lost block (a global points at its middle) whose first word
 * points at another block: that one is possibly lost too (memcheck's leak-cases case 7).
 */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) void
lc_posparent(void)
{
	void **p = malloc(LC_POSPARENT_SIZE); /* SITE:lc_posparent */
	for (size_t i = 0; i < LC_POSPARENT_SIZE / sizeof(void *); i++)
		((void *volatile *)p)[i] = NULL;
	p[0] = lc_poschild();
	lc_posparent_ptr = (char *)p + LC_INTERIOR_OFF;
}
