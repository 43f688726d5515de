/* leak_heur.c - memcheck's interior-pointer heuristics (stdstring, length64, newarray, multipleinheritance) for the mark phase. */
#include <string.h>

#include "leak_mark_int.h"

static const struct leak_region *
lk_region_of(const struct leak_region *r, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && a < r[lo - 1].end ? &r[lo - 1] : NULL;
}

/* memcheck's aligned_ptr_above_page0_is_vtable_addr: two function pointers among its first 21 words. */
static int
lk_is_vtable(struct lk_ctx *c, uint64_t p)
{
	const struct leak_input *in = c->in;
	const struct leak_region *r = lk_region_of(in->vtables, in->nvtables, p), *tx = in->texts;
	size_t ntx = in->ntexts, nw, i, got = 0;
	uint64_t w[LK_VT_WORDS], last;

	if (!r)
		return 0;
	if (!ntx) {
		tx = in->vtables;
		ntx = in->nvtables;
	}
	/* memcheck stops one word short of the mapping's end: so do we. */
	last = p + (LK_VT_WORDS - 1) * 8;
	if (r->end < 9 || last > r->end - 9)
		last = r->end - 9;
	if (last < p)
		return 0;
	nw = (size_t)((last - p) / 8 + 1);
	if (in->read(in->arg, p, w, nw * 8) != 0) {
		/* memcheck reads word by word and gives up at the first fault. */
		while (nw && in->read(in->arg, p + 8 * got, &w[got], 8) == 0 && ++got < nw)
			;
		nw = got;
	}
	for (i = 0, got = 0; i < nw; i++) {
		if (w[i] == 0)
			continue;
		if (!lk_region_of(tx, ntx, w[i]))
			return 0;
		if (++got == 2)
			return 1;
	}
	return 0;
}

/*
 * A block's first two words, read once: the heuristics test them again for
 * every interior pointer into a block not yet reachable, and there may be
 * millions. Returns -1 when they cannot be read (memcheck's fault catcher).
 */
static int
lk_head(struct lk_ctx *c, size_t i, uint64_t *w0, uint64_t *w1)
{
	const struct leak_block *b = &c->b[i];
	uint8_t *hs = &c->hstate[i];

	if (!(*hs & LK_HEAD_READ)) {
		size_t len = b->size >= 16 ? 16 : b->size >= 8 ? 8 : 0;

		*hs |= LK_HEAD_READ;
		if (len && lk_peek(c, b->addr, &c->head[2 * i], len) != 0)
			*hs |= LK_HEAD_BAD;
	}
	*w0 = c->head[2 * i];
	*w1 = c->head[2 * i + 1];
	return *hs & LK_HEAD_BAD ? -1 : 0;
}

/* Whether block i's first word w0 is a vtable pointer (memcheck's test, once per block). */
static int
lk_head_vtable(struct lk_ctx *c, size_t i, uint64_t w0)
{
	uint8_t *hs = &c->hstate[i];

	if (!(*hs & LK_VT_KNOWN))
		*hs |= LK_VT_KNOWN | (w0 % 8 == 0 && w0 >= LK_PAGE && lk_is_vtable(c, w0) ? LK_VT_YES : 0);
	return (*hs & LK_VT_YES) != 0;
}

/*
 * memcheck's heuristic_reachedness for an interior pointer v into block i:
 * a heuristic's bit number + 1, or 0. The tests are memcheck's, in its
 * order; within multipleinheritance (the last, so any failure means 0) the
 * block's own vtable is tested first, as it is known once per block.
 */
unsigned
lk_heuristic(struct lk_ctx *c, uint64_t v, size_t i)
{
	const struct leak_block *b = &c->b[i];
	unsigned set = c->in->heuristics;
	uint64_t w0, w1, inner;

	int mi = (set & LEAK_HEUR_MULTIPLEINHERITANCE) && v % 8 == 0 && b->size >= 8 && v <= b->addr + b->size - 8;

	/* Where no heuristic can apply, memcheck reads nothing either. */
	if (!mi && v != b->addr + 8 && v != b->addr + 24)
		return 0;
	if (lk_head(c, i, &w0, &w1) != 0)
		return 0;
	/* v inside the block: v == addr + 24 means size >= 25, so both words are in it. */
	if ((set & LEAK_HEUR_STDSTRING) && v == b->addr + 24 && 24 + w1 + 1 == b->size && w0 <= w1)
		return 1;
	if ((set & LEAK_HEUR_LENGTH64) && v == b->addr + 8 && w0 > 0 && b->size - 8 == w0)
		return 2;
	if ((set & LEAK_HEUR_NEWARRAY) && v == b->addr + 8 && w0 > 0 && (b->size - 8) % w0 == 0)
		return 3;
	if (!mi)
		return 0;
	if (!lk_head_vtable(c, i, w0) || lk_word(c, b, v, &inner) != 0)
		return 0;
	return inner % 8 == 0 && inner >= LK_PAGE && lk_is_vtable(c, inner) ? 4 : 0;
}
