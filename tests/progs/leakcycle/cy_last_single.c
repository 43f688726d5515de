/* cy_last_single.c - a lost block made last before the exit, in no cycle: definitely lost. */
#include <stdlib.h>
#include "cy.h"

__attribute__((noinline, noipa)) struct cy_node *
cy_last_single(void)
{
	struct cy_node *n = malloc(CY_SINGLE_SIZE); /* SITE:cy_last_single */
	for (size_t i = 0; i < CY_SINGLE_SIZE / sizeof(void *); i++)
		((void *volatile *)n)[i] = NULL;
	return n;
}
