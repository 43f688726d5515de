/* cy_lost_node.c - one block of the cycle nothing references: definitely or indirectly lost. */
#include <stdlib.h>
#include "cy.h"

__attribute__((noinline, noipa)) struct cy_node *
cy_lost_node(void)
{
	struct cy_node *n = malloc(CY_LOST_SIZE); /* SITE:cy_lost_node */
	for (size_t i = 0; i < CY_LOST_SIZE / sizeof(void *); i++)
		((void *volatile *)n)[i] = NULL;
	return n;
}
