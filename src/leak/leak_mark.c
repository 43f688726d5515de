/* leak_mark.c - memcheck's mark phase: the block index, the read windows, roots, the mark stack and the lost cliques. */
#include <stdlib.h>
#include <string.h>

#include "leak.h"

#include "leak_mark_int.h"

static uint64_t
lk_end(const struct leak_block *b)
{
	/* As memcheck: a 0-size block is found by a pointer to its address. */
	return b->addr + (b->size ? b->size : 1);
}

/* The number of blocks whose address is <= v, searched in [lo, hi). */
static size_t
lk_upper(const uint64_t *start, size_t lo, size_t hi, uint64_t v)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (start[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The block v points into, or -1. */
static inline long
lk_find(const struct lk_ctx *c, uint64_t v)
{
	uint64_t off = v - c->lo;
	size_t k, i;

	if (off >= c->span)
		return -1;
	k = off >> c->shift;
	i = lk_upper(c->start, c->bucket[k], c->bucket[k + 1], v);
	if (i == 0)
		return -1;
	i--;
	return v < lk_end(&c->b[i]) ? (long)i : -1;
}

static int
lk_index(struct lk_ctx *c)
{
	size_t i, k, nb = 1;
	uint64_t hi = 0;

	c->start = malloc(c->n * sizeof(*c->start));
	if (!c->start)
		return -1;
	for (i = 0; i < c->n; i++) {
		c->start[i] = c->b[i].addr;
		if (lk_end(&c->b[i]) > hi)
			hi = lk_end(&c->b[i]);
	}
	c->lo = c->b[0].addr;
	c->span = hi - c->lo;
	while (nb < c->n && nb < LK_MAX_BUCKETS)
		nb <<= 1;
	for (c->shift = 0; c->shift < 63 && ((c->span - 1) >> c->shift) >= nb; c->shift++)
		;
	c->nbuckets = ((c->span - 1) >> c->shift) + 1;
	c->bucket = malloc((c->nbuckets + 1) * sizeof(*c->bucket));
	if (!c->bucket)
		return -1;
	for (k = 0, i = 0; k <= c->nbuckets; k++) {
		while (i < c->n && ((c->start[i] - c->lo) >> c->shift) < k)
			i++;
		c->bucket[k] = (uint32_t)i;
	}
	return 0;
}

/* Whether the cached window in slot s holds [addr, addr + len) (one window) in pages it could read. */
static int
lk_win_has(const struct lk_ctx *c, unsigned s, uint64_t addr, size_t len)
{
	unsigned p0 = (unsigned)((addr & (LK_WIN - 1)) / LK_PAGE);
	unsigned p1 = (unsigned)(((addr + len - 1) & (LK_WIN - 1)) / LK_PAGE);
	uint32_t want = (uint32_t)(((1ull << (p1 + 1)) - 1) & ~((1ull << p0) - 1));

	return c->wtag[s] == (addr >> LK_WIN_SHIFT) + 1 && (c->wpages[s] & want) == want;
}

/*
 * Loads window w into slot s. A window that reaches past a mapping (the
 * first and last of a heap, mostly) is read page by page, so that the
 * blocks in its readable pages still come from it.
 */
static void
lk_win_load(struct lk_ctx *c, unsigned s, uint64_t w)
{
	uint8_t *slot = c->win + (size_t)s * LK_WIN;
	unsigned p;

	c->wtag[s] = w + 1;
	c->wpages[s] = LK_WIN_ALL;
	if (c->in->read(c->in->arg, w << LK_WIN_SHIFT, slot, LK_WIN) == 0)
		return;
	c->wpages[s] = 0;
	for (p = 0; p < LK_WIN / LK_PAGE; p++)
		if (c->in->read(c->in->arg, (w << LK_WIN_SHIFT) + p * LK_PAGE, slot + p * LK_PAGE, LK_PAGE) == 0)
			c->wpages[s] |= 1u << p;
}

/* Reads len bytes at addr: through the window cache when they sit in one window. */
static int
lk_read(struct lk_ctx *c, uint64_t addr, void *dst, size_t len)
{
	uint64_t w = addr >> LK_WIN_SHIFT;
	unsigned s = (unsigned)(w % LK_NWIN);

	if (len == 0)
		return 0;
	if (((addr + len - 1) >> LK_WIN_SHIFT) != w)
		return c->in->read(c->in->arg, addr, dst, len);
	if (c->wtag[s] != w + 1)
		lk_win_load(c, s, w);
	if (!lk_win_has(c, s, addr, len))
		return c->in->read(c->in->arg, addr, dst, len);
	memcpy(dst, c->win + (size_t)s * LK_WIN + (addr & (LK_WIN - 1)), len);
	return 0;
}

/*
 * Reads len bytes at a from a cached window, else alone (without loading
 * a window): the heuristics look at a word or two of a block, often far
 * from the last ones read.
 */
int
lk_peek(struct lk_ctx *c, uint64_t a, void *dst, size_t len)
{
	uint64_t win = a >> LK_WIN_SHIFT;
	unsigned s = (unsigned)(win % LK_NWIN);

	if (((a + len - 1) >> LK_WIN_SHIFT) == win && lk_win_has(c, s, a, len)) {
		memcpy(dst, c->win + (size_t)s * LK_WIN + (a & (LK_WIN - 1)), len);
		return 0;
	}
	return c->in->read(c->in->arg, a, dst, len);
}

/* The word at a, which must lie within block b (else memcheck finds it unaddressable). */
int
lk_word(struct lk_ctx *c, const struct leak_block *b, uint64_t a, uint64_t *w)
{
	if (a < b->addr || a + 8 > b->addr + b->size)
		return -1;
	return lk_peek(c, a, w, 8);
}

static void
lk_push(struct lk_ctx *c, size_t i)
{
	if (!c->b[i].scanned) {
		c->b[i].scanned = 1;
		c->stack[c->top++] = (uint32_t)i;
	}
}

/* memcheck's lc_push_without_clique_if_a_chunk_ptr: the root and mark phase. */
static void
lk_reach(struct lk_ctx *c, uint64_t v, size_t i, int prior_definite)
{
	struct leak_block *b = &c->b[i];
	int start;

	if (b->kind == LEAK_REACHABLE) {
		if (b->heur && v == b->addr)
			b->heur = 0;	/* reached by a start pointer after all */
		return;
	}
	if (v == b->addr)
		start = 1;
	else if (c->in->heuristics) {
		b->heur = (uint8_t)lk_heuristic(c, v, i);
		start = b->heur != 0;
	} else
		start = 0;
	if (start && prior_definite) {
		b->kind = LEAK_REACHABLE;
		lk_push(c, i);		/* (re)scan: what it points to may be upgraded too */
	} else if (b->kind == LK_UNREACHED) {
		b->kind = LEAK_POSSIBLE;
		lk_push(c, i);
	}
}

/* memcheck's lc_push_with_clique_if_a_chunk_ptr: an unreached block joins the clique of leader. */
static void
lk_join(struct lk_ctx *c, size_t i, size_t leader)
{
	struct leak_block *b = &c->b[i], *l = &c->b[leader];

	if (b->kind != LK_UNREACHED || i == leader)
		return;
	lk_push(c, i);
	/* An earlier leader brings its own clique along. */
	l->ind_bytes += b->size + b->ind_bytes;
	l->ind_blocks += 1 + b->ind_blocks;
	b->ind_bytes = b->ind_blocks = 0;
	b->kind = LEAK_INDIRECT;
	b->clique = (int64_t)leader;
}

/* Every word of w[0..nw) that points into a block: clique -1 marks, else gathers the clique. */
static void
lk_scan_words(struct lk_ctx *c, const uint64_t *w, size_t nw, int prior_definite, long clique)
{
	size_t k;

	for (k = 0; k < nw; k++) {
		long i;

		if (w[k] - c->lo >= c->span)
			continue;	/* the common case: no heap address at all */
		i = lk_find(c, w[k]);
		if (i < 0)
			continue;
		if (clique < 0)
			lk_reach(c, w[k], (size_t)i, prior_definite);
		else
			lk_join(c, (size_t)i, (size_t)clique);
	}
}

static uint64_t
lk_up8(uint64_t a)
{
	return (a + 7) & ~(uint64_t)7;
}

/*
 * The root words among w[0..nw), read at base: those in no block (blocks
 * are scanned once reached). Counts them in root_bytes.
 */
static void
lk_scan_gaps(struct lk_ctx *c, const uint64_t *w, uint64_t base, size_t nw)
{
	uint64_t cur = base, end = base + nw * 8;
	size_t i = lk_upper(c->start, 0, c->n, cur);

	if (i > 0 && c->b[i - 1].addr + c->b[i - 1].size > cur)
		i--;
	while (cur < end) {
		uint64_t stop = end, a = lk_up8(cur), e;

		if (i < c->n && c->b[i].addr < end)
			stop = c->b[i].addr;
		e = stop & ~(uint64_t)7;
		if (e > a) {
			lk_scan_words(c, w + (a - base) / 8, (size_t)(e - a) / 8, 1, -1);
			c->st->root_bytes += e - a;
		}
		if (i >= c->n || c->b[i].addr >= end)
			break;
		if (c->b[i].addr + c->b[i].size > cur)
			cur = c->b[i].addr + c->b[i].size;
		i++;
	}
}

/* The words of w[0..nw) read at base: root ones (less the blocks), or a block's. */
static void
lk_scan_buf(struct lk_ctx *c, const uint64_t *w, uint64_t base, size_t nw, int root, int prior_definite,
	    long clique)
{
	if (root)
		lk_scan_gaps(c, w, base, nw);
	else
		lk_scan_words(c, w, nw, prior_definite, clique);
}

/*
 * Scans the aligned words of [a, e) (a, e 8-aligned) in chunks; a chunk
 * that cannot be read is retried page by page and the pages that fail are
 * skipped. Returns the bytes scanned. root: read directly, not through the windows.
 */
static uint64_t
lk_scan_range(struct lk_ctx *c, uint64_t a, uint64_t e, int root, int prior_definite, long clique)
{
	uint64_t p, q, done = 0;

	for (p = a; p < e; p += LK_BUF) {
		size_t len = (size_t)(e - p < LK_BUF ? e - p : LK_BUF);

		/* Root memory is read as it is: the window cache is for blocks, small and many. */
		if ((root ? c->in->read(c->in->arg, p, c->buf, len) : lk_read(c, p, c->buf, len)) == 0) {
			lk_scan_buf(c, (const uint64_t *)c->buf, p, len / 8, root, prior_definite, clique);
			done += len;
			continue;
		}
		for (q = p; q < p + len;) {
			uint64_t qe = (q & ~(uint64_t)(LK_PAGE - 1)) + LK_PAGE;

			if (qe > p + len)
				qe = p + len;
			if (c->in->read(c->in->arg, q, c->buf, (size_t)(qe - q)) == 0) {
				lk_scan_buf(c, (const uint64_t *)c->buf, q, (size_t)(qe - q) / 8, root, prior_definite,
					    clique);
				done += qe - q;
			} else
				c->st->unreadable_bytes += qe - q;
			q = qe;
		}
	}
	return done;
}

/*
 * One root region, less the blocks it overlaps (they are scanned once
 * reached). It is read whole, in large chunks, and the blocks skipped in
 * the buffer: a heap taken as a root after an attach is mostly small gaps
 * between blocks, and a read for each would be a system call per block.
 */
static void
lk_scan_root(struct lk_ctx *c, const struct leak_region *r)
{
	uint64_t a = lk_up8(r->start), e = r->end & ~(uint64_t)7;

	if (e > a)
		lk_scan_range(c, a, e, 1, 1, -1);
}

/* memcheck's lc_process_markstack: scans each pending block once. */
static void
lk_drain(struct lk_ctx *c, long clique)
{
	while (c->top) {
		size_t i = c->stack[--c->top];
		struct leak_block *b = &c->b[i];
		uint64_t a = lk_up8(b->addr), e = (b->addr + b->size) & ~(uint64_t)7;

		b->scanned = 0;
		if (e > a)
			c->st->block_bytes += lk_scan_range(c, a, e, 0, b->kind != LEAK_POSSIBLE, clique);
	}
}

static void
lk_free(struct lk_ctx *c)
{
	free(c->start);
	free(c->bucket);
	free(c->stack);
	free(c->buf);
	free(c->win);
	free(c->head);
	free(c->hstate);
}

int
leak_classify(struct leak_block *b, size_t n, const struct leak_input *in, struct leak_stats *stats)
{
	struct lk_ctx c = { .b = b, .n = n, .in = in, .st = stats };
	size_t i;

	memset(stats, 0, sizeof(*stats));
	for (i = 0; i < n; i++) {
		b[i].kind = LK_UNREACHED;
		b[i].heur = b[i].scanned = 0;
		b[i].clique = -1;
		b[i].ind_bytes = b[i].ind_blocks = 0;
	}
	if (!n)
		return 0;
	c.stack = malloc(n * sizeof(*c.stack));
	c.buf = malloc(LK_BUF);
	c.win = malloc((size_t)LK_NWIN * LK_WIN);
	if (in->heuristics) {
		c.head = calloc(2 * n, sizeof(*c.head));
		c.hstate = calloc(n, 1);
	}
	if (!c.stack || !c.buf || !c.win || (in->heuristics && (!c.head || !c.hstate)) || lk_index(&c) < 0) {
		lk_free(&c);
		return -1;
	}
	/* memcheck's order: memory roots, then registers, then the mark stack. */
	for (i = 0; i < in->nroots; i++)
		lk_scan_root(&c, &in->roots[i]);
	lk_scan_words(&c, in->words, in->nwords, 1, -1);
	lk_drain(&c, -1);
	/* Each block still unreached leads a clique of what it alone reaches. */
	for (i = 0; i < n; i++) {
		if (b[i].kind != LK_UNREACHED)
			continue;
		lk_push(&c, i);
		lk_drain(&c, (long)i);
	}
	lk_free(&c);
	return 0;
}
