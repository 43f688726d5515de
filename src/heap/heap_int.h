/* heap_int.h - the heap's own state, shared by heap.c and heap_view.c (the heap's modules only). */
#ifndef JT_HEAP_INT_H
#define JT_HEAP_INT_H

#include "heap.h"
#include "heap_tlog.h"
#include "table.h"

struct jt_live;

/* Stacks are kept in fixed chunks so that jt_stack pointers never move. */
#define STACK_CHUNK_SHIFT	10
#define STACK_CHUNK		(1u << STACK_CHUNK_SHIFT)
#define STACK_IDX_MIN_CAP	1024u

struct jt_heap {
	struct jt_live *live;		/* addr -> size, stack, stamp */
	struct jt_stack **chunks;	/* chunks[id >> SHIFT][id & (CHUNK-1)] */
	uint32_t nstacks, nchunks;
	struct jt_index sidx;		/* the stacks by their pcs */
	uint32_t last_sid;		/* the stack interned last: a loop allocates from one stack again and again */
	struct jt_heap_totals tot;
	uint32_t filtered_id1;		/* heap_filtered_stack's id + 1, or 0 before its first use */
	uint64_t peak_ms;		/* when live bytes last reached tot.peak_live_bytes */
	/* The peak (see heap_peak_record) and the stacks whose live figures changed since. */
	struct jt_heap_peak peak;
	uint32_t *dirty;
	size_t ndirty, dirty_cap;
	/* The clock, and the timeline it stamps. */
	uint64_t (*now_ms)(void *arg);
	void *clock_arg;
	uint64_t origin_ms;		/* the default clock's zero: heap_new */
	struct jt_heap_sample *tl;
	size_t ntl, tl_cap;
	/* The stacks whose live figures changed since the last sample, and the samples' changes. */
	uint32_t *tdirty;
	size_t ntdirty, tdirty_cap;
	struct jt_tlog tlog;
	/* heap_set_event_time: when the events being applied were made, if event_set (before the origin: < 0). */
	int64_t event_ms;
	int event_set;
	/* heap_take_dropped: the block the last heap_alloc dropped, if dropped. */
	uint64_t dropped_addr, dropped_size;
	uint32_t dropped_stack;
	int dropped;
	/* The open heap_view: per stack, the other live figures (swapped in when filtering) and the ages. */
	struct view_stack *view;
	uint32_t nview;
	struct jt_heap_totals view_tot;
	int view_swapped;
	/*
	 * A frozen copy (heap_freeze): the heap it was taken of, whose pcs it
	 * shares, and the one block of its stacks' histograms; NULL for a heap
	 * of the tracing.
	 */
	const struct jt_heap *origin;
	uint64_t *hist_pool;
	/* heap_memo's words: the heap's own, shared by its frozen copies (which never free it). */
	struct heap_memo *memo;
};

/* A word per stack for a snapshot's readers (heap_memo), and whose words they are. */
struct heap_memo {
	const void *owner;
	uintptr_t *v;
	uint32_t n;
};

/* heap_freeze.c: frees what a frozen copy owns (heap_destroy's part for one). */
void heap_frozen_free(struct jt_heap *h);

/* One stack in a heap_view. */
struct view_stack {
	uint64_t bytes, blocks;		/* the figures not in use: the view's or, while swapped, the real ones */
	uint32_t oldest, newest;	/* ages (ms) of the oldest and newest block the view counts */
};

static inline struct jt_stack *
stack_at(const struct jt_heap *h, uint32_t id)
{
	return &h->chunks[id >> STACK_CHUNK_SHIFT][id & (STACK_CHUNK - 1)];
}

#endif
