/* heap_freeze.c - a frozen copy of a heap's figures, which a snapshot's writers read beside the tracing. */
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "heap_int.h"
#include "util.h"

/* Copies the stacks, their histograms in one block (pcs shared with the heap). */
static void
freeze_stacks(struct jt_heap *f, const struct jt_heap *h)
{
	size_t nhist = 0, k = 0;

	f->chunks = xcalloc(h->nchunks ? h->nchunks : 1, sizeof(*f->chunks));
	f->nchunks = h->nchunks;
	for (uint32_t c = 0; c < h->nchunks; c++) {
		f->chunks[c] = xmalloc(STACK_CHUNK * sizeof(struct jt_stack));
		memcpy(f->chunks[c], h->chunks[c], STACK_CHUNK * sizeof(struct jt_stack));
	}
	for (uint32_t id = 0; id < h->nstacks; id++)
		nhist += stack_at(h, id)->hist != NULL;
	f->hist_pool = xmalloc((nhist ? nhist : 1) * HEAP_HIST_BUCKETS * sizeof(uint64_t));
	for (uint32_t id = 0; id < h->nstacks; id++) {
		struct jt_stack *s = stack_at(f, id);

		if (!s->hist)
			continue;
		memcpy(f->hist_pool + k, s->hist, HEAP_HIST_BUCKETS * sizeof(uint64_t));
		s->hist = f->hist_pool + k;
		k += HEAP_HIST_BUCKETS;
	}
}

struct jt_heap *
heap_freeze(const struct jt_heap *h, size_t tl_from)
{
	struct jt_heap *f = xcalloc(1, sizeof(*f));

	f->origin = heap_identity(h);
	f->memo = h->memo;
	f->nstacks = h->nstacks;
	freeze_stacks(f, h);
	f->tot = h->tot;
	f->filtered_id1 = h->filtered_id1;
	f->peak_ms = h->peak_ms;
	f->peak = h->peak;
	f->now_ms = h->now_ms;
	/* The default clock's argument is the heap itself (its origin_ms, copied): the copy's own. */
	f->clock_arg = h->clock_arg == h ? f : h->clock_arg;
	f->origin_ms = h->origin_ms;
	f->ntl = f->tl_cap = h->ntl;
	f->tl = xmalloc((h->ntl ? h->ntl : 1) * sizeof(*f->tl));
	if (h->ntl)	/* h->tl is NULL before the first sample */
		memcpy(f->tl, h->tl, h->ntl * sizeof(*f->tl));
	tlog_copy_tail(&f->tlog, &h->tlog, tl_from);
	if (h->view) {
		f->nview = h->nview;
		f->view = xmalloc((h->nview ? h->nview : 1) * sizeof(*f->view));
		memcpy(f->view, h->view, h->nview * sizeof(*f->view));	/* h->view is never NULL here */
		f->view_tot = h->view_tot;
		f->view_swapped = h->view_swapped;
	}
	return f;
}

const struct jt_heap *
heap_identity(const struct jt_heap *h)
{
	return h->origin ? h->origin : h;
}

void
heap_frozen_free(struct jt_heap *h)
{
	for (uint32_t c = 0; c < h->nchunks; c++)
		free(h->chunks[c]);
	free(h->chunks);
	free(h->hist_pool);
	free(h->tl);
	tlog_free(&h->tlog);
	free(h->view);
	free(h);
}
