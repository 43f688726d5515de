/* cy.h - leakcycle: cycles of blocks, one that nothing references and one a global holds. */
#ifndef JT_PROGS_CY_H
#define JT_PROGS_CY_H

#define CY_LEN 3		/* blocks in each cycle */
#define CY_LOST_SIZE 48		/* the lost cycle: one block definitely lost, the others indirectly */
#define CY_KEPT_SIZE 120	/* the kept cycle: a global points at one block, all still reachable */

/* One block of a cycle: the next block, then filler. */
struct cy_node {
	struct cy_node *next;
	long pad[];
};

extern struct cy_node *volatile cy_kept_ptr;

struct cy_node *cy_lost_node(void);
struct cy_node *cy_kept_node(void);
struct cy_node *cy_ring(struct cy_node *(*make)(void));

#endif
