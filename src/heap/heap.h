/* heap.h - the live-block table (address -> size, stack) and the deduplicated stack table. */
#ifndef JT_HEAP_H
#define JT_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "heap_tlog.h"

/*
 * One unique call stack. pcs[] holds raw return addresses, innermost first,
 * exactly as captured at the event, with the unwinder's marks (a signal
 * frame: unwind.h's UNWIND_PC_SIGNAL); nothing here is symbolized.
 */
struct jt_stack {
	uint32_t id;		/* index in the stack table, stable for the heap's life */
	uint32_t depth;		/* number of entries in pcs */
	int truncated;		/* the stack went deeper, pcs holds its innermost depth frames: HEAP_CUT_DEPTH
				   (--depth), HEAP_CUT_COPY (the copied user stack ended, --stack-copy); else 0 */
	uint64_t *pcs;		/* owned by the heap */
	uint64_t live_bytes;	/* bytes of this stack's blocks that are still allocated */
	uint64_t live_blocks;	/* number of those blocks */
	uint64_t alloc_calls;	/* successful allocations made from this stack */
	uint64_t alloc_bytes;	/* bytes those allocations asked for */
	uint64_t invalid_frees;	/* frees made from this stack of addresses that were no live block */
	uint64_t inside_frees;	/* of those, of an address inside a live block (not at its start) */
	uint64_t frees;		/* frees of blocks allocated from this stack (realloc's release too) */
	uint64_t temporary;	/* of those, blocks freed by the thread that made the last allocation
				   of that thread (heaptrack's temporary allocations) */
	uint64_t peak_bytes;	/* live_bytes at the recorded peak (heap_peak) */
	uint64_t peak_blocks;	/* live_blocks at the recorded peak */
	uint64_t *hist;		/* HEAP_HIST_BUCKETS allocation counts by size, NULL until the first */
	int filtered;		/* the stack of allocations outside --min-size/--max-size
				   (heap_filtered_stack): no frames, left out of every breakdown */
	int dirty;		/* its live figures changed since the peak was last recorded */
	int tl_dirty;		/* its live figures changed since the last timeline sample */
	uint64_t tl_bytes;	/* its live bytes as the timeline last listed them (heap_timeline_stacks) */
};

/*
 * The size histogram has power-of-two buckets: bucket k counts the sizes in
 * (2^(k-1), 2^k], and bucket 0 the sizes 0 and 1. A bucket is named by its
 * upper bound, heap_hist_bound(k) = 2^k (bucket 64 holds the sizes above 2^63).
 */
#define HEAP_HIST_BUCKETS 65

static inline unsigned
heap_hist_bucket(uint64_t size)
{
	return size <= 1 ? 0 : 64 - (unsigned)__builtin_clzll(size - 1);
}

/* The upper bound of bucket k; bucket 64's (2^64) does not fit and reads UINT64_MAX. */
static inline uint64_t
heap_hist_bound(unsigned k)
{
	return k >= 64 ? UINT64_MAX : (uint64_t)1 << k;
}

/* The live figures at the recorded peak, and when it was reached (ms since heap_new). */
struct jt_heap_peak {
	uint64_t live_bytes;
	uint64_t live_blocks;
	uint64_t time_ms;
};

/* One point of the timeline: the live figures at time_ms (ms since heap_new). */
struct jt_heap_sample {
	uint64_t time_ms;
	uint64_t live_bytes;
	uint64_t live_blocks;
};

/* The timeline takes a sample at the first event this long after the last sample. */
#define HEAP_SAMPLE_MS 100

/*
 * The per-stack changes the timeline keeps, at most (16 bytes each): past
 * them, older samples' changes are merged into later samples'
 * (heap_timeline_stacks), so hours of 100 ms samples stay within 16 MiB.
 */
#define HEAP_TL_CHANGES_MAX (1u << 20)

/* Process-wide totals kept by the heap. */
struct jt_heap_totals {
	uint64_t bytes_allocated;	/* sum of sizes of all successful allocations */
	uint64_t live_bytes;		/* currently allocated */
	uint64_t live_blocks;
	uint64_t peak_live_bytes;	/* maximum live_bytes ever reached */
	uint64_t allocs;		/* successful allocations recorded */
	uint64_t frees;			/* frees of known blocks */
	uint64_t temporary;		/* of those, temporary ones (struct jt_stack's temporary) */
	uint64_t unknown_frees;		/* frees of addresses that were no live block (invalid ones included) */
	uint64_t invalid_frees;		/* of those, the ones known to be the program's errors */
	uint64_t inside_frees;		/* of those, of an address inside a live block */
};

struct jt_heap;

/* Returns a new empty heap; never NULL. */
struct jt_heap *heap_new(void);
void heap_destroy(struct jt_heap *h);

/*
 * Returns the id of the stack equal to pcs[0..depth), adding it if new.
 * depth may be 0. The pcs are copied.
 */
uint32_t heap_stack_intern(struct jt_heap *h, const uint64_t *pcs, uint32_t depth);
/* Why a stack is cut (struct jt_stack's truncated). */
#define HEAP_CUT_DEPTH 1
#define HEAP_CUT_COPY 2

/* heap_stack_intern for a stack cut at depth frames when truncated is non-zero; a cut
 * stack and a whole one with the same pcs are different stacks. */
uint32_t heap_stack_intern_cut(struct jt_heap *h, const uint64_t *pcs, uint32_t depth, int truncated);
/* Returns the stack with that id, or NULL when out of range. */
const struct jt_stack *heap_stack_get(const struct jt_heap *h, uint32_t id);
uint32_t heap_stack_count(const struct jt_heap *h);

/*
 * Records a live block. If addr is already live (a free we missed), the old
 * block is dropped first as if freed, and 1 is returned; otherwise 0.
 */
int heap_alloc(struct jt_heap *h, uint64_t addr, uint64_t size, uint32_t stack_id);

/*
 * The block the last heap_alloc that returned 1 dropped, once: its
 * address, size and stack. Returns 1, or 0 when none is left to take. A
 * source whose frees may come after another thread's malloc of the same
 * block (the uprobe source's deferred ones) counts that free later with
 * heap_free_dropped.
 */
int heap_take_dropped(struct jt_heap *h, uint64_t *addr, uint64_t *size, uint32_t *stack_id);

/* Counts the free of a block heap_alloc dropped (it is no longer live), as heap_free would have. */
void heap_free_dropped(struct jt_heap *h, uint32_t stack_id, int temporary);

/*
 * Records a free; temporary says that the freeing thread's last allocation
 * was this block, with no other allocation by it since (the caller keeps
 * that per thread). Returns 0 and sets *size (if non-NULL) when addr was live;
 * returns -1 and counts nothing when it was not (or addr is 0): the caller
 * knows what such a free is, and records it with heap_unknown_free or
 * heap_invalid_free, or not at all.
 */
int heap_free(struct jt_heap *h, uint64_t addr, uint64_t *size, int temporary);

/*
 * Takes [lo, hi) out of the live block at addr (clipped to it), as munmap
 * takes pages out of a mapping: what is left below and above stays live, as
 * blocks of the same stack and age, counting no allocation; a block taken
 * whole is freed (heap_free). Returns 0, or -1 when addr is no live block.
 */
int heap_carve(struct jt_heap *h, uint64_t addr, uint64_t lo, uint64_t hi);

/*
 * Records a live block counting no allocation: a piece of one counted
 * before, moved (mremap). Returns 0, or -1 when addr is 0 or already live,
 * size is 0, or stack_id is unknown (nothing recorded).
 */
int heap_place(struct jt_heap *h, uint64_t addr, uint64_t size, uint32_t stack_id);

/* Counts a free of an address that was no live block and may have been one allocated unseen (before an attach). */
void heap_unknown_free(struct jt_heap *h);

/*
 * Counts an invalid free (a double free, a free of an address that was
 * never a block; inside: of an address inside a live block) made from stack
 * stack_id, which must exist. It is an unknown free too. Returns 0, or -1
 * for an unknown stack_id (nothing counted).
 */
int heap_invalid_free(struct jt_heap *h, uint32_t stack_id, int inside);

/*
 * Finds the live block that addr lies inside, past its start, among the
 * blocks starting at most HEAP_INSIDE_REACH bytes below it (at any multiple
 * of HEAP_INSIDE_ALIGN: a named allocator's header may be 8 bytes): returns
 * 0 and sets *start (if non-NULL), or -1. For a free of no live block only;
 * it costs HEAP_INSIDE_REACH / HEAP_INSIDE_ALIGN lookups.
 */
#define HEAP_INSIDE_REACH 4096
#define HEAP_INSIDE_ALIGN 8
int heap_find_inside(const struct jt_heap *h, uint64_t addr, uint64_t *start);

/* Looks a live block up without changing anything: 0 when found, -1 otherwise. */
int heap_lookup(const struct jt_heap *h, uint64_t addr, uint64_t *size, uint32_t *stack_id);

/* Calls fn on every live block, in no particular order; fn must not change the heap. */
void heap_each_live(const struct jt_heap *h, void (*fn)(void *arg, uint64_t addr, uint64_t size, uint32_t stack_id),
		    void *arg);

void heap_totals(const struct jt_heap *h, struct jt_heap_totals *out);

/*
 * Forgets every live block and invalid free (the image was replaced by
 * execve); stacks, per-stack alloc counters and totals other than the live
 * and invalid-free figures are kept.
 */
void heap_clear_live(struct jt_heap *h);

/*
 * The id of the one stack that allocations outside --min-size/--max-size are
 * recorded under (made on first use): their blocks are tracked, so that their
 * frees are known, but never broken down by stack.
 */
uint32_t heap_filtered_stack(struct jt_heap *h);

/*
 * The clock of the peak and the timeline: ms since an origin of the
 * caller's. The default is util_coarse_ms since heap_new. Tests set
 * their own.
 */
void heap_set_clock(struct jt_heap *h, uint64_t (*now_ms)(void *arg), void *arg);
/*
 * Gives h from's clock: the same origin (or the caller's clock set by
 * heap_set_clock), so that a heap that follows another (the next image
 * of a process) goes on with its time_ms instead of starting at 0.
 */
void heap_clock_from(struct jt_heap *h, const struct jt_heap *from);
/* That clock's now: what a sample or a snapshot taken now would say (time_ms). */
uint64_t heap_clock_ms(const struct jt_heap *h);

/*
 * Events applied later than they were made (--source uprobe) stamp their
 * blocks with when they were made: mono_ns, the UTIL_CLOCK time (ns)
 * of the event being applied, or 0 for the clock's now (the default). It
 * assumes the default clock.
 */
void heap_set_event_time(struct jt_heap *h, uint64_t mono_ns);

/*
 * A snapshot's view of the live blocks at now_ms (the clock's time_ms): it
 * takes each stack's block ages (heap_stack_age) and, when min_age_ms > 0
 * (--older-than), makes every live figure (the stacks' live_bytes and
 * live_blocks, the totals', HEAP_RANK_LIVE's order) count only the blocks
 * allocated at least min_age_ms before now_ms, until heap_view_end. The heap
 * must record no event nor sample in between; the peak and the timeline
 * keep every block.
 */
void heap_view_begin(struct jt_heap *h, uint64_t now_ms, uint64_t min_age_ms);
/* Ends the view: the live figures count every block again. Does nothing without one. */
void heap_view_end(struct jt_heap *h);
/* In a view: the ages (ms) of the oldest and the newest block of stack id it counts; -1 when none (or no view). */
int heap_stack_age(const struct jt_heap *h, uint32_t id, uint64_t *oldest_ms, uint64_t *newest_ms);

/*
 * A copy of h as it is now, for a snapshot's writers on another thread
 * while h goes on recording: the stacks and their figures (the open view's
 * too, and its ages), the totals, the peak and the timeline, with the
 * timeline's per-stack records from sample tl_from on (heap_timeline_stacks
 * gives none before). It holds no live block (heap_each_live finds none)
 * and records nothing (no event call is for it); it shares the stacks' pcs with h, which
 * must outlive it. heap_destroy frees it.
 */
struct jt_heap *heap_freeze(const struct jt_heap *h, size_t tl_from);
/* The heap a heap_freeze copy was taken of, or h itself: what names one heap of the tracing across its copies. */
const struct jt_heap *heap_identity(const struct jt_heap *h);

/*
 * A word per stack that a snapshot's readers keep for themselves (what
 * only a stack's frames decide, as the suppression that matches it), for
 * owner: the word of stack id, 0 until set; all 0 again when another owner
 * asks. The heap's own, shared by its frozen copies: the readers alone touch
 * it, one at a time (the worker, or the tracer while the worker waits).
 */
uintptr_t *heap_memo(const struct jt_heap *h, const void *owner, uint32_t id);

/* The peak: the live figures at the highest live bytes so far, and when (exact once a free or a forced heap_sample followed it). */
void heap_peak(const struct jt_heap *h, struct jt_heap_peak *out);

/*
 * Takes a timeline sample now if HEAP_SAMPLE_MS have passed since the last
 * one, or always when force is set (a snapshot). The heap calls it at every
 * allocation and free; the tracer calls it while the program makes none.
 */
void heap_sample(struct jt_heap *h, int force);

/* The timeline so far, oldest first; *n gets the count. Valid until the next heap call. */
const struct jt_heap_sample *heap_timeline(const struct jt_heap *h, size_t *n);

/*
 * The stacks whose live bytes changed at sample i of heap_timeline (since
 * sample i - 1; since nothing was live, for sample 0), each with its live
 * bytes then, in the order they first changed; *n gets the count. A
 * stack's live bytes at any sample are those of its latest entry at or
 * before it. Returns NULL (*n = 0) when the run was long enough that
 * sample i's changes were merged into a later sample's (HEAP_TL_CHANGES_MAX):
 * its per-stack figures are then unknown, every later sample's exact. The
 * last sample (a snapshot's, heap_sample with force) is never merged before
 * a later sample is taken. Valid until the next heap call.
 */
const struct jt_heap_change *heap_timeline_stacks(const struct jt_heap *h, size_t i, size_t *n);
/* Sets the maximum of per-stack changes kept (HEAP_TL_CHANGES_MAX); for tests. */
void heap_set_timeline_max(struct jt_heap *h, size_t max);

/* The orders heap_rank_stacks knows; every one leaves out the filtered stack. */
enum heap_rank {
	HEAP_RANK_LIVE,		/* stacks with live blocks, by live_bytes descending (ties: more blocks, then lower id) */
	HEAP_RANK_INVALID,	/* stacks that made invalid frees, most first (ties: lower id) */
	HEAP_RANK_PEAK,		/* stacks live at the peak, by peak_bytes descending (ties: peak_blocks, id) */
	HEAP_RANK_CALLS,	/* stacks that allocated, by alloc_calls descending (ties: alloc_bytes, id) */
	HEAP_RANK_BYTES,	/* stacks that allocated, by alloc_bytes descending (ties: alloc_calls, id) */
	HEAP_RANK_TEMPORARY,	/* stacks with temporary allocations, most first (ties: alloc_calls, id) */
	HEAP_RANK_ALL,		/* every stack that allocated or made an invalid free, by id */
};

/*
 * Fills ids[] with the ids of the stacks that rank by `by`, in its order.
 * Returns how many were written, at most max.
 */
uint32_t heap_rank_stacks(const struct jt_heap *h, enum heap_rank by, uint32_t *ids, uint32_t max);

#endif
