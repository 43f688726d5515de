/* live.h - the live-block table: a block's address -> its size, stack id and allocation stamp, in about 20 bytes a block. */
#ifndef JT_LIVE_H
#define JT_LIVE_H

#include <stddef.h>
#include <stdint.h>

/* What the table keeps of one live block. */
struct jt_block {
	uint64_t size;
	uint32_t stack_id;	/* any value but UINT32_MAX */
	uint32_t stamp;		/* the allocation time, in the heap's 32-bit ms */
};

struct jt_live;

/* Returns a new empty table; never NULL. */
struct jt_live *live_new(void);
void live_destroy(struct jt_live *l);

/*
 * Sets the block at addr (non-zero) to *b. Returns 1 when addr held a block
 * already, whose figures go to *old (if non-NULL), or 0 for a new one.
 */
int live_set(struct jt_live *l, uint64_t addr, const struct jt_block *b, struct jt_block *old);

/* Looks addr up: 0 and *b (if non-NULL) filled when it is live, else -1. */
int live_get(const struct jt_live *l, uint64_t addr, struct jt_block *b);

/*
 * Starts loading the slot where addr would be, for a live_get soon after:
 * a caller with many lookups to make (heap_find_inside's 512) overlaps
 * their cache misses.
 */
void live_prefetch(const struct jt_live *l, uint64_t addr);

/* Removes the block at addr: 0 and *b (if non-NULL) filled, or -1 when addr is not live. */
int live_take(struct jt_live *l, uint64_t addr, struct jt_block *b);

/* Calls fn on every live block in no particular order; fn must not change the table. */
void live_each(const struct jt_live *l, void (*fn)(void *arg, uint64_t addr, const struct jt_block *b), void *arg);

/* The number of live blocks. */
size_t live_count(const struct jt_live *l);

/* Forgets every block and gives the memory back, as live_new left it. */
void live_clear(struct jt_live *l);

/*
 * The bytes the table holds now, and the most it held at once since
 * live_new (a growth's old and new arrays both counted): what the tracer's
 * memory per live block comes to. For tests and measurements.
 */
size_t live_mem(const struct jt_live *l, size_t *peak);

#endif
