/* heap_rank.c - orders the stack table for the reports: by live, peak, calls, bytes, temporary or invalid frees. */
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "util.h"

/* The two figures an order compares, most first; a tie goes to the lower id. */
static void
rank_keys(const struct jt_stack *s, enum heap_rank by, uint64_t k[2])
{
	switch (by) {
	case HEAP_RANK_LIVE: k[0] = s->live_bytes; k[1] = s->live_blocks; break;
	case HEAP_RANK_INVALID: k[0] = s->invalid_frees; k[1] = 0; break;
	case HEAP_RANK_PEAK: k[0] = s->peak_bytes; k[1] = s->peak_blocks; break;
	case HEAP_RANK_CALLS: k[0] = s->alloc_calls; k[1] = s->alloc_bytes; break;
	case HEAP_RANK_BYTES: k[0] = s->alloc_bytes; k[1] = s->alloc_calls; break;
	case HEAP_RANK_TEMPORARY: k[0] = s->temporary; k[1] = s->alloc_calls; break;
	default: k[0] = k[1] = 0; break;
	}
}

/* Whether a stack belongs in an order at all: it has the order's figure. */
static int
rank_has(const struct jt_stack *s, enum heap_rank by)
{
	uint64_t k[2];

	if (s->filtered)
		return 0;
	if (by == HEAP_RANK_ALL)
		return s->alloc_calls || s->invalid_frees;
	if (by == HEAP_RANK_LIVE)
		return s->live_blocks != 0;
	if (by == HEAP_RANK_PEAK)
		return s->peak_blocks != 0;
	rank_keys(s, by, k);
	return k[0] != 0;
}

struct rank_arg {
	const struct jt_heap *h;
	enum heap_rank by;
};

static int
rank_cmp(const void *a, const void *b, void *arg)
{
	const struct rank_arg *ra = arg;
	const struct jt_stack *x = heap_stack_get(ra->h, *(const uint32_t *)a);
	const struct jt_stack *y = heap_stack_get(ra->h, *(const uint32_t *)b);
	uint64_t kx[2], ky[2];

	rank_keys(x, ra->by, kx);
	rank_keys(y, ra->by, ky);
	for (int i = 0; i < 2; i++)
		if (kx[i] != ky[i])
			return kx[i] > ky[i] ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Reports are rare: a scan of the stack table when one is written is enough. */
uint32_t
heap_rank_stacks(const struct jt_heap *h, enum heap_rank by, uint32_t *ids, uint32_t max)
{
	uint32_t count = heap_stack_count(h), *all, id, n = 0;
	struct rank_arg ra = { h, by };

	if (!max || !count)
		return 0;
	all = xmalloc(count * sizeof(*all));
	for (id = 0; id < count; id++)
		if (rank_has(heap_stack_get(h, id), by))
			all[n++] = id;
	if (by != HEAP_RANK_ALL)
		qsort_r(all, n, sizeof(*all), rank_cmp, &ra);
	if (n > max)
		n = max;
	memcpy(ids, all, n * sizeof(*ids));
	free(all);
	return n;
}
