/* test_heap_blocks.c - unit test of the live-block table: allocs, frees, lookups, escaped sizes, churn against a reference and 2^21 blocks, with exact figures. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "heap.h"
#include "heap_test.h"
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

int
main(void)
{
	rng_seed(0x2545f4914f6cdd1dULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_alloc_free();
	test_duplicate_and_unknown();
	test_find_inside();
	test_big_sizes();
	test_churn();
	test_stress();
	return tap_done();
}
