/* heap_view.c - a snapshot's view of the live blocks (each stack's block ages and, with --older-than, only the blocks old enough), and its readers' memo. */
#include <stdlib.h>

#include "heap.h"
#include "heap_int.h"
#include "live.h"
#include "util.h"

/* heap_view_begin's heap, moment and minimum age, for live_each. */
struct view_walk {
	struct jt_heap *h;
	uint32_t now;		/* the clock's ms in 32 bits, as the stamps */
	uint64_t min_age_ms;
};

/* Counts a block in its stack's view entry when the view counts it (its age, now - stamp, is enough). */
static void
view_count(void *arg, uint64_t addr, const struct jt_block *b)
{
	const struct view_walk *w = arg;
	struct jt_heap *h = w->h;
	struct view_stack *v = &h->view[b->stack_id];
	uint32_t age = w->now - b->stamp;
	uint64_t size = b->size;

	(void)addr;
	if (age < w->min_age_ms)
		return;
	if (!v->blocks || age > v->oldest)
		v->oldest = age;
	if (!v->blocks || age < v->newest)
		v->newest = age;
	v->bytes += size;
	v->blocks++;
	h->view_tot.live_bytes += size;
	h->view_tot.live_blocks++;
}

/* Exchanges every stack's live figures and the totals' with the view's. */
static void
view_swap(struct jt_heap *h)
{
	uint64_t x;

	for (uint32_t id = 0; id < h->nview; id++) {
		struct jt_stack *s = stack_at(h, id);
		struct view_stack *v = &h->view[id];

		x = s->live_bytes, s->live_bytes = v->bytes, v->bytes = x;
		x = s->live_blocks, s->live_blocks = v->blocks, v->blocks = x;
	}
	x = h->tot.live_bytes, h->tot.live_bytes = h->view_tot.live_bytes, h->view_tot.live_bytes = x;
	x = h->tot.live_blocks, h->tot.live_blocks = h->view_tot.live_blocks, h->view_tot.live_blocks = x;
	h->view_swapped = !h->view_swapped;
}

/* One pass over the live table: a snapshot's cost, O(table), nothing per event. */
void
heap_view_begin(struct jt_heap *h, uint64_t now_ms, uint64_t min_age_ms)
{
	struct view_walk w = { h, (uint32_t)now_ms, min_age_ms };

	heap_view_end(h);
	h->nview = h->nstacks;
	h->view = xcalloc(h->nview ? h->nview : 1, sizeof(*h->view));
	h->view_tot = (struct jt_heap_totals){ 0 };
	live_each(h->live, view_count, &w);
	if (min_age_ms)
		view_swap(h);
}

void
heap_view_end(struct jt_heap *h)
{
	if (h->view_swapped)
		view_swap(h);
	free(h->view);
	h->view = NULL;
	h->nview = 0;
}

int
heap_stack_age(const struct jt_heap *h, uint32_t id, uint64_t *oldest_ms, uint64_t *newest_ms)
{
	const struct view_stack *v = id < h->nview ? &h->view[id] : NULL;

	/* The view's count is in the stack while swapped, in the entry otherwise. */
	if (!v || !(h->view_swapped ? stack_at(h, id)->live_blocks : v->blocks))
		return -1;
	*oldest_ms = v->oldest;
	*newest_ms = v->newest;
	return 0;
}

uintptr_t *
heap_memo(const struct jt_heap *h, const void *owner, uint32_t id)
{
	struct heap_memo *m = h->memo;

	if (m->owner != owner) {
		free(m->v);
		*m = (struct heap_memo){ .owner = owner };
	}
	if (id >= m->n) {
		uint32_t n = id + 1 > 2 * m->n ? id + 1 : 2 * m->n;

		m->v = xrealloc(m->v, n * sizeof(*m->v));
		for (uint32_t i = m->n; i < n; i++)
			m->v[i] = 0;
		m->n = n;
	}
	return &m->v[id];
}
