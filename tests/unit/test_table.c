/* test_table.c - unit tests for table.c: the address map through growth and removal, and the index by content with colliding hashes. */
#include <stdint.h>
#include <stdlib.h>

#include "table.h"
#include "tap.h"

#define N 5000

/* Keys 16 bytes apart, as heap addresses are: the mix must spread them. */
static uint64_t
key_of(uint32_t i)
{
	return 0x7f0000000000ull + 16 * (uint64_t)i;
}

static void
test_map(void)
{
	struct jt_table t;
	uint32_t i, bad = 0, fresh_all = 1;
	int fresh;

	table_init(&t, 8, 1);
	for (i = 0; i < N; i++) {
		table_claim(&t, key_of(i), &fresh)->val = i;
		fresh_all &= fresh;
		t.stamps[table_probe(&t, key_of(i))] = i + 1;
	}
	ok(fresh_all, "table_claim: every new key is fresh");
	is_u64(t.count, N, "the count after growing from 8 slots");
	ok(4 * t.count <= 3 * t.cap, "at most 75%% full");
	table_claim(&t, key_of(7), &fresh);
	ok(!fresh && t.count == N, "a key claimed again is not fresh, and not counted again");
	for (i = 0; i < N; i += 2)
		table_remove_at(&t, table_probe(&t, key_of(i)));
	is_u64(t.count, N / 2, "half removed");
	for (i = 0; i < N; i++) {
		struct jt_slot *s = table_find(&t, key_of(i));

		if (i % 2 ? !s || s->val != i || t.stamps[s - t.slots] != i + 1 : s != NULL)
			bad++;
	}
	is_u64(bad, 0, "table_find after removals: each odd key with its value and stamp, no even one");
	table_free(&t);
}

/* The items the index is tested on: their hashes collide in groups of 64. */
static uint64_t items[N];

static uint32_t
item_hash(uint64_t v)
{
	return (uint32_t)(v % 64);
}

static int
item_equal(const void *arg, uint32_t id)
{
	return items[id] == *(const uint64_t *)arg;
}

static void
test_index(void)
{
	struct jt_index x;
	uint32_t i, bad = 0;
	uint64_t absent = 3 * N + 1;

	index_init(&x, 4);
	for (i = 0; i < N; i++) {
		items[i] = 3 * (uint64_t)i;
		if (index_find(&x, item_hash(items[i]), item_equal, &items[i]) != UINT32_MAX)
			bad++;
		index_add(&x, item_hash(items[i]), i);
	}
	is_u64(bad, 0, "index_find: no item before it is added");
	is_u64(x.count, N, "the count after growing from 4 slots");
	ok(4 * x.count <= 3 * x.cap, "at most 75%% full");
	for (i = 0, bad = 0; i < N; i++)
		if (index_find(&x, item_hash(items[i]), item_equal, &items[i]) != i)
			bad++;
	is_u64(bad, 0, "index_find: every item by its content, among colliding hashes");
	ok(index_find(&x, item_hash(absent), item_equal, &absent) == UINT32_MAX, "index_find: an absent item");
	index_free(&x);
}

int
main(void)
{
	test_map();
	test_index();
	return tap_done();
}
