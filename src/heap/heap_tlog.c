/* heap_tlog.c - the per-stack side of the heap's timeline, in bounded memory. */
#include <stdlib.h>
#include <string.h>

#include "heap_tlog.h"
#include "util.h"

void
tlog_init(struct jt_tlog *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
	t->step = 1;
}

void
tlog_free(struct jt_tlog *t)
{
	free(t->ch);
	free(t->start);
}

void
tlog_begin(struct jt_tlog *t)
{
	if (t->nsamples == t->start_cap) {
		t->start_cap = t->start_cap ? 2 * t->start_cap : 256;
		t->start = xrealloc(t->start, t->start_cap * sizeof(*t->start));
	}
	t->start[t->nsamples++] = t->nch;
}

void
tlog_put(struct jt_tlog *t, uint32_t id, uint64_t bytes, int replace)
{
	/* Only a snapshot in the ms of the last sample replaces: few entries to look through. */
	for (size_t k = t->start[t->nsamples - 1]; replace && k < t->nch; k++)
		if (t->ch[k].stack_id == id) {
			t->ch[k].live_bytes = bytes;
			return;
		}
	if (t->nch == t->ch_cap) {
		/* Up to the maximum by doubling, past it (a record before tlog_bound) by a quarter. */
		size_t cap = t->ch_cap ? 2 * t->ch_cap : 1024;

		if (cap > t->max)
			cap = t->ch_cap < t->max ? t->max : t->ch_cap + t->ch_cap / 4 + 1;
		t->ch_cap = cap;
		t->ch = xrealloc(t->ch, t->ch_cap * sizeof(*t->ch));
	}
	t->ch[t->nch++] = (struct jt_heap_change){ id, bytes };
}

/*
 * One merge pass: the entries of dropped records wait in pend (one per
 * stack, its latest value) for the next kept record, which takes those of
 * them it does not list itself. A value moved forward is still the stack's
 * value at the kept sample, since it did not change in between. It writes
 * over ch in place: every entry out comes from one read at or before it,
 * so the output never overtakes the input.
 */
struct tlog_pass {
	struct jt_heap_change *out, *pend;
	size_t nout, npend;
	size_t *pend_at;	/* per stack: its index in pend + 1, or 0 */
	size_t *kept_in;	/* per stack: 1 + the kept sample whose own record lists it */
};

static void
pass_hold(struct tlog_pass *p, const struct jt_heap_change *c)
{
	size_t *at = &p->pend_at[c->stack_id];

	if (*at) {
		p->pend[*at - 1].live_bytes = c->live_bytes;
		return;
	}
	p->pend[p->npend] = *c;
	*at = ++p->npend;
}

static void
pass_keep(struct tlog_pass *p, const struct jt_heap_change *rec, size_t n, size_t sample)
{
	for (size_t k = 0; k < n; k++) {
		struct jt_heap_change c = rec[k];	/* out may be at rec itself */

		p->out[p->nout++] = c;
		p->kept_in[c.stack_id] = sample + 1;
	}
	for (size_t k = 0; k < p->npend; k++) {
		if (p->kept_in[p->pend[k].stack_id] != sample + 1)
			p->out[p->nout++] = p->pend[k];
		p->pend_at[p->pend[k].stack_id] = 0;
	}
	p->npend = 0;
}

/* Keeps the records of the samples i with (i + 1) % step == 0, and the last; the others join the next kept one. */
static void
tlog_merge(struct jt_tlog *t, uint32_t nstacks, size_t step)
{
	struct tlog_pass p = {
		.out = t->ch,
		.pend = xmalloc(((t->nch < nstacks ? t->nch : nstacks) + 1) * sizeof(*p.pend)),
		.pend_at = xcalloc(nstacks + 1, sizeof(*p.pend_at)),
		.kept_in = xcalloc(nstacks + 1, sizeof(*p.kept_in)),
	};

	for (size_t i = 0; i < t->nsamples; i++) {
		size_t b = t->start[i], e = i + 1 < t->nsamples ? t->start[i + 1] : t->nch;

		t->start[i] = p.nout;
		if (i + 1 == t->nsamples || (i + 1) % step == 0)
			pass_keep(&p, t->ch + b, e - b, i);
		else
			for (size_t k = b; k < e; k++)
				pass_hold(&p, &t->ch[k]);
	}
	t->nch = p.nout;
	t->step = step;
	t->merged_upto = t->nsamples - 1;
	free(p.pend);
	free(p.pend_at);
	free(p.kept_in);
}

/*
 * Doubles the step until the entries fit in half the maximum, or every
 * record before the last is merged: each pass costs the entries kept, and
 * halves the records, so the cost per entry stays constant amortized.
 */
void
tlog_bound(struct jt_tlog *t, uint32_t nstacks)
{
	if (t->nch <= t->max)
		return;
	while (t->nch > t->max / 2) {
		if (t->step < t->nsamples)
			t->step *= 2;
		else if (t->merged_upto + 1 >= t->nsamples)
			break;	/* all in the last record: the stacks alone exceed it */
		tlog_merge(t, nstacks, t->step);
	}
}

void
tlog_copy_tail(struct jt_tlog *dst, const struct jt_tlog *src, size_t from)
{
	size_t base = from < src->nsamples ? src->start[from] : src->nch;

	*dst = *src;
	dst->start_cap = src->nsamples;
	dst->start = xmalloc((src->nsamples ? src->nsamples : 1) * sizeof(*dst->start));
	for (size_t i = 0; i < src->nsamples; i++)
		dst->start[i] = i < from ? 0 : src->start[i] - base;
	dst->nch = dst->ch_cap = src->nch - base;
	dst->ch = xmalloc((dst->nch ? dst->nch : 1) * sizeof(*dst->ch));
	if (dst->nch)	/* src->ch is NULL before the first entry */
		memcpy(dst->ch, src->ch + base, dst->nch * sizeof(*dst->ch));
}

const struct jt_heap_change *
tlog_get(const struct jt_tlog *t, size_t i, size_t *n)
{
	static const struct jt_heap_change none[1];

	*n = 0;
	if (i >= t->nsamples || (i < t->merged_upto && (i + 1) % t->step != 0))
		return NULL;
	*n = (i + 1 < t->nsamples ? t->start[i + 1] : t->nch) - t->start[i];
	return *n ? t->ch + t->start[i] : none;
}
