/* badfree.h - the badfree test program: invalid frees made to its own allocator, which ignores them. */
#ifndef JT_PROGS_BADFREE_H
#define JT_PROGS_BADFREE_H

void bf_double_free(void);	/* malloc, free, then free the same block again */
void bf_interior_free(void);	/* malloc, then free an address inside the block */
void bf_stack_free(void);	/* free the address of a local variable */
void bf_realloc_stack(void);	/* realloc the address of a local variable, free the result */
void bf_good(void);		/* malloc and free once: correct */
unsigned long bf_ignored(void);	/* invalid frees the allocator has ignored so far */

#endif
