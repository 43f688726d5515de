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

/* An address and where its block sits in the unsorted array. */
struct leak_key {
	uint64_t addr;
	uint64_t idx;
};

#define LEAK_RADIX_BITS 16
#define LEAK_RADIX_PASSES 3	/* user addresses have 48 bits on x86-64 (and on every 4-level host) */

/*
 * Sorts b[0..n) by address with an LSD radix sort of (address, index)
 * keys: the check keeps the program stopped while it sorts, and qsort of
 * 10^6 blocks of 48 bytes is a fifth of that pause. Returns the sorted
 * array (b is freed), or falls back to qsort for an address above 48 bits.
 */
static struct leak_block *
leak_sort(struct leak_block *b, size_t n)
{
	struct leak_key *k = xmalloc(n * sizeof(*k)), *tmp = xmalloc(n * sizeof(*tmp));
	size_t *count = xmalloc(((size_t)1 << LEAK_RADIX_BITS) * sizeof(*count));
	struct leak_block *out;
	uint64_t high = 0;

	for (size_t i = 0; i < n; i++) {
		k[i] = (struct leak_key) { b[i].addr, i };
		high |= b[i].addr;
	}
	if (high >> (LEAK_RADIX_BITS * LEAK_RADIX_PASSES)) {
		free(k);
		free(tmp);
		free(count);
		qsort(b, n, sizeof(*b), leak_block_cmp);
		return b;
	}
	for (unsigned pass = 0; pass < LEAK_RADIX_PASSES; pass++) {
		unsigned shift = pass * LEAK_RADIX_BITS;
		size_t sum = 0;
		struct leak_key *t;

		memset(count, 0, ((size_t)1 << LEAK_RADIX_BITS) * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[(k[i].addr >> shift) & 0xffff]++;
		for (size_t d = 0; d < ((size_t)1 << LEAK_RADIX_BITS); d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(k[i].addr >> shift) & 0xffff]++] = k[i];
		t = k;
		k = tmp;
		tmp = t;
	}
	out = xmalloc(n * sizeof(*out));
	for (size_t i = 0; i < n; i++)
		out[i] = b[k[i].idx];
	free(k);
	free(tmp);
	free(count);
	free(b);
	return out;
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
	*n = f.n;
	return leak_sort(f.b, f.n);
}

void
leak_result_clear(struct leak_result *r)
{
	if (!r)
		return;
	free(r->records);
	memset(r, 0, sizeof(*r));
}
