/* growth.c - each stack's live bytes at every snapshot of a process, for the GROWTH section and JSON "growth". */
#include <stdlib.h>

#include "growth.h"
#include "heap.h"
#include "util.h"

/*
 * The history is bounded whatever the number of snapshots (issue 33): a
 * point costs 8 bytes a stack, and --interval 1 for a day would otherwise
 * keep 86,400 of them. Past GROWTH_POINTS_MAX points every other one goes
 * (the first and the last stay), so those kept are spread over the whole
 * run, at most twice as far apart as each other. What a dropped point
 * knew of "every interval" is not lost: each stack's flag is kept up to
 * date at every snapshot, kept or not.
 */

/* One snapshot: when, the heap's events so far, and the live bytes of the stacks that existed then, by id. */
struct growth_point {
	uint64_t time_ms;
	uint64_t events;	/* allocations and frees recorded until then */
	uint32_t nstacks;
	uint64_t *live;
};

struct jt_growth {
	struct growth_point *pts;	/* the points kept, oldest first */
	unsigned n, cap, max;		/* max: GROWTH_POINTS_MAX, or a test's */
	unsigned recorded;		/* snapshots recorded, kept or not */
	unsigned busy;			/* intervals so far in which the heap saw events */
	/* Per stack, at the latest snapshot: its live bytes, and whether it did not grow in some busy interval. */
	uint64_t *last;
	uint8_t *flat;
	uint32_t nlast;
	uint64_t last_events;
};

struct jt_growth *
growth_new(void)
{
	struct jt_growth *g = xcalloc(1, sizeof(struct jt_growth));

	g->max = GROWTH_POINTS_MAX;
	return g;
}

void
growth_set_max(struct jt_growth *g, unsigned max)
{
	g->max = max < 3 ? 3 : max;
}

void
growth_destroy(struct jt_growth *g)
{
	if (!g)
		return;
	for (unsigned k = 0; k < g->n; k++)
		free(g->pts[k].live);
	free(g->pts);
	free(g->last);
	free(g->flat);
	free(g);
}

/* Drops every other point but the first and the last: the points left are evenly spread again. */
static void
growth_thin(struct jt_growth *g)
{
	unsigned k, kept = 0;

	for (k = 0; k < g->n; k++) {
		if (k % 2 == 0 || k == g->n - 1)
			g->pts[kept++] = g->pts[k];
		else
			free(g->pts[k].live);
	}
	g->n = kept;
}

/*
 * Updates every stack's "flat" flag for the interval that ends now: a
 * stack made since the last snapshot held 0 in every interval before, so it
 * is flat already when one of them was busy.
 */
static void
growth_flags(struct jt_growth *g, const struct jt_heap *h, uint64_t events)
{
	uint32_t id, nstacks = heap_stack_count(h);
	int busy = g->recorded > 0 && events != g->last_events;

	if (nstacks > g->nlast) {
		g->last = xrealloc(g->last, nstacks * sizeof(*g->last));
		g->flat = xrealloc(g->flat, nstacks);
		for (id = g->nlast; id < nstacks; id++) {
			g->last[id] = 0;
			g->flat[id] = g->busy > 0;
		}
		g->nlast = nstacks;
	}
	for (id = 0; id < nstacks; id++) {
		uint64_t now = heap_stack_get(h, id)->live_bytes;

		if (busy && now <= g->last[id])
			g->flat[id] = 1;
		g->last[id] = now;
	}
	g->busy += busy;
	g->last_events = events;
}

void
growth_record(struct jt_growth *g, const struct jt_heap *h, uint64_t time_ms)
{
	struct jt_heap_totals t;
	struct growth_point *pt;
	uint32_t id;

	heap_totals(h, &t);
	growth_flags(g, h, t.allocs + t.frees + t.unknown_frees);
	g->recorded++;
	if (g->n == g->max)
		growth_thin(g);
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 8;
		g->pts = xrealloc(g->pts, g->cap * sizeof(*g->pts));
	}
	pt = &g->pts[g->n++];
	pt->time_ms = time_ms;
	pt->events = g->last_events;
	pt->nstacks = heap_stack_count(h);
	pt->live = xmalloc((pt->nstacks ? pt->nstacks : 1) * sizeof(*pt->live));
	for (id = 0; id < pt->nstacks; id++)
		pt->live[id] = g->last[id];
}

unsigned
growth_snapshots(const struct jt_growth *g)
{
	return g ? g->recorded : 0;
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
 * says nothing of how it grows. Every snapshot's, kept or not.
 */
static int
growth_every(const struct jt_growth *g, uint32_t id)
{
	return id < g->nlast ? !g->flat[id] : g->busy == 0;
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
