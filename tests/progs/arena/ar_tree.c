/* ar_tree.c - a root that alone points to two children, the root dropped: 1 definitely, 2 indirectly lost. */
#include "arena.h"

__attribute__((noinline, noipa)) static void **
ar_tree_root(struct arena *a)
{
	void **p = arena_alloc(a, AR_ROOT_SIZE); /* SITE:ar_tree_root */

	__asm__ volatile("" : : "r"(p) : "memory");	/* no tail call: this frame stays on the stack */
	return p;
}

__attribute__((noinline, noipa)) static void *
ar_tree_child(struct arena *a)
{
	void *p = arena_alloc(a, AR_CHILD_SIZE); /* SITE:ar_tree_child */

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline, noipa)) void
ar_tree(struct arena *a)
{
	void **volatile root = ar_tree_root(a);

	root[0] = ar_tree_child(a);
	root[1] = ar_tree_child(a);
	root[2] = 0;
	root[3] = 0;
	root = 0;
}
