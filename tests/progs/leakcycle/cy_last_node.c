/* cy_last_node.c - one block of the lost cycle made last before the exit: definitely or indirectly lost. */
#include <stdlib.h>
#include "cy.h"

__attribute__((noinline, noipa)) struct cy_node *
cy_last_node(void)
{
	struct cy_node *n = malloc(CY_LAST_SIZE); /* SITE:cy_last_node */
	for (size_t i = 0; i < CY_LAST_SIZE / sizeof(void *); i++)
		((void *volatile *)n)[i] = NULL;
	return n;
}
