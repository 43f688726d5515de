/* test_heap_stacks.c - unit test of the stack table (interning, invalid frees per stack, ranking, clear_live) and the heap's clock, with exact figures. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "heap_test.h"
#include "tap.h"

static void
test_intern(void)
{
	struct jt_heap *h = heap_new();
	uint64_t a[] = { 0x401000, 0x402000, 0x403000 };
	uint64_t b[] = { 0x401000, 0x402000, 0x403000 };
	uint64_t c[] = { 0x401000, 0x402000, 0x403001 };
	uint32_t ia, ib, ic, ishort, i0, i0b;
	const struct jt_stack *s;

	is_u64(heap_stack_count(h), 0, "intern: new heap has no stacks");
	ia = heap_stack_intern(h, a, 3);
	ib = heap_stack_intern(h, b, 3);
	ic = heap_stack_intern(h, c, 3);
	ishort = heap_stack_intern(h, a, 2);
	i0 = heap_stack_intern(h, a, 0);
	i0b = heap_stack_intern(h, NULL, 0);
	is_u64(ia, 0, "intern: first stack gets id 0");
	is_u64(ib, ia, "intern: equal pcs in another array give the same id");
	is_u64(ic, 1, "intern: different last pc gives a new id");
	is_u64(ishort, 2, "intern: same prefix, shorter depth gives a new id");
	is_u64(i0, 3, "intern: depth 0 is a stack of its own");
	is_u64(i0b, i0, "intern: depth 0 with NULL pcs is the same empty stack");
	is_u64(heap_stack_count(h), 4, "intern: count is 4");

	a[0] = 0xdead;	/* the heap must have copied the pcs */
	s = heap_stack_get(h, ia);
	ok(s && s->id == ia && s->depth == 3 && s->pcs[0] == 0x401000 &&
	   s->pcs[2] == 0x403000, "intern: stack 0 keeps its own copy of the pcs");
	s = heap_stack_get(h, i0);
	ok(s && s->depth == 0 && s->live_blocks == 0 && s->alloc_calls == 0,
	   "intern: empty stack has depth 0 and zero counters");
	ok(heap_stack_get(h, 4) == NULL, "intern: id 4 is out of range");
	ok(heap_stack_get(h, UINT32_MAX) == NULL, "intern: id UINT32_MAX is out of range");
	heap_destroy(h);
}

/* A stack cut at --depth is not the whole stack that happens to have the same pcs. */
static void
test_intern_cut(void)
{
	struct jt_heap *h = heap_new();
	uint64_t a[] = { 0x401000, 0x402000 };
	uint32_t whole = heap_stack_intern(h, a, 2);
	uint32_t cut = heap_stack_intern_cut(h, a, 2, 1);
	const struct jt_stack *s = heap_stack_get(h, cut);

	ok(whole != cut, "intern cut: a cut stack and a whole one with the same pcs differ");
	is_u64(heap_stack_intern_cut(h, a, 2, 1), cut, "intern cut: the same cut stack again has the same id");
	is_u64(heap_stack_intern_cut(h, a, 2, 0), whole, "intern cut: truncated 0 is heap_stack_intern");
	ok(s && s->truncated && s->depth == 2, "intern cut: the cut stack is marked truncated");
	ok(!heap_stack_get(h, whole)->truncated, "intern cut: the whole one is not");
	heap_destroy(h);
}

/* Many stacks: ids stay dense, re-interning finds them, pointers never move. */
static void
test_intern_many(void)
{
	struct jt_heap *h = heap_new();
	const struct jt_stack *first = NULL;
	uint64_t pcs[8];
	uint32_t i, d, bad_new = 0, bad_again = 0;
	const uint32_t n = 20000;

	for (i = 0; i < n; i++) {
		d = i % 8 + 1;
		for (uint32_t k = 0; k < d; k++)
			pcs[k] = 0x400000 + 16ULL * (i / 8) + k;
		if (heap_stack_intern(h, pcs, d) != i)
			bad_new++;
		if (i == 0)
			first = heap_stack_get(h, 0);
	}
	for (i = 0; i < n; i++) {
		d = i % 8 + 1;
		for (uint32_t k = 0; k < d; k++)
			pcs[k] = 0x400000 + 16ULL * (i / 8) + k;
		if (heap_stack_intern(h, pcs, d) != i)
			bad_again++;
	}
	is_u64(bad_new, 0, "intern many: every new stack got the next dense id");
	is_u64(bad_again, 0, "intern many: re-interning returns the original id");
	is_u64(heap_stack_count(h), n, "intern many: count");
	ok(heap_stack_get(h, 0) == first, "intern many: stack pointers are stable across growth");
	heap_destroy(h);
}

/*
 * Invalid frees: counted per stack and as unknown frees, listed most first
 * (ties by id), kept apart from live figures, and gone with the image.
 */
static void
test_invalid_frees(void)
{
	struct jt_heap *h = heap_new();
	uint64_t pc[4] = { 0x100, 0x200, 0x300, 0x400 };
	uint32_t s[4], ids[4], n;
	struct jt_heap_totals want;

	for (int i = 0; i < 4; i++)
		s[i] = heap_stack_intern(h, &pc[i], 1);
	is_u64(heap_rank_stacks(h, HEAP_RANK_INVALID, ids, 4), 0, "invalid: none at first");
	heap_alloc(h, 0x9000, 32, s[0]);
	heap_invalid_free(h, s[2], 0);
	heap_invalid_free(h, s[1], 0);
	heap_invalid_free(h, s[2], 0);
	heap_invalid_free(h, s[3], 0);
	heap_invalid_free(h, s[2], 1);
	heap_unknown_free(h);
	ok(heap_invalid_free(h, 99, 0) == -1, "invalid: an unknown stack id is refused");
	want = (struct jt_heap_totals){ .bytes_allocated = 32, .live_bytes = 32, .live_blocks = 1,
		.peak_live_bytes = 32, .allocs = 1, .unknown_frees = 6, .invalid_frees = 5, .inside_frees = 1 };
	check_totals(h, &want, "invalid frees");
	is_u64(heap_stack_get(h, s[2])->invalid_frees, 3, "invalid: per stack");
	is_u64(heap_stack_get(h, s[2])->inside_frees, 1, "invalid: inside a live block, per stack");
	is_u64(heap_stack_get(h, s[1])->inside_frees, 0, "invalid: inside a live block, only where counted");
	n = heap_rank_stacks(h, HEAP_RANK_INVALID, ids, 4);
	ok(n == 3 && ids[0] == s[2] && ids[1] == s[1] && ids[2] == s[3],
	   "invalid: order 2,1,3 (most first, then id; got %u: %u,%u,%u)", n, ids[0], ids[1], ids[2]);
	is_u64(heap_rank_stacks(h, HEAP_RANK_INVALID, ids, 1), 1, "invalid: max 1 writes one");
	is_u64(heap_rank_stacks(h, HEAP_RANK_LIVE, ids, 4), 1, "invalid: only the live stack is in the top");
	heap_clear_live(h);
	is_u64(heap_rank_stacks(h, HEAP_RANK_INVALID, ids, 4), 0, "invalid: clear_live forgets them");
	want = (struct jt_heap_totals){ .bytes_allocated = 32, .peak_live_bytes = 32, .allocs = 1,
		.unknown_frees = 6 };
	check_totals(h, &want, "invalid frees after clear_live");
	heap_destroy(h);
}

/* Ties: equal bytes rank more blocks first, then the lower id. */
static void
test_top_and_clear(void)
{
	struct jt_heap *h = heap_new();
	uint32_t s[7], ids[10], i, n;
	uint64_t pc, size;
	struct jt_heap_totals want;

	for (i = 0; i < 7; i++) {
		pc = 0x1000 + i;
		s[i] = heap_stack_intern(h, &pc, 1);
	}
	heap_alloc(h, 0xa000, 100, s[0]);
	heap_alloc(h, 0xa100, 50, s[1]);
	heap_alloc(h, 0xa200, 50, s[1]);
	heap_alloc(h, 0xa300, 60, s[2]);
	heap_alloc(h, 0xa400, 40, s[2]);
	heap_alloc(h, 0xa500, 500, s[3]);
	heap_alloc(h, 0xa600, 999, s[4]);
	heap_free(h, 0xa600, NULL, 0);		/* s4: no live block left */
	heap_alloc(h, 0xa700, 100, s[6]);	/* s5 is never used */

	n = heap_rank_stacks(h, HEAP_RANK_LIVE, ids, 10);
	is_u64(n, 5, "top: five stacks have live blocks");
	ok(n == 5 && ids[0] == s[3] && ids[1] == s[1] && ids[2] == s[2] &&
	   ids[3] == s[0] && ids[4] == s[6],
	   "top: order is 3,1,2,0,6 (got %u,%u,%u,%u,%u)", ids[0], ids[1], ids[2], ids[3], ids[4]);
	memset(ids, 0xff, sizeof(ids));
	n = heap_rank_stacks(h, HEAP_RANK_LIVE, ids, 3);
	ok(n == 3 && ids[0] == s[3] && ids[1] == s[1] && ids[2] == s[2] && ids[3] == UINT32_MAX,
	   "top: max 3 writes exactly the first three");
	is_u64(heap_rank_stacks(h, HEAP_RANK_LIVE, NULL, 0), 0, "top: max 0 writes nothing");

	heap_clear_live(h);
	/* Peak was 1799, just before the 999-byte block was freed. */
	want = (struct jt_heap_totals){ .bytes_allocated = 1899, .live_bytes = 0,
		.live_blocks = 0, .peak_live_bytes = 1799, .allocs = 8, .frees = 1 };
	check_totals(h, &want, "clear_live");
	check_stack(h, s[1], 0, 0, 2, 100, "clear_live keeps alloc counters");
	check_stack(h, s[4], 0, 0, 1, 999, "clear_live keeps alloc counters");
	is_u64(heap_rank_stacks(h, HEAP_RANK_LIVE, ids, 10), 0, "top after clear_live: nothing live");
	ok(heap_lookup(h, 0xa500, NULL, NULL) == -1, "clear_live: old block is gone");
	ok(heap_free(h, 0xa500, NULL, 0) == -1, "clear_live: freeing an old block is unknown");
	heap_unknown_free(h);
	is_u64(heap_alloc(h, 0xa500, 7, s[5]), 0, "clear_live: the address can be reused (returns 0)");
	ok(heap_lookup(h, 0xa500, &size, NULL) == 0 && size == 7, "clear_live: reused block reads 7");
	want = (struct jt_heap_totals){ .bytes_allocated = 1906, .live_bytes = 7,
		.live_blocks = 1, .peak_live_bytes = 1799, .allocs = 9, .frees = 1,
		.unknown_frees = 1 };
	check_totals(h, &want, "after clear_live and reuse");
	heap_destroy(h);
}

static uint64_t
clock_of(void *arg)
{
	return *(const uint64_t *)arg;
}

/* heap_clock_from: a heap that follows another (the next image of a process) goes on with its time_ms. */
static void
test_clock_from(void)
{
	struct jt_heap *a = heap_new(), *b, *c = heap_new(), *d;
	uint64_t now = 1234, ta, tb;

	heap_set_clock(c, clock_of, &now);
	d = heap_new();
	heap_clock_from(d, c);
	is_u64(heap_clock_ms(d), 1234, "clock_from: the caller's clock is taken over");
	now = 5678;
	is_u64(heap_clock_ms(d), 5678, "clock_from: and followed");
	usleep(60 * 1000);
	b = heap_new();
	heap_clock_from(b, a);
	ta = heap_clock_ms(a);
	tb = heap_clock_ms(b);
	ok(ta >= 50 && tb + 1 >= ta && tb <= ta + 1, "clock_from: the default clock goes on from the first heap's origin "
	   "(%llu ms and %llu ms, 60 ms after it)", (unsigned long long)ta, (unsigned long long)tb);
	heap_destroy(a);
	heap_destroy(b);
	heap_destroy(c);
	heap_destroy(d);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_intern();
	test_intern_cut();
	test_intern_many();
	test_invalid_frees();
	test_top_and_clear();
	test_clock_from();
	return tap_done();
}
