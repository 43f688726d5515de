/* growth.c - each stack's live bytes at every snapshot of a process, for the GROWTH section and JSON "growth". */
#include <stdlib.h>

#include "growth.h"
#include "heap.h"
#include "util.h"

/* One snapshot: when, the heap's events so far, and the live bytes of the stacks that existed then, by id. */
struct growth_point {
	uint64_t time_ms;
	uint64_t events;	/* allocations and frees recorded until then */
	uint32_t nstacks;
	uint64_t *live;
};

struct jt_growth {
	struct growth_point *pts;
	unsigned n, cap;
};

struct jt_growth *
growth_new(void)
{
	return xcalloc(1, sizeof(struct jt_growth));
}

void
growth_destroy(struct jt_growth *g)
{
	if (!g)
		return;
	for (unsigned k = 0; k < g->n; k++)
		free(g->pts[k].live);
	free(g->pts);
	free(g);
}

void
growth_record(struct jt_growth *g, const struct jt_heap *h, uint64_t time_ms)
{
	struct jt_heap_totals t;
	struct growth_point *pt;
	uint32_t id;

	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 8;
		g->pts = xrealloc(g->pts, g->cap * sizeof(*g->pts));
	}
	pt = &g->pts[g->n++];
	heap_totals(h, &t);
	pt->time_ms = time_ms;
	pt->events = t.allocs + t.frees + t.unknown_frees;
	pt->nstacks = heap_stack_count(h);
	pt->live = xmalloc((pt->nstacks ? pt->nstacks : 1) * sizeof(*pt->live));
	for (id = 0; id < pt->nstacks; id++)
		pt->live[id] = heap_stack_get(h, id)->live_bytes;
}

unsigned
growth_count(const struct jt_growth *g)
{
	return g ? g->n : 0;
}

uint64_t
growth_time(const struct jt_growth *g, unsigned k)
{
	return k < g->n ? g->pts[k].time_ms : 0;
}

uint64_t
growth_bytes(const struct jt_growth *g, unsigned k, uint32_t id)
{
	return k < g->n && id < g->pts[k].nstacks ? g->pts[k].live[id] : 0;
}

/*
 * Whether stack id's live bytes rose from each snapshot to the next, in
 * the intervals in which the heap saw any allocation or free: one without
 * (a program held stopped, or starved of CPU, while snapshots fell due)
 * says nothing of how it grows.
 */
static int
growth_every(const struct jt_growth *g, uint32_t id)
{
	for (unsigned k = 1; k < g->n; k++)
		if (g->pts[k].events != g->pts[k - 1].events && growth_bytes(g, k, id) <= growth_bytes(g, k - 1, id))
			return 0;
	return 1;
}

static int
growth_row_cmp(const void *a, const void *b)
{
	const struct growth_row *x = a, *y = b;

	if (x->growth != y->growth)
		return x->growth > y->growth ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

struct growth_row *
growth_rank(const struct jt_growth *g, size_t *n)
{
	const struct growth_point *last;
	struct growth_row *rows;
	uint64_t span_ms;
	uint32_t id;

	*n = 0;
	if (growth_count(g) < 2)
		return NULL;
	last = &g->pts[g->n - 1];
	span_ms = last->time_ms - g->pts[0].time_ms;
	rows = xmalloc((last->nstacks ? last->nstacks : 1) * sizeof(*rows));
	for (id = 0; id < last->nstacks; id++) {
		uint64_t first = growth_bytes(g, 0, id);

		if (last->live[id] <= first)
			continue;
		rows[*n] = (struct growth_row){
			.id = id,
			.growth = last->live[id] - first,
			.rate = span_ms ? (double)(last->live[id] - first) * 1000.0 / (double)span_ms : 0,
			.every = growth_every(g, id),
		};
		(*n)++;
	}
	qsort(rows, *n, sizeof(*rows), growth_row_cmp);
	if (!*n) {
		free(rows);
		return NULL;
	}
	return rows;
}
