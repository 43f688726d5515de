/* cy.h - leakcycle: cycles of blocks, one that nothing references and one a global holds; with "last", the lost one is made last. */
#ifndef JT_PROGS_CY_H
#define JT_PROGS_CY_H

#define CY_LEN 3		/* blocks in each cycle */
#define CY_LOST_SIZE 48		/* the lost cycle: one block definitely lost, the others indirectly */
#define CY_KEPT_SIZE 120	/* the kept cycle: a global points at one block, all still reachable */
/*
 * "last": a lost cycle, or a lost single block, made last before the exit, so that glibc's
 * top chunk starts right after it. Sizes of 8 mod 16 fill their chunk up to the next chunk's
 * first word (its prev_size, which the block may use): the top chunk's address, which glibc
 * keeps in its arena, lies inside the last block.
 */
#define CY_LAST_SIZE 40		/* each block of the last cycle, in a 48-byte chunk */
#define CY_SINGLE_SIZE 24	/* the last single block, in a 32-byte chunk */

/* One block of a cycle: the next block, then filler. */
struct cy_node {
	struct cy_node *next;
	long pad[];
};

extern struct cy_node *volatile cy_kept_ptr;

struct cy_node *cy_lost_node(void);
struct cy_node *cy_kept_node(void);
struct cy_node *cy_last_node(void);
struct cy_node *cy_last_single(void);
struct cy_node *cy_ring(struct cy_node *(*make)(void));

#endif
