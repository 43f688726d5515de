/* test_growth.c - growth.c: each stack's live bytes per snapshot, the ranking by growth, the rate, "every interval". */
#include <stdio.h>
#include <stdlib.h>

#include "growth.h"
#include "heap.h"
#include "tap.h"

/* A heap clock the test sets. */
static uint64_t tg_now;

static uint64_t
tg_clock(void *arg)
{
	(void)arg;
	return tg_now;
}

static void
test_rank(void)
{
	struct jt_heap *h = heap_new();
	struct jt_growth *g = growth_new();
	uint64_t pc_leak = 0x1000, pc_churn = 0x2000, pc_shrink = 0x3000, pc_late = 0x4000;
	uint32_t leak, churn, shrink, late;
	struct growth_row *rows;
	size_t n;

	heap_set_clock(h, tg_clock, NULL);
	leak = heap_stack_intern(h, &pc_leak, 1);
	churn = heap_stack_intern(h, &pc_churn, 1);
	shrink = heap_stack_intern(h, &pc_shrink, 1);
	ok(growth_count(NULL) == 0 && growth_count(g) == 0, "no snapshot yet");
	ok(growth_rank(g, &n) == NULL && n == 0, "no growth before two snapshots");

	/* Snapshot 1 at 1,000 ms: leak 100, churn 500, shrink 900. */
	heap_alloc(h, 0x10, 100, leak);
	heap_alloc(h, 0x20, 500, churn);
	heap_alloc(h, 0x30, 900, shrink);
	growth_record(g, h, 1000);
	rows = growth_rank(g, &n);
	ok(rows == NULL && n == 0, "one snapshot: no growth");
	/* Snapshot 2 at 2,000 ms: leak 200, churn 800, shrink 0; a stack made now holds 50. */
	heap_alloc(h, 0x11, 100, leak);
	heap_alloc(h, 0x21, 300, churn);
	heap_free(h, 0x30, NULL, 0);
	late = heap_stack_intern(h, &pc_late, 1);
	heap_alloc(h, 0x40, 50, late);
	growth_record(g, h, 2000);
	/* Snapshot 3 at 3,000 ms: leak 400, churn back to 600. */
	heap_alloc(h, 0x12, 200, leak);
	heap_free(h, 0x21, NULL, 0);
	heap_alloc(h, 0x22, 100, churn);
	growth_record(g, h, 3000);

	ok(growth_count(g) == 3, "three snapshots");
	is_u64(growth_time(g, 1), 2000, "snapshot 2's time");
	is_u64(growth_bytes(g, 0, late), 0, "a stack made later held 0 at the first snapshot");
	is_u64(growth_bytes(g, 2, churn), 600, "churn's live bytes at snapshot 3");
	rows = growth_rank(g, &n);
	ok(n == 3, "three stacks grew (leak, churn, the late one), shrink did not (got %zu)", n);
	if (n == 3) {
		ok(rows[0].id == leak && rows[0].growth == 300 && rows[0].every, "leak first: +300, every interval");
		ok(rows[0].rate > 149.99 && rows[0].rate < 150.01, "leak's rate: 300 bytes over 2 s (got %f)", rows[0].rate);
		ok(rows[1].id == churn && rows[1].growth == 100 && !rows[1].every, "churn: +100, not every interval");
		ok(rows[2].id == late && rows[2].growth == 50 && !rows[2].every, "the late stack: +50, flat in the last interval");
	}
	free(rows);
	/* Snapshot 4 at 4,000 ms, with no allocation or free since the third: it proves nothing. */
	growth_record(g, h, 4000);
	rows = growth_rank(g, &n);
	ok(n == 3 && rows[0].id == leak && rows[0].every, "an interval without events does not count against \"every\"");
	ok(n == 3 && rows[0].rate > 99.99 && rows[0].rate < 100.01, "the rate spans it: 300 bytes over 3 s");
	free(rows);
	heap_alloc(h, 0x23, 1, churn);
	growth_record(g, h, 5000);
	rows = growth_rank(g, &n);
	ok(n == 3 && rows[0].id == leak && !rows[0].every, "an interval with events where leak did not grow does");
	free(rows);
	growth_destroy(g);
	growth_destroy(NULL);
	heap_destroy(h);
}

/*
 * 100 snapshots kept in at most 8 points: the first and the last stay, the
 * rest evenly spread, and "every interval" still sees a dip at a snapshot
 * that was dropped.
 */
static void
test_bounded(void)
{
	struct jt_heap *h = heap_new();
	struct jt_growth *g = growth_new();
	uint64_t pc_leak = 0x1000, pc_dip = 0x2000, pc_steady = 0x3000;
	uint32_t leak, dip, steady;
	struct growth_row *rows;
	unsigned k, bad = 0;
	size_t n;

	heap_set_clock(h, tg_clock, NULL);
	growth_set_max(g, 8);
	leak = heap_stack_intern(h, &pc_leak, 1);
	dip = heap_stack_intern(h, &pc_dip, 1);
	steady = heap_stack_intern(h, &pc_steady, 1);
	for (k = 0; k < 100; k++) {
		heap_alloc(h, 0x10000 + 16 * k, 10, leak);
		/* dip grows too, but for snapshot 51 (not one of those kept), where it gives back 1 byte. */
		if (k == 51)
			heap_free(h, 0x20000 + 16 * 50, NULL, 0);
		else
			heap_alloc(h, 0x20000 + 16 * k, k == 50 ? 1 : 20, dip);
		heap_alloc(h, 0x30000 + 16 * k, 5, steady);
		growth_record(g, h, 1000 * (k + 1));
		bad += growth_count(g) > 8;
	}
	is_u64(bad, 0, "never more than 8 points kept");
	is_u64(growth_snapshots(g), 100, "100 snapshots recorded");
	ok(growth_count(g) >= 4, "at least half of them kept (%u)", growth_count(g));
	is_u64(growth_time(g, 0), 1000, "the first snapshot is kept");
	is_u64(growth_time(g, growth_count(g) - 1), 100000, "and the last");
	for (k = 1; k < growth_count(g); k++)
		bad += growth_time(g, k) <= growth_time(g, k - 1) ||
		       growth_bytes(g, k, leak) != growth_time(g, k) / 100;
	is_u64(bad, 0, "the points kept in order, each with its own figures");
	for (k = 0; k < growth_count(g); k++)
		bad += growth_time(g, k) == 51000;
	is_u64(bad, 0, "snapshot 51 is not among them");
	rows = growth_rank(g, &n);
	ok(n == 3 && rows[0].id == dip && rows[1].id == leak && rows[2].id == steady, "all three grew: dip most, then leak, steady");
	ok(n == 3 && !rows[0].every && rows[1].every && rows[2].every,
	   "dip not in every interval (its dip was at a dropped snapshot), the others in every one");
	free(rows);
	growth_destroy(g);
	heap_destroy(h);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	test_rank();
	test_bounded();
	return tap_done();
}
