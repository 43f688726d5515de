/* leak.c - the live blocks a leak check classifies (leak_mark.c), and the result it leaves (leak_records.c). */
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "leak.h"
#include "util.h"

struct leak_fill {
	struct leak_block *b;
	size_t n;
};

static void
leak_fill_one(void *arg, uint64_t addr, uint64_t size, uint32_t stack_id)
{
	struct leak_fill *f = arg;
	struct leak_block *lb = &f->b[f->n++];

	memset(lb, 0, sizeof(*lb));
	lb->addr = addr;
	lb->size = size;
	lb->stack_id = stack_id;
	lb->kind = LEAK_DEFINITE;
	lb->clique = -1;
}

static int
leak_block_cmp(const void *a, const void *b)
{
	const struct leak_block *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct leak_block *
leak_blocks_of(const struct jt_heap *h, size_t *n)
{
	struct jt_heap_totals tot;
	struct leak_fill f = { 0 };

	heap_totals(h, &tot);
	*n = 0;
	if (!tot.live_blocks)
		return NULL;
	f.b = xmalloc(tot.live_blocks * sizeof(*f.b));
	heap_each_live(h, leak_fill_one, &f);
	qsort(f.b, f.n, sizeof(*f.b), leak_block_cmp);
	*n = f.n;
	return f.b;
}

void
leak_result_clear(struct leak_result *r)
{
	if (!r)
		return;
	free(r->records);
	memset(r, 0, sizeof(*r));
}
