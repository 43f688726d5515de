/* lc.h - leakcases: one block per memcheck verdict, each from its own function and file. */
#ifndef JT_PROGS_LC_H
#define JT_PROGS_LC_H

#include <stddef.h>

/*
 * The blocks are zeroed with volatile stores, not memset: GCC turns malloc + memset into
 * calloc and the call into a tail call, and the site would lose its frame.
 */

/* Block sizes, all different, so that a wrong site cannot pass with the right figures. */
#define LC_GLOBAL_SIZE 24	/* still reachable: a global points at its start */
#define LC_STACK_SIZE 40	/* still reachable: a local of a running function */
#define LC_PARENT_SIZE 56	/* still reachable: a global points at it */
#define LC_CHILD_SIZE 72	/* still reachable: only the parent block points at it */
#define LC_INTERIOR_SIZE 64	/* possibly lost: a global points at its middle */
#define LC_INTERIOR_OFF 16
#define LC_POSPARENT_SIZE 96	/* possibly lost: a global points at its middle */
#define LC_POSCHILD_SIZE 104	/* possibly lost: only the possibly lost parent points at it */
#define LC_DEFINITE_SIZE 88	/* definitely lost: no pointer at all */
#define LC_TREE_ROOT_SIZE 32	/* definitely lost: the root of a tree whose pointer was dropped */
#define LC_TREE_CHILD_SIZE 32	/* indirectly lost: the root's children */
#define LC_TREE_CHILDREN 2
#define LC_MMAP_SIZE 120	/* still reachable: only the program's own anonymous mmap points at it */
#define LC_ZERO_SIZE 0		/* still reachable: malloc(0), a global points at it */
#define LC_PASTEND_SIZE 112	/* definitely lost: a global points just past its end, outside it */
#define LC_UNALIGNED_SIZE 128	/* definitely lost: its only pointer is stored at an unaligned address */
#define LC_FREED_SIZE 144	/* definitely lost: its only pointer is in a block that was freed */
#define LC_FREED_PARENT_SIZE 232	/* the freed block (a size nothing else uses, so it stays as it was) */

/* A tree node: the root's two children (the children have none). */
struct lc_node {
	struct lc_node *kid[2];
	long pad[2];
};

/* Globals the reachable and possibly lost blocks hang from (lc_roots.c). */
extern void *volatile lc_global_ptr;
extern void **volatile lc_parent_ptr;
extern char *volatile lc_interior_ptr;
extern char *volatile lc_posparent_ptr;
extern void *volatile lc_zero_ptr;
extern char *volatile lc_pastend_ptr;
/* A pointer at offset 1: memcheck (and jmptrace) read only 8-byte aligned words. */
struct __attribute__((packed)) lc_unaligned {
	char c;
	void *ptr;
};
extern volatile struct lc_unaligned lc_unaligned_at;

void lc_global(void);
void lc_heap_parent(void);
void lc_heap_child(void **parent);
void lc_interior(void);
void lc_posparent(void);
void *lc_poschild(void);
void lc_definite(void);
void lc_tree(void);
struct lc_node *lc_tree_child(void);
void lc_stack(void (*then)(void));
void lc_mmap(void);
void lc_zero(void);
void lc_pastend(void);
void lc_unaligned(void);
void lc_freed(void);

#endif
