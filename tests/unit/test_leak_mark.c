/* test_leak_mark.c - unit test of the mark phase and the loss records on a fake address space, with memcheck's exact verdicts (the heuristics are test_leak_heuristics.c's). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "leak.h"
#include "leak_test.h"
#include "rng.h"
#include "tap.h"

static void
diag_block(int trial, size_t i, int got, int want)
{
	printf("# trial %d block %zu: got %s, want %s\n", trial, i, kname[got], kname[want]);
}

static void
test_roots(void)
{
	struct fake *f = fake_new(0x10000);

	blk(f, H(0x100), 32, 1);	/* from the root region */
	blk(f, H(0x200), 32, 1);	/* from a register */
	blk(f, H(0x300), 32, 1);	/* interior only */
	blk(f, H(0x400), 16, 1);	/* chain: root -> 400 -> 500 -> 600 */
	blk(f, H(0x500), 16, 1);
	blk(f, H(0x600), 24, 1);
	poke(f, DATA + 0x10, H(0x100));
	f->words[f->nwords++] = H(0x200);
	f->words[f->nwords++] = 12345;
	poke(f, DATA + 0x18, H(0x310));
	poke(f, DATA + 0x20, H(0x400));
	poke(f, H(0x400), H(0x500));
	poke(f, H(0x508), H(0x600));
	ok(run(f) == 0, "roots: classify");
	expect(f, H(0x100), LEAK_REACHABLE, 0, 0, 0, "start pointer from a root region");
	expect(f, H(0x200), LEAK_REACHABLE, 0, 0, 0, "start pointer in a register");
	expect(f, H(0x300), LEAK_POSSIBLE, 0, 0, 0, "interior pointer only");
	expect(f, H(0x400), LEAK_REACHABLE, 0, 0, 0, "chain, first");
	expect(f, H(0x500), LEAK_REACHABLE, 0, 0, 0, "chain, second");
	expect(f, H(0x600), LEAK_REACHABLE, 0, 0, 0, "chain, third");
	is_u64(f->st.root_bytes, 4096, "roots: root bytes scanned");
	/* 100, 200, 300 are 4 words each; 400..600 2+2+3; 300 scanned as possible once. */
	is_u64(f->st.block_bytes, 32 * 3 + 16 + 16 + 24, "roots: block bytes scanned");
	is_u64(f->st.unreadable_bytes, 0, "roots: nothing unreadable");
	fake_free(f);
}

static void
test_lost(void)
{
	/* A heap of 12 KiB: its 64 KiB read window fails, so it is read page by page. */
	struct fake *f = fake_new(0x3000);

	/* A tree whose root is lost: 100 -> 200, 300; 200 -> 400. */
	blk(f, H(0x100), 32, 2);
	blk(f, H(0x200), 16, 3);
	blk(f, H(0x300), 48, 3);
	blk(f, H(0x400), 24, 3);
	poke(f, H(0x100), H(0x200));
	poke(f, H(0x118), H(0x300) + 8);	/* interior: cliques do not care */
	poke(f, H(0x208), H(0x400));
	/* A cycle nothing points to, its lowest block in the middle: 1200 -> 1100 -> 1300 -> 1200. */
	blk(f, H(0x1100), 40, 4);
	blk(f, H(0x1200), 8, 4);
	blk(f, H(0x1300), 64, 4);
	poke(f, H(0x1200), H(0x1100));
	poke(f, H(0x1100), H(0x1300));
	poke(f, H(0x1338), H(0x1200));
	/* An earlier leader folded into a later one: 2200 -> 2100 -> 2300. */
	blk(f, H(0x2100), 16, 5);
	blk(f, H(0x2200), 16, 5);
	blk(f, H(0x2300), 32, 5);
	poke(f, H(0x2100), H(0x2300));
	poke(f, H(0x2208), H(0x2100));
	ok(run(f) == 0, "lost: classify");
	/* The root page; the window, then its 16 pages; no read per block. */
	is_u64(f->reads, 1 + 1 + 16, "lost: reads");
	expect(f, H(0x100), LEAK_DEFINITE, 0, 88, 3, "tree root");
	expect(f, H(0x200), LEAK_INDIRECT, 0, 0, 0, "tree child");
	expect(f, H(0x300), LEAK_INDIRECT, 0, 0, 0, "tree child (interior)");
	expect(f, H(0x400), LEAK_INDIRECT, 0, 0, 0, "tree grandchild");
	expect(f, H(0x1100), LEAK_DEFINITE, 0, 72, 2, "cycle: lowest block leads");
	expect(f, H(0x1200), LEAK_INDIRECT, 0, 0, 0, "cycle: second");
	expect(f, H(0x1300), LEAK_INDIRECT, 0, 0, 0, "cycle: third");
	expect(f, H(0x2100), LEAK_INDIRECT, 0, 0, 0, "earlier leader, folded");
	expect(f, H(0x2200), LEAK_DEFINITE, 0, 48, 2, "later leader takes its clique");
	expect(f, H(0x2300), LEAK_INDIRECT, 0, 0, 0, "the folded leader's block");
	ok(at(f, H(0x2300))->clique == (int64_t)(at(f, H(0x2100)) - f->b) &&
	   at(f, H(0x2100))->clique == (int64_t)(at(f, H(0x2200)) - f->b), "cliques: the leaders joined");
	is_u64(f->res.bytes[LEAK_DEFINITE], 32 + 40 + 16, "lost: definitely lost bytes");
	is_u64(f->res.blocks[LEAK_DEFINITE], 3, "lost: definitely lost blocks");
	is_u64(f->res.bytes[LEAK_INDIRECT], 88 + 72 + 48, "lost: indirectly lost bytes");
	is_u64(f->res.blocks[LEAK_INDIRECT], 7, "lost: indirectly lost blocks");
	fake_free(f);
}

static void
test_possible_chain(void)
{
	struct fake *f = fake_new(0x10000);

	/* root -> 100 + 8 (possible) -> 200 (start, but from a possible block) -> 300. */
	blk(f, H(0x100), 32, 1);
	blk(f, H(0x200), 32, 1);
	blk(f, H(0x300), 32, 1);
	/* 400 is reached from possible 200 and, later on the stack, by a start pointer from a root. */
	blk(f, H(0x400), 32, 1);
	poke(f, DATA, H(0x108));
	poke(f, H(0x110), H(0x200));
	poke(f, H(0x200), H(0x300));
	poke(f, H(0x208), H(0x400));
	poke(f, H(0x300), H(0x400) + 16);
	f->words[f->nwords++] = H(0x400);
	f->heur = 0;
	ok(run(f) == 0, "possible chain: classify");
	expect(f, H(0x100), LEAK_POSSIBLE, 0, 0, 0, "interior pointer from a root");
	expect(f, H(0x200), LEAK_POSSIBLE, 0, 0, 0, "start pointer from a possible block");
	expect(f, H(0x300), LEAK_POSSIBLE, 0, 0, 0, "two possible blocks down");
	expect(f, H(0x400), LEAK_REACHABLE, 0, 0, 0, "also from a register: reachable");
	fake_free(f);
}

/*
 * Roots hold R then X + 8: the stack pops X first (possible, so Y is
 * possible), then R, whose start pointer upgrades X: X is scanned again and
 * Y becomes reachable too.
 */
static void
test_upgrade_rescan(void)
{
	struct fake *f = fake_new(0x10000);

	blk(f, H(0x100), 32, 1);	/* R */
	blk(f, H(0x200), 32, 1);	/* X */
	blk(f, H(0x300), 32, 1);	/* Y */
	poke(f, DATA, H(0x100));
	poke(f, DATA + 8, H(0x208));
	poke(f, H(0x100), H(0x200));
	poke(f, H(0x200), H(0x300));
	f->heur = 0;
	ok(run(f) == 0, "upgrade: classify");
	expect(f, H(0x200), LEAK_REACHABLE, 0, 0, 0, "possible block upgraded by a start pointer");
	expect(f, H(0x300), LEAK_REACHABLE, 0, 0, 0, "its child, upgraded by the rescan");
	is_u64(f->st.block_bytes, 32 * 5, "upgrade: R once, X and Y twice");
	fake_free(f);
}

static void
test_overlap_unreadable_zero(void)
{
	struct fake *f = fake_new(0x10000);

	/* The root region covers the heap: 100's words are no roots, so 200 is lost through it. */
	f->roots[f->nroots++] = (struct leak_region){ H(0x80), H(0x300) };
	blk(f, H(0x100), 20, 1);
	blk(f, H(0x200), 16, 1);
	poke(f, H(0x100), H(0x200));
	poke(f, H(0x110), H(0x200));	/* the word past 100's end, partly in it: no root either */
	poke(f, H(0x98), H(0x100) + 4);	/* a root word before the block */
	/* A root region with an unmapped page in the middle, a pointer after it. */
	fake_map(f, 0x50000000, 4096);
	fake_map(f, 0x50002000, 4096);
	f->roots[f->nroots++] = (struct leak_region){ 0x50000000, 0x50003000 };
	blk(f, H(0x400), 64, 1);
	poke(f, 0x50002ff8, H(0x400));
	/* 0-size blocks: one pointed at, one not, one only just past its address. */
	blk(f, H(0x500), 0, 1);
	blk(f, H(0x510), 0, 1);
	blk(f, H(0x520), 0, 1);
	blk(f, H(0x600), 16, 1);	/* a block above, so that 0x521 is not out of every block's range */
	poke(f, DATA + 0x100, H(0x500));
	poke(f, DATA + 0x108, H(0x521));
	ok(run(f) == 0, "overlap: classify");
	expect(f, H(0x100), LEAK_POSSIBLE, 0, 0, 0, "interior root word before the block");
	expect(f, H(0x200), LEAK_POSSIBLE, 0, 0, 0, "from a possible block, its words no root");
	expect(f, H(0x400), LEAK_REACHABLE, 0, 0, 0, "pointer past an unreadable page");
	expect(f, H(0x500), LEAK_REACHABLE, 0, 0, 0, "0-size block pointed at");
	expect(f, H(0x510), LEAK_DEFINITE, 0, 0, 0, "0-size block not pointed at");
	expect(f, H(0x520), LEAK_DEFINITE, 0, 0, 0, "0-size block, pointer one past");
	is_u64(f->st.unreadable_bytes, 4096, "unreadable root bytes");
	/* DATA 4096, heap 0x80..0x100 and 0x118..0x200 and 0x210..0x300, the two readable pages. */
	is_u64(f->st.root_bytes, 4096 + 0x80 + 0xe8 + 0xf0 + 8192, "root bytes less blocks and the hole");
	is_u64(f->res.blocks[LEAK_DEFINITE], 3, "0-size blocks count as blocks (2, and the block above)");
	is_u64(f->res.bytes[LEAK_DEFINITE], 16, "and count 0 bytes");
	fake_free(f);
}

static void
test_records(void)
{
	struct fake *f = fake_new(0x10000);
	const struct leak_record *r;

	blk(f, H(0x100), 16, 7);	/* stack 7: two definite of 16 */
	blk(f, H(0x200), 16, 7);
	blk(f, H(0x300), 32, 8);	/* stack 8: possible 32, same total as stack 7's */
	blk(f, H(0x400), 100, 9);	/* stack 9: reachable 100 */
	blk(f, H(0x500), 8, 5);		/* stack 5: definite 8 -> indirect 24 (stack 6) */
	blk(f, H(0x600), 24, 6);
	blk(f, H(0x700), 32, 10);	/* stack 10: definite 32 in one block: after stack 5, before stack 7's two */
	poke(f, DATA, H(0x308));
	poke(f, DATA + 8, H(0x400));
	poke(f, H(0x500), H(0x600));
	f->heur = 0;
	ok(run(f) == 0 && f->res.nrecords == 6, "records: 6 (got %zu)", f->res.nrecords);
	if (f->res.nrecords == 6) {
		const uint32_t want_stack[] = { 6, 8, 5, 10, 7, 9 };
		const enum leak_kind want_kind[] = { LEAK_INDIRECT, LEAK_POSSIBLE, LEAK_DEFINITE, LEAK_DEFINITE,
						     LEAK_DEFINITE, LEAK_REACHABLE };
		const uint64_t want_bytes[] = { 24, 32, 8, 32, 32, 100 }, want_ind[] = { 0, 0, 24, 0, 0, 0 };
		size_t i;

		for (i = 0; i < 6; i++) {
			r = &f->res.records[i];
			ok(r->number == i + 1 && r->stack_id == want_stack[i] && r->kind == want_kind[i] &&
			   r->bytes == want_bytes[i] && r->ind_bytes == want_ind[i] &&
			   r->ind_blocks == (want_ind[i] ? 1 : 0),
			   "record %zu: stack %u %s %llu (+%llu) (got #%u stack %u %s %llu (+%llu))", i + 1,
			   want_stack[i], kname[want_kind[i]], (unsigned long long)want_bytes[i],
			   (unsigned long long)want_ind[i], r->number, r->stack_id, kname[r->kind],
			   (unsigned long long)r->bytes, (unsigned long long)r->ind_bytes);
		}
		is_u64(f->res.records[4].blocks, 2, "stack 7's record has 2 blocks");
	}
	is_u64(f->res.bytes[LEAK_DEFINITE], 16 + 16 + 8 + 32, "summary: definitely lost bytes");
	is_u64(f->res.blocks[LEAK_DEFINITE], 4, "summary: definitely lost blocks");
	is_u64(f->res.bytes[LEAK_INDIRECT], 24, "summary: indirectly lost bytes");
	is_u64(f->res.bytes[LEAK_POSSIBLE], 32, "summary: possibly lost bytes");
	is_u64(f->res.bytes[LEAK_REACHABLE], 100, "summary: still reachable bytes");
	is_u64(f->res.blocks[LEAK_REACHABLE], 1, "summary: still reachable blocks");
	fake_free(f);
}

/* Many blocks through the read window cache: a list of 3000 from a root, 1000 lost pairs. */
static void
test_many(void)
{
	struct fake *f = fake_new(0x20000);
	unsigned i, reads;

	for (i = 0; i < 5000; i++)
		blk(f, H(16ull * i), 16, i < 3000 ? 1 : 2);
	poke(f, DATA, H(0));
	for (i = 0; i + 1 < 3000; i++)
		poke(f, H(16ull * i + 8), H(16ull * (i + 1)));
	for (i = 3000; i < 5000; i += 2)
		poke(f, H(16ull * (i + 1)), H(16ull * i));	/* the later block leads */
	ok(run(f) == 0, "many: classify");
	reads = f->reads;
	is_u64(f->res.blocks[LEAK_REACHABLE], 3000, "many: reachable blocks");
	is_u64(f->res.blocks[LEAK_DEFINITE], 1000, "many: definite blocks");
	is_u64(f->res.blocks[LEAK_INDIRECT], 1000, "many: indirect blocks");
	ok(f->res.nrecords == 3 && f->res.records[0].kind == LEAK_INDIRECT && f->res.records[1].kind == LEAK_DEFINITE &&
	   f->res.records[1].ind_bytes == 16000, "many: 3 records, definite's 16000 indirect bytes");
	ok(reads < 20, "many: block memory read in windows (%u reads)", reads);
	fake_free(f);
}

#define RN	60	/* blocks of a random graph */

/* The reference: the same verdicts from plain fixpoints over the graph of a random heap. */
static void
ref_classify(const struct fake *f, const long *tgt, const int *start, size_t nw, const long *rtgt,
	     const int *rstart, size_t nr, int *kind, uint64_t *ind)
{
	size_t i, k, changed = 1, blk_of_word = 4;

	for (i = 0; i < RN; i++)
		kind[i] = LEAK_DEFINITE, ind[i] = 0;
	for (k = 0; k < nr; k++)	/* reached at all: possible at least */
		if (rtgt[k] >= 0)
			kind[rtgt[k]] = rstart[k] ? LEAK_REACHABLE : (kind[rtgt[k]] == LEAK_REACHABLE ? LEAK_REACHABLE : LEAK_POSSIBLE);
	while (changed) {
		changed = 0;
		for (k = 0; k < nw; k++) {
			int from = kind[k / blk_of_word];
			long t = tgt[k];

			if (t < 0 || from == LEAK_DEFINITE)
				continue;
			if (from == LEAK_REACHABLE && start[k] && kind[t] != LEAK_REACHABLE)
				kind[t] = LEAK_REACHABLE, changed = 1;
			else if (kind[t] == LEAK_DEFINITE)
				kind[t] = LEAK_POSSIBLE, changed = 1;
		}
	}
	for (i = 0; i < RN; i++) {
		long todo[RN];
		size_t nt = 0;

		if (kind[i] != LEAK_DEFINITE)
			continue;
		todo[nt++] = (long)i;
		while (nt) {
			long from = todo[--nt];

			for (k = (size_t)from * blk_of_word; k < (size_t)(from + 1) * blk_of_word; k++) {
				long t = tgt[k];

				if (t >= 0 && t != (long)i && kind[t] == LEAK_DEFINITE) {
					kind[t] = LEAK_INDIRECT;
					ind[i] += f->b[t].size + ind[t];
					ind[t] = 0;
					todo[nt++] = t;
				}
			}
		}
	}
}

/* Random heaps of blocks with gaps, some of size 0: the index finds what the reference finds. */
static void
test_random(void)
{
	uint64_t seed = 12345;
	int trial, bad = 0;

	for (trial = 0; trial < 300 && !bad; trial++) {
		struct fake *f = fake_new(0x10000);
		long tgt[RN * 4], rtgt[16];
		int start[RN * 4], rstart[16], kind[RN];
		uint64_t ind[RN], a = H(0x40);
		size_t i, k;

#define RND() (seed = seed * 6364136223846793005ull + 1442695040888963407ull, seed >> 33)
		for (i = 0; i < RN; i++) {
			uint64_t size = RND() % 5 == 0 ? 0 : 32 + 8 * (RND() % 3);

			blk(f, a, size, (uint32_t)(RND() % 4));
			a += size + 16 * (1 + RND() % 3);
		}
		for (k = 0; k < RN * 4 + 16; k++) {
			long t = RND() % 3 == 0 ? (long)(RND() % RN) : -1;
			uint64_t off = t >= 0 && f->b[t].size && RND() % 3 == 0 ? 8 * (1 + RND() % 3) : 0;
			int st = off == 0;
			uint64_t v = t >= 0 ? f->b[t].addr + off : (RND() % 2 ? H(0x20) : RND());

			/* The edges: the last byte of a block is in it, its end (a gap) in none. */
			if (t >= 0 && f->b[t].size && RND() % 4 == 0) {
				v = f->b[t].addr + f->b[t].size - (RND() % 2 ? 1 : 0);
				st = 0;
				if (v == f->b[t].addr + f->b[t].size)
					t = -1;
			}

			if (k < RN * 4) {
				tgt[k] = t, start[k] = st;
				/* Word k/4 of block k/4 exists only when the block has 4 words. */
				if (f->b[k / 4].size >= 32)
					poke(f, f->b[k / 4].addr + 8 * (k % 4), v);
				else
					tgt[k] = -1;
			} else {
				rtgt[k - RN * 4] = t, rstart[k - RN * 4] = st;
				poke(f, DATA + 8 * (k - RN * 4), v);
			}
		}
		f->heur = 0;
		ref_classify(f, tgt, start, RN * 4, rtgt, rstart, 16, kind, ind);
		if (run(f) != 0)
			bad = 1;
		for (i = 0; i < RN && !bad; i++)
			if (f->b[i].kind != kind[i] || f->b[i].ind_bytes != ind[i]) {
				diag_block(trial, i, f->b[i].kind, kind[i]);
				bad = 1;
			}
		fake_free(f);
	}
	ok(!bad, "300 random heaps: every kind and indirect figure as the reference's");
}

/* leak_blocks_of: every live block of a heap, sorted by address (radix sort, and qsort above 48 bits). */
static void
test_blocks_of(int high)
{
	struct jt_heap *h = heap_new();
	uint32_t sid = heap_stack_intern(h, (const uint64_t[]){ 0x401000 }, 1);
	uint64_t sum = 0, got = 0;
	struct leak_block *b;
	size_t n, bad = 0;

	rng_seed(high ? 7 : 11);
	for (int i = 0; i < 20000; i++) {
		uint64_t a = (rng_next() & 0x7ffffffffff0ULL) | 0x10;

		if (high && i == 100)
			a |= 1ULL << 56;	/* not a user address on x86-64: the qsort path */
		if (heap_alloc(h, a, i % 64, sid) == 0)
			sum += a;
	}
	b = leak_blocks_of(h, &n);
	for (size_t i = 0; i < n; i++) {
		got += b[i].addr;
		if (i && b[i - 1].addr >= b[i].addr)
			bad++;
		uint64_t size;

		if (heap_lookup(h, b[i].addr, &size, NULL) != 0 || size != b[i].size || b[i].kind != LEAK_DEFINITE)
			bad++;
	}
	ok(n == 20000, "leak_blocks_of: every block (%s): %zu", high ? "qsort" : "radix", n);
	ok(!bad && got == sum, "leak_blocks_of: sorted by address, each once (%s)", high ? "qsort" : "radix");
	free(b);
	heap_destroy(h);
}

int
main(void)
{
	struct leak_stats st;
	struct leak_result r = { 0 };

	ok(leak_classify(NULL, 0, &(struct leak_input){ 0 }, &st) == 0 && leak_records(NULL, 0, &r) == 0 &&
	   r.nrecords == 0, "no blocks");
	leak_result_clear(&r);
	test_roots();
	test_lost();
	test_possible_chain();
	test_upgrade_rescan();
	test_overlap_unreadable_zero();
	test_records();
	test_many();
	test_random();
	test_blocks_of(0);
	test_blocks_of(1);
	return tap_done();
}
