/* cy_ring.c - links CY_LEN blocks from make() into a ring and returns one of them. */
#include "cy.h"

__attribute__((noinline, noipa)) struct cy_node *
cy_ring(struct cy_node *(*make)(void))
{
	struct cy_node *first = make(), *last = first;

	for (int i = 1; i < CY_LEN; i++) {
		struct cy_node *n = make();
		*(struct cy_node *volatile *)&last->next = n;
		last = n;
	}
	*(struct cy_node *volatile *)&last->next = first;
	return first;
}
