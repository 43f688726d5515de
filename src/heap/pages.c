/* pages.c - the program's own anonymous mappings and brk growth (--pages), as regions in a heap table of their own. */
#include <stdlib.h>

#include "heap.h"
#include "pages.h"
#include "util.h"

#define PAGE_SIZE 4096u

static uint64_t
pages_clock(void *arg)
{
	return heap_clock_ms(arg);
}

struct jt_heap *
pages_new(const struct jt_heap *heap)
{
	struct jt_heap *pg = heap_new();

	heap_set_clock(pg, pages_clock, (void *)heap);
	return pg;
}

uint64_t
pages_round(uint64_t len)
{
	return len > UINT64_MAX - (PAGE_SIZE - 1) ? len : (len + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
}

/* The regions that overlap [lo, hi), collected before any changes the table. */
struct pages_hits {
	uint64_t lo, hi;
	struct pages_region { uint64_t addr, size; uint32_t stack_id; } *v;
	size_t n, cap;
};

static void
pages_hit(void *arg, uint64_t addr, uint64_t size, uint32_t stack_id)
{
	struct pages_hits *ph = arg;

	if (addr >= ph->hi || addr + size <= ph->lo)
		return;
	if (ph->n == ph->cap) {
		ph->cap = ph->cap ? 2 * ph->cap : 8;
		ph->v = xrealloc(ph->v, ph->cap * sizeof(*ph->v));
	}
	ph->v[ph->n++] = (struct pages_region){ addr, size, stack_id };
}

static void
pages_find(const struct jt_heap *pg, uint64_t lo, uint64_t hi, struct pages_hits *ph)
{
	*ph = (struct pages_hits){ .lo = lo, .hi = hi };
	if (lo < hi)
		heap_each_live(pg, pages_hit, ph);
}

void
pages_unmap(struct jt_heap *pg, uint64_t addr, uint64_t len)
{
	struct pages_hits ph;

	pages_find(pg, addr, addr + len, &ph);
	for (size_t i = 0; i < ph.n; i++)
		heap_carve(pg, ph.v[i].addr, addr, addr + len);
	free(ph.v);
}

void
pages_map(struct jt_heap *pg, uint64_t addr, uint64_t len, uint32_t stack_id)
{
	if (!len)
		return;
	pages_unmap(pg, addr, len);
	heap_alloc(pg, addr, len, stack_id);
}

void
pages_remap(struct jt_heap *pg, uint64_t old, uint64_t old_len, uint64_t addr, uint64_t len,
	    uint32_t stack_id, int keep_old)
{
	uint64_t keep = old_len < len ? old_len : len, grow = len > old_len ? len - old_len : 0;
	struct pages_hits ph;

	pages_find(pg, old, old + old_len, &ph);
	/* Off first, then on: the new range may overlap the old one (growing or shrinking in place). */
	if (!keep_old)
		pages_unmap(pg, old, old_len);
	pages_unmap(pg, addr, len);
	for (size_t i = 0; i < ph.n; i++) {
		struct pages_region *r = &ph.v[i];
		uint64_t lo = r->addr > old ? r->addr : old;
		uint64_t hi = r->addr + r->size < old + keep ? r->addr + r->size : old + keep;

		/* The region that reached the old end grows with the mapping: it stays one region. */
		if (lo < hi && heap_place(pg, addr + (lo - old), hi - lo + (hi == old + old_len ? grow : 0),
					  r->stack_id) == 0 && hi == old + old_len)
			grow = 0;
	}
	/* Growth of a mapping whose end was not a region of ours (pages counted only in part). */
	if (ph.n && grow)
		heap_place(pg, addr + old_len, grow, stack_id);
	free(ph.v);
}
