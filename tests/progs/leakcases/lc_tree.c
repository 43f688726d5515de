/* lc_tree.c - a tree whose root pointer is dropped: the root definitely lost, its children indirectly. */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) void
lc_tree(void)
{
	struct lc_node *root = malloc(LC_TREE_ROOT_SIZE); /* SITE:lc_tree_root */
	for (size_t i = 0; i < LC_TREE_ROOT_SIZE / sizeof(void *); i++)
		((void *volatile *)root)[i] = NULL;
	for (int i = 0; i < LC_TREE_CHILDREN; i++)
		((struct lc_node *volatile *)root->kid)[i] = lc_tree_child();
}
