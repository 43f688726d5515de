/* test_live.c - unit tests for live.c: the live-block table against a plain model, its walk, and its bytes per block at the peak. */
#include <stdint.h>
#include <stdlib.h>

#include "live.h"
#include "rng.h"
#include "table.h"
#include "tap.h"

#define POOL 20000

/* The model: each pool address, whether it is live and with what. */
static uint64_t pool[POOL];
static struct jt_block model[POOL];
static int present[POOL];

/*
 * Addresses of every kind the table must take: glibc's (16-aligned, 48
 * bytes apart), 8-aligned ones (a named allocator's header), odd ones and
 * ones above 2^48 (the side map).
 */
static uint64_t
pool_addr(uint32_t i)
{
	switch (i % 8) {
	case 5: return 0x7f1234560008ull + 64 * (uint64_t)i;
	case 6: return 0x55aa00000003ull + 8 * (uint64_t)i;
	case 7: return 0x1000000000000ull + 16 * (uint64_t)i;
	default: return 0x55555555a010ull + 48 * (uint64_t)i;
	}
}

static struct jt_block
random_block(void)
{
	uint64_t r = rng_next();
	struct jt_block b;

	/* Sizes on both sides of the 27-bit escape, and one that needs 64 bits. */
	switch (r % 16) {
	case 0: b.size = (1ull << 27) - 1 + (r >> 60); break;
	case 1: b.size = UINT64_MAX - (r >> 60); break;
	default: b.size = (r >> 8) % 5000; break;
	}
	b.stack_id = (uint32_t)(rng_next() % 100000);
	b.stamp = (uint32_t)rng_next();
	return b;
}

static int
block_eq(const struct jt_block *a, const struct jt_block *b)
{
	return a->size == b->size && a->stack_id == b->stack_id && a->stamp == b->stamp;
}

/* live_each's check: every block once, as the model has it. */
struct walk {
	struct jt_table index;	/* addr -> pool index */
	uint32_t seen[POOL];
	unsigned bad;
	size_t n;
};

static void
walk_one(void *arg, uint64_t addr, const struct jt_block *b)
{
	struct walk *w = arg;
	struct jt_slot *s = table_find(&w->index, addr);

	w->n++;
	if (!s || !present[s->val] || w->seen[s->val]++ || !block_eq(b, &model[s->val]))
		w->bad++;
}

static void
check_walk(const struct jt_live *l, size_t want, const char *when)
{
	static struct walk w;
	int fresh;

	w.bad = 0;
	w.n = 0;
	for (uint32_t i = 0; i < POOL; i++)
		w.seen[i] = 0;
	table_init(&w.index, 2 * POOL > 1024 ? 65536 : 1024, 0);
	for (uint32_t i = 0; i < POOL; i++)
		table_claim(&w.index, pool[i], &fresh)->val = i;
	live_each(l, walk_one, &w);
	ok(w.bad == 0 && w.n == want, "live_each %s: %zu blocks, each once with its figures (%u wrong)",
	   when, w.n, w.bad);
	table_free(&w.index);
}

static void
test_model(void)
{
	struct jt_live *l = live_new();
	unsigned bad_set = 0, bad_get = 0, bad_take = 0;
	size_t live = 0;

	for (uint32_t i = 0; i < POOL; i++)
		pool[i] = pool_addr(i);
	for (int op = 0; op < 400000; op++) {
		uint32_t i = (uint32_t)(rng_next() % POOL);
		uint64_t r = rng_next() % 8;
		struct jt_block b, got;

		if (r < 4) {
			b = random_block();
			int was = live_set(l, pool[i], &b, &got);

			if (was != present[i] || (was && !block_eq(&got, &model[i])))
				bad_set++;
			live += !present[i];
			present[i] = 1;
			model[i] = b;
		} else if (r < 6) {
			int rc = live_take(l, pool[i], &got);

			if (rc != (present[i] ? 0 : -1) || (!rc && !block_eq(&got, &model[i])))
				bad_take++;
			live -= present[i];
			present[i] = 0;
		} else {
			int rc = live_get(l, pool[i], &got);

			if (rc != (present[i] ? 0 : -1) || (!rc && !block_eq(&got, &model[i])))
				bad_get++;
		}
		if (op == 100000)
			check_walk(l, live, "after 100,000 operations");
	}
	is_u64(bad_set, 0, "live_set: says whether the address was live, with the old figures");
	is_u64(bad_take, 0, "live_take: the figures of a live address, -1 for any other");
	is_u64(bad_get, 0, "live_get: the same without removing");
	is_u64(live_count(l), live, "live_count as the model");
	check_walk(l, live, "at the end");
	live_clear(l);
	is_u64(live_count(l), 0, "live_clear: no block left");
	ok(live_get(l, pool[0], NULL) < 0 && live_get(l, pool[7], NULL) < 0 && live_get(l, pool[6], NULL) < 0,
	   "live_clear: no address found, in the shards or the side map");
	for (uint32_t i = 0; i < POOL; i++)
		present[i] = 0;
	check_walk(l, 0, "after live_clear");
	live_destroy(l);
}

/*
 * The point of the table: 2,000,000 blocks as glibc lays out 32-byte ones
 * (48 bytes apart) at most 21 bytes each at the peak, a growth's copy
 * counted; the table with 24-byte slots that doubled took 63.
 */
static void
test_bytes_per_block(void)
{
	const uint32_t n = 2000000;
	struct jt_live *l = live_new();
	struct jt_block b = { 32, 3, 0 };
	size_t peak, now;
	unsigned bad = 0;

	for (uint32_t i = 0; i < n; i++) {
		b.stamp = i;
		bad += live_set(l, 0x55555555a010ull + 48 * (uint64_t)i, &b, NULL) != 0;
	}
	now = live_mem(l, &peak);
	is_u64(bad, 0, "2,000,000 new blocks");
	is_u64(live_count(l), n, "2,000,000 live");
	ok(peak <= 21ull * n, "peak %zu bytes: %.2f a block (at most 21)", peak, (double)peak / n);
	ok(now <= peak, "now %zu bytes: %.2f a block", now, (double)now / n);
	for (uint32_t i = 0; i < n; i += 2)
		bad += live_take(l, 0x55555555a010ull + 48 * (uint64_t)i, NULL) != 0;
	for (uint32_t i = 1; i < n; i += 2) {
		struct jt_block got;

		bad += live_get(l, 0x55555555a010ull + 48 * (uint64_t)i, &got) != 0 || got.stamp != i;
	}
	is_u64(bad, 0, "every other one freed, the rest found with its stamp");
	live_destroy(l);
}

int
main(void)
{
	test_model();
	test_bytes_per_block();
	return tap_done();
}
