/* lc_tree_child.c - one child of the lost tree: indirectly lost. */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) struct lc_node *
lc_tree_child(void)
{
	struct lc_node *n = malloc(LC_TREE_CHILD_SIZE); /* SITE:lc_tree_child */
	for (size_t i = 0; i < LC_TREE_CHILD_SIZE / sizeof(void *); i++)
		((void *volatile *)n)[i] = NULL;
	return n;
}
