/* heap_tlog.h - the per-stack side of the heap's timeline: at each sample, the stacks whose live bytes changed. */
#ifndef JT_HEAP_TLOG_H
#define JT_HEAP_TLOG_H

#include <stddef.h>
#include <stdint.h>

/* One stack's live bytes at a timeline sample (heap_timeline_stacks). */
struct jt_heap_change {
	uint32_t stack_id;
	uint64_t live_bytes;
};

/*
 * One record per timeline sample, the changes of that sample packed one
 * after another in ch[]. Its memory is bounded: past max entries the older
 * samples' records are merged into later ones (tlog_coarsen), so a long run
 * keeps the recent samples per stack and the older ones at a coarser step.
 */
struct jt_tlog {
	struct jt_heap_change *ch;	/* every record's entries, sample by sample */
	size_t nch, ch_cap;
	size_t *start;			/* start[i]: sample i's first entry in ch */
	size_t nsamples, start_cap;
	size_t max;			/* entries before tlog_coarsen merges: HEAP_TL_CHANGES_MAX */
	size_t step;			/* after merges, sample i < merged_upto keeps its record iff (i + 1) % step == 0 */
	size_t merged_upto;
};

/* Makes t empty, with room for max entries before it merges. */
void tlog_init(struct jt_tlog *t, size_t max);
void tlog_free(struct jt_tlog *t);
/* Begins the (empty) record of a new sample. */
void tlog_begin(struct jt_tlog *t);
/*
 * Puts stack id at bytes into the last sample's record; with replace (a
 * sample taken again in the same ms), an entry of id already there is
 * updated rather than repeated.
 */
void tlog_put(struct jt_tlog *t, uint32_t id, uint64_t bytes, int replace);
/* When past its maximum, merges older records into later ones (nstacks bounds the ids). */
void tlog_bound(struct jt_tlog *t, uint32_t nstacks);
/*
 * Makes dst (uninitialized) a copy of src's records from sample from on,
 * those before empty: what a frozen heap's readers ask for (heap_freeze).
 */
void tlog_copy_tail(struct jt_tlog *dst, const struct jt_tlog *src, size_t from);
/* Sample i's record (*n entries), or NULL when it was merged into a later one. */
const struct jt_heap_change *tlog_get(const struct jt_tlog *t, size_t i, size_t *n);

#endif
