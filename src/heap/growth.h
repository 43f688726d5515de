/* growth.h - each stack's live bytes at a process's snapshots (at most GROWTH_POINTS_MAX of them kept): what grew, how fast, and whether steadily. */
#ifndef JT_GROWTH_H
#define JT_GROWTH_H

#include <stddef.h>
#include <stdint.h>

struct jt_heap;
struct jt_growth;

/* One stack that grew from the first snapshot to the last (growth_rank). */
struct growth_row {
	uint32_t id;			/* the heap's stack id */
	uint64_t growth;		/* live bytes at the last snapshot less those at the first */
	double rate;			/* that growth per second between the two snapshots */
	int every;			/* its live bytes grew in every interval between snapshots
					   (all of them, kept or not) in which the heap saw an
					   allocation or a free */
};

/*
 * The snapshots a history keeps, at most: past them every other one is
 * dropped (the first and the last kept), so its memory is bounded, 8 bytes
 * a stack a point, however long the run.
 */
#define GROWTH_POINTS_MAX 64

/* Returns a new empty history; never NULL. */
struct jt_growth *growth_new(void);
void growth_destroy(struct jt_growth *g);

/* Records the live bytes of every stack of h, at time_ms (the snapshot's). */
void growth_record(struct jt_growth *g, const struct jt_heap *h, uint64_t time_ms);

/* Sets the points kept (at least 3; GROWTH_POINTS_MAX); for tests. */
void growth_set_max(struct jt_growth *g, unsigned max);

/* How many snapshots are kept, the first and the latest among them; g may be NULL (none). */
unsigned growth_count(const struct jt_growth *g);
/* How many snapshots were recorded, kept or not; g may be NULL (none). */
unsigned growth_snapshots(const struct jt_growth *g);
/* When kept snapshot k (from 0) was taken. */
uint64_t growth_time(const struct jt_growth *g, unsigned k);
/* Stack id's live bytes at kept snapshot k (0 for a stack made later). */
uint64_t growth_bytes(const struct jt_growth *g, unsigned k, uint32_t id);

/*
 * The stacks whose live bytes at the last snapshot exceed those at the
 * first, by growth descending (ties: lower id); none before two snapshots.
 * An interval without an allocation or a free does not count against
 * "every" (growth_row).
 * Returns a malloc'ed array (NULL when empty), *n gets the count.
 */
struct growth_row *growth_rank(const struct jt_growth *g, size_t *n);

#endif
