/* cy_kept_node.c - one block of the cycle a global points into: still reachable. */
#include <stdlib.h>
#include "cy.h"

struct cy_node *volatile cy_kept_ptr;

__attribute__((noinline, noipa)) struct cy_node *
cy_kept_node(void)
{
	struct cy_node *n = malloc(CY_KEPT_SIZE); /* SITE:cy_kept_node */
	for (size_t i = 0; i < CY_KEPT_SIZE / sizeof(void *); i++)
		((void *volatile *)n)[i] = NULL;
	return n;
}
