/* test_heap.c - unit test of the live-block table and the stack table, with exact figures. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "rng.h"
#include "tap.h"
#include "util.h"

#define GIB		(1ULL << 30)
#define STRESS_BITS	21			/* 2^21 = 2,097,152 blocks */
#define STRESS_N	(1u << STRESS_BITS)
#define STRESS_STACKS	1000u
#define CHURN_OPS	100000u
#define CHURN_ADDRS	1200u			/* ~700 live in 1024 slots: long clusters */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#else
#define UNDER_ASAN 0
#endif


/*
 * A bijection on STRESS_BITS-bit numbers (odd multiplies and xor-shifts
 * are each invertible), so blocks get distinct addresses and can be freed
 * in a scrambled order without the test holding millions of entries.
 */
static uint32_t
perm(uint32_t x, uint32_t key)
{
	const uint32_t mask = STRESS_N - 1;

	x = (x * 0x9e3779b1u + key) & mask;
	x ^= x >> 11;
	x = (x * 0x85ebca6bu) & mask;
	x ^= x >> 9;
	x = (x * 0xc2b2ae35u + (key >> 3)) & mask;
	return x ^ (x >> 13);
}

static void
check_totals(const struct jt_heap *h, const struct jt_heap_totals *want, const char *what)
{
	struct jt_heap_totals t;
	char name[128];

	heap_totals(h, &t);
#define CHECK_FIELD(f) do { \
	snprintf(name, sizeof(name), "%s: " #f, what); \
	is_u64(t.f, want->f, name); \
} while (0)
	CHECK_FIELD(bytes_allocated);
	CHECK_FIELD(live_bytes);
	CHECK_FIELD(live_blocks);
	CHECK_FIELD(peak_live_bytes);
	CHECK_FIELD(allocs);
	CHECK_FIELD(frees);
	CHECK_FIELD(unknown_frees);
	CHECK_FIELD(invalid_frees);
	CHECK_FIELD(inside_frees);
#undef CHECK_FIELD
}

/* Checks live_bytes, live_blocks, alloc_calls, alloc_bytes of one stack. */
static void
check_stack(const struct jt_heap *h, uint32_t id, uint64_t lbytes, uint64_t lblocks,
	    uint64_t calls, uint64_t abytes, const char *what)
{
	const struct jt_stack *s = heap_stack_get(h, id);

	ok(s && s->live_bytes == lbytes && s->live_blocks == lblocks &&
	   s->alloc_calls == calls && s->alloc_bytes == abytes,
	   "%s: stack %u live %llu/%llu calls %llu bytes %llu (got %llu/%llu %llu %llu)",
	   what, id, (unsigned long long)lbytes, (unsigned long long)lblocks,
	   (unsigned long long)calls, (unsigned long long)abytes,
	   s ? (unsigned long long)s->live_bytes : 0ULL,
	   s ? (unsigned long long)s->live_blocks : 0ULL,
	   s ? (unsigned long long)s->alloc_calls : 0ULL,
	   s ? (unsigned long long)s->alloc_bytes : 0ULL);
}

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

static void
test_alloc_free(void)
{
	struct jt_heap *h = heap_new();
	uint64_t p1[] = { 0x1000 }, p2[] = { 0x2000, 0x3000 };
	uint32_t s1 = heap_stack_intern(h, p1, 1), s2 = heap_stack_intern(h, p2, 2);
	uint64_t size = 777;
	uint32_t sid = 99;
	struct jt_heap_totals want = { 0 };

	is_u64(heap_alloc(h, 0x10010, 100, s1), 0, "alloc: first block returns 0");
	is_u64(heap_alloc(h, 0x10080, 40, s1), 0, "alloc: second block");
	is_u64(heap_alloc(h, 0x20000, 1000, s2), 0, "alloc: third block on stack 2");
	want = (struct jt_heap_totals){ .bytes_allocated = 1140, .live_bytes = 1140,
		.live_blocks = 3, .peak_live_bytes = 1140, .allocs = 3 };
	check_totals(h, &want, "after 3 allocs");
	check_stack(h, s1, 140, 2, 2, 140, "after 3 allocs");
	check_stack(h, s2, 1000, 1, 1, 1000, "after 3 allocs");
	ok(heap_lookup(h, 0x10080, &size, &sid) == 0 && size == 40 && sid == s1,
	   "lookup: 0x10080 is 40 bytes from stack %u", s1);
	ok(heap_lookup(h, 0x10090, NULL, NULL) == -1, "lookup: unknown address is -1");

	is_u64(heap_free(h, 0x20000, &size, 0), 0, "free: known block returns 0");
	is_u64(size, 1000, "free: reports the block's size");
	/* realloc(0x10010, 300) moving the block: free old, alloc new. */
	is_u64(heap_free(h, 0x10010, NULL, 0), 0, "realloc-move: free of old block");
	is_u64(heap_alloc(h, 0x30000, 300, s2), 0, "realloc-move: alloc of new block");
	/* realloc(0x30000, 500) in place: the tracer records a new alloc at the same address. */
	is_u64(heap_alloc(h, 0x30000, 500, s2), 1, "realloc-in-place: same address returns 1");
	want = (struct jt_heap_totals){ .bytes_allocated = 1940, .live_bytes = 540,
		.live_blocks = 2, .peak_live_bytes = 1140, .allocs = 5, .frees = 2 };
	check_totals(h, &want, "after realloc sequence");
	check_stack(h, s1, 40, 1, 2, 140, "after realloc sequence");
	check_stack(h, s2, 500, 1, 3, 1800, "after realloc sequence");
	ok(heap_lookup(h, 0x30000, &size, &sid) == 0 && size == 500 && sid == s2,
	   "lookup: replaced block has the new size and stack");

	/* Peak moves only above the old maximum: 540 + 700 = 1240 > 1140. */
	heap_alloc(h, 0x40000, 700, s1);
	heap_free(h, 0x40000, NULL, 0);
	want = (struct jt_heap_totals){ .bytes_allocated = 2640, .live_bytes = 540,
		.live_blocks = 2, .peak_live_bytes = 1240, .allocs = 6, .frees = 3 };
	check_totals(h, &want, "after peak bump");
	heap_destroy(h);
}

/* The old block at a re-allocated address moves to the new stack without counting a free. */
static void
test_duplicate_and_unknown(void)
{
	struct jt_heap *h = heap_new();
	uint64_t p1[] = { 1 }, p2[] = { 2 }, size = 12345;
	uint32_t s1 = heap_stack_intern(h, p1, 1), s2 = heap_stack_intern(h, p2, 1);
	struct jt_heap_totals want;

	heap_alloc(h, 0x5000, 64, s1);
	is_u64(heap_alloc(h, 0x5000, 16, s2), 1, "dup: alloc at a live address returns 1");
	want = (struct jt_heap_totals){ .bytes_allocated = 80, .live_bytes = 16,
		.live_blocks = 1, .peak_live_bytes = 64, .allocs = 2 };
	check_totals(h, &want, "dup");
	check_stack(h, s1, 0, 0, 1, 64, "dup old stack");
	check_stack(h, s2, 16, 1, 1, 16, "dup new stack");

	is_u64((uint64_t)(int64_t)heap_free(h, 0x6000, &size, 0), (uint64_t)-1,
	       "unknown free returns -1");
	is_u64(size, 12345, "unknown free leaves *size alone");
	is_u64((uint64_t)(int64_t)heap_free(h, 0, &size, 0), (uint64_t)-1, "free(0) returns -1");
	is_u64(heap_free(h, 0x5000, NULL, 0), 0, "free of the replaced block");
	is_u64((uint64_t)(int64_t)heap_free(h, 0x5000, NULL, 0), (uint64_t)-1,
	       "double free returns -1");
	want = (struct jt_heap_totals){ .bytes_allocated = 80, .live_bytes = 0,
		.live_blocks = 0, .peak_live_bytes = 64, .allocs = 2, .frees = 1 };
	check_totals(h, &want, "a free of no live block counts nothing by itself");
	heap_unknown_free(h);
	heap_unknown_free(h);
	want.unknown_frees = 2;
	check_totals(h, &want, "the caller counts unknown frees");

	/* Defensive extras: no block at 0, no block on a stack that does not exist. */
	is_u64((uint64_t)(int64_t)heap_alloc(h, 0, 8, s1), (uint64_t)-1, "alloc at 0 is refused");
	is_u64((uint64_t)(int64_t)heap_alloc(h, 0x7000, 8, 2), (uint64_t)-1,
	       "alloc on unknown stack id is refused");
	check_totals(h, &want, "refused allocs count nothing");
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

/* heap_find_inside: past a live block's start and before its end, nothing else. */
static void
test_find_inside(void)
{
	struct jt_heap *h = heap_new();
	uint64_t pc = 0x100, start = 0;
	uint32_t s = heap_stack_intern(h, &pc, 1);

	ok(heap_find_inside(h, 0x9010, NULL) == -1, "inside: none in an empty heap");
	heap_alloc(h, 0x9000, 32, s);
	heap_alloc(h, 0x20000, 5ull << 32, s);	/* an escaped size */
	ok(heap_find_inside(h, 0x9000, NULL) == -1, "inside: a block's start is not inside it");
	ok(heap_find_inside(h, 0x9010, &start) == 0 && start == 0x9000, "inside: 16 bytes in");
	ok(heap_find_inside(h, 0x901f, NULL) == 0, "inside: its last byte");
	ok(heap_find_inside(h, 0x9020, NULL) == -1, "inside: its end is past it");
	ok(heap_find_inside(h, 0x20000 + 4096, &start) == 0 && start == 0x20000, "inside: 4 KiB into a block of 5 GiB");
	ok(heap_find_inside(h, 0x20000 + 4097, NULL) == -1, "inside: past the reach of the search, none");
	ok(heap_find_inside(h, 0x20000 + (4ull << 32), NULL) == -1, "inside: 4 GiB into it, none (a lookup per 8 bytes)");
	heap_free(h, 0x9000, NULL, 0);
	ok(heap_find_inside(h, 0x9010, NULL) == -1, "inside: not once freed");
	heap_destroy(h);
}

/* Sizes of 4 GiB and more take the escape path; mix them with small ones. */
static void
test_big_sizes(void)
{
	struct jt_heap *h = heap_new();
	uint64_t p1[] = { 1 }, size = 0;
	uint32_t s1 = heap_stack_intern(h, p1, 1), sid = 9;
	const uint64_t sizes[] = { 0xfffffffeULL, 0xffffffffULL, 4 * GIB, 1ULL << 46, 0, 3 };
	uint64_t sum = 0, abytes;
	int bad = 0;

	for (unsigned i = 0; i < ARRAY_SIZE(sizes); i++) {
		heap_alloc(h, 0x100000 + 16 * i, sizes[i], s1);
		sum += sizes[i];
	}
	for (unsigned i = 0; i < ARRAY_SIZE(sizes); i++)
		if (heap_lookup(h, 0x100000 + 16 * i, &size, &sid) || size != sizes[i] || sid != s1)
			bad++;
	is_u64(bad, 0, "big: every size reads back exactly");
	check_stack(h, s1, sum, 6, 6, sum, "big");
	abytes = sum + 5 + 8 * GIB;
	/* Replace a big block by a small one and a small one by a big one. */
	is_u64(heap_alloc(h, 0x100000 + 16 * 2, 5, s1), 1, "big -> small at same address");
	is_u64(heap_alloc(h, 0x100000 + 16 * 5, 8 * GIB, s1), 1, "small -> big at same address");
	ok(heap_lookup(h, 0x100020, &size, NULL) == 0 && size == 5, "big -> small reads 5");
	ok(heap_lookup(h, 0x100050, &size, NULL) == 0 && size == 8 * GIB, "small -> big reads 8 GiB");
	is_u64(heap_free(h, 0x100030, &size, 0), 0, "free of a 64 TiB block");
	is_u64(size, 1ULL << 46, "free reports 64 TiB");
	ok(heap_lookup(h, 0x100010, &size, NULL) == 0 && size == 0xffffffffULL,
	   "other escaped block survives the free");
	sum = sum - 4 * GIB + 5 - 3 + 8 * GIB - (1ULL << 46);
	check_stack(h, s1, sum, 5, 8, abytes, "big after replacements and a free");
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

struct churn_ref {
	uint8_t live[CHURN_ADDRS];
	uint64_t size[CHURN_ADDRS];
	uint32_t stack[CHURN_ADDRS];
	struct jt_heap_totals tot;
};

static uint64_t
churn_addr(uint32_t k)
{
	return 0x7f1234560000ULL + 16ULL * k;
}

/* Mostly small sizes, now and then one past 4 GiB to churn the escape table too. */
static uint64_t
churn_size(void)
{
	uint64_t r = rng_next();

	return r % 64 == 0 ? 4 * GIB + (r >> 40) : (r >> 8) % 5000;
}

/* One random operation on both the heap and the reference; returns 1 on disagreement. */
static int
churn_step(struct jt_heap *h, struct churn_ref *ref, const uint32_t *stacks)
{
	uint32_t k = rng_next() % CHURN_ADDRS, op = rng_next() % 100, sid = 0, st;
	uint64_t size = 0;
	int rc;

	if (op < 55) {
		size = churn_size();
		st = stacks[rng_next() % 4];
		rc = heap_alloc(h, churn_addr(k), size, st);
		if (rc != ref->live[k])
			return 1;
		if (ref->live[k])
			ref->tot.live_bytes -= ref->size[k];
		else
			ref->tot.live_blocks++;
		ref->live[k] = 1;
		ref->size[k] = size;
		ref->stack[k] = st;
		ref->tot.live_bytes += size;
		ref->tot.allocs++;
		ref->tot.bytes_allocated += size;
		if (ref->tot.live_bytes > ref->tot.peak_live_bytes)
			ref->tot.peak_live_bytes = ref->tot.live_bytes;
		return 0;
	}
	if (op < 95) {
		rc = heap_free(h, churn_addr(k), &size, 0);
		if (rc != (ref->live[k] ? 0 : -1) || (!rc && size != ref->size[k]))
			return 1;
		if (!ref->live[k]) {
			heap_unknown_free(h);
			ref->tot.unknown_frees++;
			return 0;
		}
		ref->live[k] = 0;
		ref->tot.live_bytes -= size;
		ref->tot.live_blocks--;
		ref->tot.frees++;
		return 0;
	}
	rc = heap_lookup(h, churn_addr(k), &size, &sid);
	return ref->live[k] ? rc || size != ref->size[k] || sid != ref->stack[k] : rc != -1;
}

/* Every address of the universe must read as the reference says. */
static int
churn_verify(const struct jt_heap *h, const struct churn_ref *ref)
{
	uint64_t size;
	uint32_t k, sid;
	int bad = 0;

	for (k = 0; k < CHURN_ADDRS; k++) {
		int rc = heap_lookup(h, churn_addr(k), &size, &sid);

		if (ref->live[k])
			bad += rc || size != ref->size[k] || sid != ref->stack[k];
		else
			bad += rc != -1;
	}
	return bad;
}

/*
 * About 700 of 1200 addresses live in a 1024-slot table (load ~0.68): long
 * clusters that wrap around the end, so backward-shift deletion is busy.
 */
static void
test_churn(void)
{
	struct jt_heap *h = heap_new();
	struct churn_ref *ref = calloc(1, sizeof(*ref));
	uint32_t stacks[4], i, k, bad_ops = 0, bad_verify = 0;
	uint64_t pc;

	for (i = 0; i < 4; i++) {
		pc = 0xc000 + i;
		stacks[i] = heap_stack_intern(h, &pc, 1);
	}
	/* Stop at the first disagreement: a broken table could fill up and hang. */
	for (i = 0; i < CHURN_OPS && !bad_ops && !bad_verify; i++) {
		bad_ops += churn_step(h, ref, stacks);
		if (i % 100 == 99)
			bad_verify += churn_verify(h, ref);
	}
	is_u64(bad_ops, 0, "churn: 100k random ops agree with the reference");
	is_u64(bad_verify, 0, "churn: full scans every 100 ops agree");
	is_u64(i, CHURN_OPS, "churn: all ops ran");
	check_totals(h, &ref->tot, "churn");
	for (k = 0; k < CHURN_ADDRS; k++) {
		if (ref->live[k] && heap_free(h, churn_addr(k), NULL, 0) == 0) {
			ref->tot.frees++;
			ref->tot.live_bytes -= ref->size[k];
			ref->tot.live_blocks--;
			ref->live[k] = 0;
		}
	}
	check_totals(h, &ref->tot, "churn drained");
	is_u64(churn_verify(h, ref), 0, "churn drained: nothing is left");
	free(ref);
	heap_destroy(h);
}

static uint64_t
stress_addr(uint32_t i)
{
	return 0x555555560000ULL + 32ULL * perm(i, 0x1234567);
}

static uint64_t
stress_size(uint32_t i)
{
	return 1 + (i * 2654435761u >> 7) % 4093;
}

/* Resident set size in bytes, from /proc/self/statm. */
static uint64_t
stress_rss(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Peak resident set size in bytes (VmHWM), or 0 when unknown. */
static uint64_t
stress_hwm(void)
{
	char line[128];
	unsigned long kib = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %lu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024;
}

static uint64_t
stress_malloc_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

struct stress_expect {
	uint64_t bytes[STRESS_STACKS], blocks[STRESS_STACKS], total;
};

static void
stress_fill(struct jt_heap *h, struct stress_expect *e)
{
	uint64_t rss0 = stress_rss(), mem0 = stress_malloc_in_use(), rss1, mem1, hwm1;
	uint32_t i, bad = 0;
	double rss_per, mem_per, hwm_per;

	for (i = 0; i < STRESS_N; i++) {
		uint32_t sid = i % STRESS_STACKS;

		bad += heap_alloc(h, stress_addr(i), stress_size(i), sid) != 0;
		e->bytes[sid] += stress_size(i);
		e->blocks[sid]++;
		e->total += stress_size(i);
	}
	rss1 = stress_rss();
	mem1 = stress_malloc_in_use();
	hwm1 = stress_hwm();
	is_u64(bad, 0, "stress: 2^21 distinct allocs all return 0");
	rss_per = (double)(rss1 - rss0) / STRESS_N;
	mem_per = (double)(mem1 - mem0) / STRESS_N;
	printf("# stress: %u live blocks: RSS +%.1f MiB = %.1f bytes/block, "
	       "malloc in use +%.1f MiB = %.1f bytes/block\n", STRESS_N,
	       (rss1 - rss0) / 1048576.0, rss_per, (mem1 - mem0) / 1048576.0, mem_per);
	/* Growth holds the old and the new array of one shard only (live.c): the peak is the end. */
	hwm_per = hwm1 > rss0 ? (double)(hwm1 - rss0) / STRESS_N : 0.0;
	printf("# stress: peak RSS during the fill %.1f MiB above the start = %.1f bytes/block\n",
	       hwm1 > rss0 ? (hwm1 - rss0) / 1048576.0 : 0.0, hwm_per);
	if (UNDER_ASAN)
		ok(1, "stress: memory per block # SKIP ASan shadow and quarantine distort RSS");
	else
		ok(rss_per <= 24.0 && hwm_per <= 24.0 && mem_per <= 24.0,
		   "stress: at most 24 bytes per live block, at the peak too (RSS %.1f, peak %.1f, malloc %.1f)",
		   rss_per, hwm_per, mem_per);
}

/* Checks per-stack live figures and that top_stacks is ordered by the contract. */
static void
stress_check_stacks(const struct jt_heap *h, const struct stress_expect *e)
{
	uint32_t *ids = malloc(STRESS_STACKS * sizeof(*ids)), i, n, bad = 0, misorder = 0;

	for (i = 0; i < STRESS_STACKS; i++) {
		const struct jt_stack *s = heap_stack_get(h, i);

		bad += s->live_bytes != e->bytes[i] || s->live_blocks != e->blocks[i] ||
		       s->alloc_calls != e->blocks[i] || s->alloc_bytes != e->bytes[i];
	}
	is_u64(bad, 0, "stress: all 1000 stacks have exact live and alloc figures");
	n = heap_rank_stacks(h, HEAP_RANK_LIVE, ids, STRESS_STACKS);
	is_u64(n, STRESS_STACKS, "stress: top lists all 1000 stacks");
	for (i = 1; i < n; i++) {
		const struct jt_stack *a = heap_stack_get(h, ids[i - 1]), *b = heap_stack_get(h, ids[i]);

		misorder += a->live_bytes < b->live_bytes ||
			    (a->live_bytes == b->live_bytes && (a->live_blocks < b->live_blocks ||
			     (a->live_blocks == b->live_blocks && a->id >= b->id)));
	}
	is_u64(misorder, 0, "stress: top is sorted by bytes, blocks, id");
	free(ids);
}

/* Frees in a second scrambled order; every free must return the block's size. */
static void
stress_drain(struct jt_heap *h)
{
	struct jt_heap_totals t;
	uint32_t j, i, bad = 0, bad_half = 0;
	uint64_t size;

	for (j = 0; j < STRESS_N; j++) {
		i = perm(j, 0x89abcdef);
		size = 0;
		bad += heap_free(h, stress_addr(i), &size, 0) != 0 || size != stress_size(i);
		if (j == STRESS_N / 2 - 1) {
			heap_totals(h, &t);
			bad_half = t.live_blocks != STRESS_N / 2;
		}
	}
	is_u64(bad, 0, "stress: 2^21 frees in another order all found with the right size");
	is_u64(bad_half, 0, "stress: half-way live_blocks is exactly 2^20");
}

static void
test_stress(void)
{
	struct jt_heap *h = heap_new();
	struct stress_expect *e = calloc(1, sizeof(*e));
	struct jt_heap_totals want;
	uint32_t i, ids[4], bad = 0;
	uint64_t pcs[2];

	for (i = 0; i < STRESS_STACKS; i++) {
		pcs[0] = 0x400000 + i;
		pcs[1] = 0x500000;
		heap_stack_intern(h, pcs, 2);
	}
	stress_fill(h, e);
	want = (struct jt_heap_totals){ .bytes_allocated = e->total, .live_bytes = e->total,
		.live_blocks = STRESS_N, .peak_live_bytes = e->total, .allocs = STRESS_N };
	check_totals(h, &want, "stress filled");
	stress_check_stacks(h, e);
	stress_drain(h);
	want.live_bytes = 0;
	want.live_blocks = 0;
	want.frees = STRESS_N;
	check_totals(h, &want, "stress drained");
	for (i = 0; i < STRESS_STACKS; i++)
		bad += heap_stack_get(h, i)->live_blocks != 0 || heap_stack_get(h, i)->live_bytes != 0;
	is_u64(bad, 0, "stress drained: every stack has zero live figures");
	is_u64(heap_rank_stacks(h, HEAP_RANK_LIVE, ids, 4), 0, "stress drained: top is empty");
	free(e);
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
	rng_seed(0x2545f4914f6cdd1dULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_intern();
	test_intern_cut();
	test_intern_many();
	test_alloc_free();
	test_duplicate_and_unknown();
	test_invalid_frees();
	test_find_inside();
	test_big_sizes();
	test_top_and_clear();
	test_churn();
	test_clock_from();
	test_stress();
	return tap_done();
}
