/*
 * arena.h - arena: a program's own pool, void *arena_alloc(struct arena *, size_t) and
 * void arena_free(struct arena *, void *), carving blocks from one mmap'd region and never
 * calling malloc (built with -DUSE_MALLOC the same pool calls malloc and free, for valgrind).
 * Each ar_*.c file makes one kind of block (sizes below); main makes them all.
 */
#ifndef ARENA_H
#define ARENA_H

#include <stddef.h>

struct arena {
	char *base;		/* the region, between two PROT_NONE guard pages */
	size_t size, used;	/* an offset, not a pointer: no block looks reachable from here */
};

void *arena_alloc(struct arena *a, size_t size);
void arena_free(struct arena *a, void *p);
void arena_init(struct arena *a, size_t size);

/* Still reachable: AR_KEEP_N blocks of AR_KEEP_SIZE, in a global array. */
#define AR_KEEP_N 5
#define AR_KEEP_SIZE 100
extern void *ar_kept[AR_KEEP_N];
void ar_keep(struct arena *a);
/* Definitely lost: AR_LOSE_N blocks of AR_LOSE_SIZE, their pointers dropped. */
#define AR_LOSE_N 3
#define AR_LOSE_SIZE 48
void ar_lose(struct arena *a);
/* A root of AR_ROOT_SIZE (definitely lost) holding two children of AR_CHILD_SIZE (indirectly lost). */
#define AR_ROOT_SIZE 32
#define AR_CHILD_SIZE 64
void ar_tree(struct arena *a);
/* Possibly lost: one block of AR_MID_SIZE, pointed to only at its middle, from a global. */
#define AR_MID_SIZE 80
void ar_interior(struct arena *a);
/* Freed at once: n pairs of AR_CHURN_SIZE. */
#define AR_CHURN_SIZE 24
void ar_churn(struct arena *a, unsigned long n);
/* An arena_free of an address inside a kept block: an invalid free (not built with -DUSE_MALLOC). */
void ar_bad(struct arena *a);

#endif
