/* test_heap_stats.c - unit test of the heap's per-stack counters, peak, timeline (with its per-stack changes), size histogram, filtered stack and block ages. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "rng.h"
#include "tap.h"
#include "util.h"

/* A clock the test moves by hand. */
static uint64_t test_now;

static uint64_t
test_clock(void *arg)
{
	(void)arg;
	return test_now;
}

static struct jt_heap *
new_heap(void)
{
	struct jt_heap *h = heap_new();

	test_now = 0;
	heap_set_clock(h, test_clock, NULL);
	return h;
}

static uint32_t
stack_of(struct jt_heap *h, uint64_t pc)
{
	return heap_stack_intern(h, &pc, 1);
}

static void
test_buckets(void)
{
	is_u64(heap_hist_bucket(0), 0, "bucket: 0 bytes in bucket 0 (bound 1)");
	is_u64(heap_hist_bucket(1), 0, "bucket: 1 byte in bucket 0");
	is_u64(heap_hist_bucket(2), 1, "bucket: 2 in (1, 2]");
	is_u64(heap_hist_bucket(16), 4, "bucket: 16 in (8, 16]");
	is_u64(heap_hist_bucket(17), 5, "bucket: 17 in (16, 32]");
	is_u64(heap_hist_bucket(65536), 16, "bucket: 65536 in (32768, 65536]");
	is_u64(heap_hist_bucket(UINT64_MAX), 64, "bucket: the largest size in bucket 64");
	is_u64(heap_hist_bound(5), 32, "bound: bucket 5 ends at 32");
	is_u64(heap_hist_bound(64), UINT64_MAX, "bound: bucket 64 reads UINT64_MAX");
}

static void
test_counters(void)
{
	struct jt_heap *h = new_heap();
	uint32_t a = stack_of(h, 0x1000), b = stack_of(h, 0x2000);
	const struct jt_stack *sa = heap_stack_get(h, a), *sb = heap_stack_get(h, b);
	static const uint64_t sizes[] = { 1, 8, 16, 17, 100, 1024, 1025, 65536 };
	static const unsigned want[] = { 0, 3, 4, 5, 7, 10, 11, 16 };
	struct jt_heap_totals t;
	uint64_t size;

	for (unsigned i = 0; i < 8; i++)
		heap_alloc(h, 0x10000 + 0x100000 * i, sizes[i], a);
	for (unsigned i = 0; i < 8; i++)
		ok(sa->hist && sa->hist[want[i]] == 1, "histogram: size %lu counted in bucket %u",
		   (unsigned long)sizes[i], want[i]);
	heap_free(h, 0x10000, &size, 0);
	heap_free(h, 0x110000, &size, 1);
	is_u64(sa->frees, 2, "counters: frees of the stack's blocks");
	is_u64(sa->temporary, 1, "counters: one of them temporary");
	is_u64(sa->alloc_calls, 8, "counters: allocation calls");
	heap_free(h, 0x999, &size, 1);
	is_u64(sa->temporary, 1, "counters: a free of no block counts no temporary");
	ok(sb->hist == NULL, "histogram: none for a stack with no allocation");
	heap_totals(h, &t);
	is_u64(t.temporary, 1, "totals: temporary");
	is_u64(t.frees, 2, "totals: frees");
	heap_destroy(h);
}

static void
test_peak(void)
{
	struct jt_heap *h = new_heap();
	uint32_t a = stack_of(h, 0x1000), b = stack_of(h, 0x2000);
	const struct jt_stack *sa = heap_stack_get(h, a), *sb = heap_stack_get(h, b);
	struct jt_heap_peak pk;
	uint64_t i;

	/* Phase 1: 256 x 4096 from a, at t = 10; all freed. Phase 2: 10 x 1000 from b. */
	test_now = 10;
	for (i = 0; i < 256; i++)
		heap_alloc(h, 0x100000 + i * 0x1000, 4096, a);
	test_now = 20;
	for (i = 0; i < 256; i++)
		heap_free(h, 0x100000 + i * 0x1000, NULL, 0);
	test_now = 30;
	for (i = 0; i < 10; i++)
		heap_alloc(h, 0x900000 + i * 0x1000, 1000, b);
	heap_peak(h, &pk);
	is_u64(pk.live_bytes, 1048576, "peak: exactly 1 MiB, recorded at the first free");
	is_u64(pk.live_blocks, 256, "peak: 256 blocks");
	is_u64(pk.time_ms, 10, "peak: its time");
	is_u64(sa->peak_bytes, pk.live_bytes, "peak: stack a holds all of it");
	is_u64(sa->peak_blocks, pk.live_blocks, "peak: and all its blocks");
	is_u64(sb->peak_bytes, 0, "peak: stack b had nothing then");
	is_u64(sa->live_bytes, 0, "peak: a holds nothing now");

	/* A higher peak from b replaces the breakdown; a's figure follows its live one. */
	test_now = 40;
	for (i = 0; i < 2000; i++)
		heap_alloc(h, 0x10000000 + i * 0x1000, 1000, b);
	heap_peak(h, &pk);
	is_u64(pk.live_bytes, 1048576, "peak: not recorded before the heap turns down or a snapshot");
	heap_sample(h, 1);
	heap_peak(h, &pk);
	is_u64(pk.live_bytes, 2010000, "peak: a snapshot at the highest point records it");
	is_u64(pk.time_ms, 40, "peak: at the snapshot's time");
	is_u64(sa->peak_bytes, 0, "peak: a, no longer live, shows 0 at the new peak");
	is_u64(sb->peak_bytes, pk.live_bytes, "peak: b holds it all");
	heap_destroy(h);
}

static void
test_timeline(void)
{
	struct jt_heap *h = new_heap();
	uint32_t a = stack_of(h, 0x1000);
	const struct jt_heap_sample *tl;
	size_t n;

	heap_alloc(h, 0x1000, 100, a);		/* t=0: first sample */
	test_now = 50;
	heap_alloc(h, 0x2000, 100, a);		/* too soon */
	test_now = 100;
	heap_alloc(h, 0x3000, 100, a);		/* due */
	test_now = 150;
	heap_sample(h, 0);			/* the idle tick: too soon */
	test_now = 230;
	heap_sample(h, 0);			/* due */
	test_now = 240;
	heap_sample(h, 1);			/* a snapshot: always */
	heap_sample(h, 1);			/* the same ms again: replaces */
	tl = heap_timeline(h, &n);
	is_u64(n, 4, "timeline: 4 samples");
	if (n == 4) {
		is_u64(tl[0].time_ms, 0, "timeline: first at 0");
		is_u64(tl[0].live_bytes, 100, "timeline: with 100 bytes");
		is_u64(tl[1].time_ms, 100, "timeline: the next event 100 ms later");
		is_u64(tl[1].live_bytes, 300, "timeline: with 300 bytes");
		is_u64(tl[1].live_blocks, 3, "timeline: 3 blocks");
		is_u64(tl[2].time_ms, 230, "timeline: the idle tick's");
		is_u64(tl[3].time_ms, 240, "timeline: the snapshot's");
	}
	heap_destroy(h);
}

/* Sample i's record as "id:bytes id:bytes", or "merged". */
static const char *
record_of(struct jt_heap *h, size_t i, char *buf, size_t len)
{
	const struct jt_heap_change *ch;
	size_t n, at = 0;

	buf[0] = '\0';
	if (!(ch = heap_timeline_stacks(h, i, &n)))
		return "merged";
	for (size_t k = 0; k < n && at < len; k++)
		at += (size_t)snprintf(buf + at, len - at, "%s%u:%lu", k ? " " : "", ch[k].stack_id,
				       (unsigned long)ch[k].live_bytes);
	return buf;
}

static void
is_record(struct jt_heap *h, size_t i, const char *want, const char *name)
{
	char buf[256];
	const char *got = record_of(h, i, buf, sizeof(buf));

	ok(strcmp(got, want) == 0, "%s (got \"%s\", want \"%s\")", name, got, want);
}

/* Each sample lists the stacks whose live bytes differ from the previous sample's, with their value. */
static void
test_timeline_stacks(void)
{
	struct jt_heap *h = new_heap();
	uint32_t a = stack_of(h, 0x1000), b = stack_of(h, 0x2000), c = stack_of(h, 0x3000);
	size_t n;

	heap_alloc(h, 0x1000, 100, a);		/* t=0: sample 0 */
	test_now = 50;
	heap_alloc(h, 0x2000, 200, b);
	test_now = 60;
	heap_free(h, 0x2000, NULL, 0);		/* b back to 0: no change at the next sample */
	test_now = 70;
	heap_alloc(h, 0x3000, 50, a);
	test_now = 100;
	heap_alloc(h, 0x4000, 10, c);		/* sample 1 */
	test_now = 240;
	heap_sample(h, 1);			/* sample 2: nothing changed */
	test_now = 300;
	heap_alloc(h, 0x5000, 7, c);
	heap_sample(h, 1);			/* sample 3 */
	heap_free(h, 0x5000, NULL, 0);
	heap_alloc(h, 0x6000, 1, a);
	heap_sample(h, 1);			/* the same ms again: sample 3 updated */
	heap_timeline(h, &n);
	is_u64(n, 4, "stacks: 4 samples");
	is_record(h, 0, "0:100", "stacks: sample 0 lists a");
	is_record(h, 1, "0:150 2:10", "stacks: sample 1 lists a and c, not b (back to 0)");
	is_record(h, 2, "", "stacks: sample 2 lists nothing (and is not merged)");
	is_record(h, 3, "2:10 0:151", "stacks: sample 3 taken again: c back to 10, a added, no entry twice");
	heap_destroy(h);
}

/*
 * Past the maximum, older records merge into later ones: each kept sample
 * still gives every stack's exact live bytes by carrying values forward.
 */
static void
test_timeline_merge(void)
{
	struct jt_heap *h = new_heap();
	uint32_t ids[3];
	uint64_t want[64][3] = { { 0 } }, got[3] = { 0 }, live[3] = { 0 };
	size_t n, entries = 0, merged = 0, bad = 0;

	for (int k = 0; k < 3; k++)
		ids[k] = stack_of(h, 0x1000 * (k + 1));
	heap_set_timeline_max(h, 8);
	for (int i = 0; i < 64; i++) {
		int k = i % 3;

		test_now = 100 * (uint64_t)i;
		heap_alloc(h, 0x100000 + (uint64_t)i * 0x100, 10 + (uint64_t)i, ids[k]);
		live[k] += 10 + (uint64_t)i;
		heap_sample(h, 1);
		for (int j = 0; j < 3; j++)
			want[i][j] = live[j];
	}
	heap_timeline(h, &n);
	is_u64(n, 64, "merge: 64 samples");
	for (size_t i = 0; i < n; i++) {
		const struct jt_heap_change *ch;
		size_t m;

		if (!(ch = heap_timeline_stacks(h, i, &m))) {
			merged++;
			continue;
		}
		entries += m;
		for (size_t e = 0; e < m; e++)
			got[ch[e].stack_id] = ch[e].live_bytes;
		for (int j = 0; j < 3; j++)
			bad += got[j] != want[i][j];
	}
	ok(entries <= 8, "merge: %zu entries kept, at most the maximum 8", entries);
	ok(merged > 0 && merged < n, "merge: %zu of %zu samples merged into later ones", merged, n);
	is_u64(bad, 0, "merge: every kept sample's carried-forward figures are exact");
	ok(heap_timeline_stacks(h, n - 1, &(size_t){ 0 }) != NULL, "merge: the last sample is kept");
	heap_destroy(h);
}

/*
 * 50 stacks, 3000 samples of random allocations and frees under a maximum
 * of 300 changes: the kept entries stay within it, and at every kept
 * sample each stack's carried-forward figure is its live bytes then.
 */
#define ST_STACKS 50
#define ST_SAMPLES 3000
static void
test_timeline_merge_stress(void)
{
	struct jt_heap *h = new_heap();
	static uint64_t want[ST_SAMPLES][ST_STACKS];
	uint64_t got[ST_STACKS] = { 0 }, next = 0x100000, live_addr[512] = { 0 };
	uint32_t ids[ST_STACKS];
	size_t n, m, entries, kept = 0, bad = 0, worst = 0;

	rng_seed(19);
	for (int k = 0; k < ST_STACKS; k++)
		ids[k] = stack_of(h, 0x1000 * (uint64_t)(k + 1));
	heap_set_timeline_max(h, 300);
	for (int i = 0; i < ST_SAMPLES; i++) {
		test_now = 100 * (uint64_t)i;
		for (int e = (int)(rng_next() % 6); e > 0; e--) {
			unsigned slot = (unsigned)(rng_next() % 512);

			if (live_addr[slot])
				heap_free(h, live_addr[slot], NULL, 0);
			live_addr[slot] = next += 0x100;
			heap_alloc(h, next, 1 + rng_next() % 100, ids[rng_next() % ST_STACKS]);
		}
		heap_sample(h, 1);
		for (int k = 0; k < ST_STACKS; k++)
			want[i][k] = heap_stack_get(h, ids[k])->live_bytes;
		entries = 0;
		for (size_t j = 0; j <= (size_t)i; j++)
			if (heap_timeline_stacks(h, j, &m))
				entries += m;
		if (entries > worst)
			worst = entries;
	}
	heap_timeline(h, &n);
	for (size_t i = 0; i < n; i++) {
		const struct jt_heap_change *ch = heap_timeline_stacks(h, i, &m);

		if (!ch)
			continue;
		kept++;
		for (size_t e = 0; e < m; e++)
			got[ch[e].stack_id] = ch[e].live_bytes;
		for (int k = 0; k < ST_STACKS; k++)
			bad += got[k] != want[i][k];
	}
	ok(worst <= 300 + ST_STACKS, "stress: at most %zu entries at any sample, within 300 and one record", worst);
	ok(kept > 1 && kept < n, "stress: %zu of %zu samples keep their record", kept, n);
	is_u64(bad, 0, "stress: every kept sample's figures are the stacks' live bytes then");
	heap_destroy(h);
}

static void
test_filtered_and_ranks(void)
{
	struct jt_heap *h = new_heap();
	uint32_t a = stack_of(h, 0x1000), b = stack_of(h, 0x2000), f = heap_filtered_stack(h);
	uint32_t ids[8], n;

	is_u64(heap_filtered_stack(h), f, "filtered: one stack, made once");
	ok(heap_stack_intern(h, NULL, 0) != f, "filtered: not an empty captured stack");
	ok(heap_stack_get(h, f)->filtered, "filtered: marked");
	heap_alloc(h, 0x10, 5, f);
	heap_alloc(h, 0x20, 10, a);
	heap_alloc(h, 0x30, 10, b);
	heap_alloc(h, 0x40, 10, b);
	heap_free(h, 0x30, NULL, 1);
	heap_free(h, 0x10, NULL, 0);
	n = heap_rank_stacks(h, HEAP_RANK_ALL, ids, 8);
	ok(n == 2 && ids[0] == a && ids[1] == b, "rank all: both, not the filtered one (%u)", n);
	n = heap_rank_stacks(h, HEAP_RANK_CALLS, ids, 8);
	ok(n == 2 && ids[0] == b && ids[1] == a, "rank calls: b (2) before a (1)");
	n = heap_rank_stacks(h, HEAP_RANK_TEMPORARY, ids, 8);
	ok(n == 1 && ids[0] == b, "rank temporary: only b");
	n = heap_rank_stacks(h, HEAP_RANK_LIVE, ids, 8);
	ok(n == 2 && ids[0] == a, "rank live: a and b tie on bytes and blocks, lower id first");
	heap_destroy(h);
}

static void
test_clear_live(void)
{
	struct jt_heap *h = new_heap();
	uint32_t a = stack_of(h, 0x1000), b = stack_of(h, 0x2000);
	const struct jt_stack *sa = heap_stack_get(h, a);

	heap_alloc(h, 0x1000, 1000, a);
	heap_clear_live(h);	/* an exec */
	heap_alloc(h, 0x2000, 2000, b);
	heap_sample(h, 1);	/* a snapshot at the new image's highest point */
	is_u64(sa->peak_bytes, 0, "exec: the old image's stack holds nothing at the new peak");
	is_u64(heap_stack_get(h, b)->peak_bytes, 2000, "exec: the new peak is the new image's");
	heap_destroy(h);
}

/* Checks stack id's ages in the open view: want -1 for none, else oldest and newest. */
static void
check_age(const struct jt_heap *h, uint32_t id, int want, uint64_t oldest, uint64_t newest, const char *what)
{
	uint64_t o = 0, n = 0;
	int r = heap_stack_age(h, id, &o, &n);
	if (want < 0)
		ok(r < 0, "%s: no ages", what);
	else
		ok(r == 0 && o == oldest && n == newest, "%s: oldest %lu, newest %lu (got %d, %lu, %lu)",
		   what, (unsigned long)oldest, (unsigned long)newest, r, (unsigned long)o, (unsigned long)n);
}

/*
 * Stack a gets a block at 0, 100, ..., 900 ms, stack b one at 950; at 1000
 * the view counts the blocks at least min_age old. The table grows twice
 * under 3000 more blocks of stack c made at 990 and freed again, which moves
 * the stamps (growth, backward-shift deletion): the ages must survive it.
 */
static void
test_ages(void)
{
	struct jt_heap *h = new_heap();
	uint32_t a = stack_of(h, 0x1000), b = stack_of(h, 0x2000), c = stack_of(h, 0x3000);
	const struct jt_stack *sa = heap_stack_get(h, a), *sb = heap_stack_get(h, b);
	struct jt_heap_totals t;
	uint32_t ids[4];

	for (uint64_t i = 0; i < 10; i++) {
		test_now = 100 * i;
		heap_alloc(h, 0x10000 + 0x100 * i, 10, a);
	}
	test_now = 950;
	heap_alloc(h, 0x20000, 1000, b);
	test_now = 990;
	for (uint64_t i = 0; i < 3000; i++)
		heap_alloc(h, 0x1000000 + 16 * i, 1, c);
	for (uint64_t i = 0; i < 3000; i++)
		heap_free(h, 0x1000000 + 16 * i, NULL, 0);
	heap_free(h, 0x10000 + 0x100 * 3, NULL, 0);	/* a's block of 300 ms */
	test_now = 1000;
	check_age(h, a, -1, 0, 0, "ages: none before a view");

	heap_view_begin(h, 1000, 0);
	check_age(h, a, 0, 1000, 100, "ages at 1000");
	check_age(h, b, 0, 50, 50, "ages at 1000, b");
	check_age(h, c, -1, 0, 0, "ages at 1000, c (no live block)");
	ok(sa->live_bytes == 90 && sa->live_blocks == 9, "no --older-than: a's live figures whole");
	heap_view_end(h);

	heap_view_begin(h, 1000, 250);
	heap_totals(h, &t);
	ok(sa->live_bytes == 70 && sa->live_blocks == 7, "--older-than 250 ms: a counts its 7 blocks of 0-700 ms");
	ok(sb->live_bytes == 0 && sb->live_blocks == 0, "--older-than 250 ms: b's young block is out");
	ok(t.live_bytes == 70 && t.live_blocks == 7, "--older-than 250 ms: the totals too");
	check_age(h, a, 0, 1000, 300, "--older-than 250 ms");
	check_age(h, b, -1, 0, 0, "--older-than 250 ms, b");
	is_u64(heap_rank_stacks(h, HEAP_RANK_LIVE, ids, 4), 1, "--older-than 250 ms: one stack ranks live");
	heap_view_end(h);

	heap_totals(h, &t);
	ok(sa->live_bytes == 90 && sb->live_bytes == 1000 && t.live_bytes == 1090 && t.live_blocks == 10,
	   "the view's end gives every figure back");
	check_age(h, a, -1, 0, 0, "ages: none after the view");
	heap_view_begin(h, 1000, 1001);
	heap_totals(h, &t);
	ok(sa->live_blocks == 0 && t.live_blocks == 0, "--older-than above every age: nothing live");
	heap_view_end(h);
	heap_destroy(h);
}

/*
 * The default clock: a block stamped with an event's CLOCK_MONOTONIC time is
 * as old as the event. The heap's clock is the coarse one, which lags the
 * fine one by a tick or more (a late tick on a busy VM): the stamps are taken
 * from the coarse clock, read where the heap's reading is known to equal it,
 * so the ages are exact.
 */
static void
test_event_time(void)
{
	struct jt_heap *h = heap_new();
	uint32_t a = stack_of(h, 0x1000), b = stack_of(h, 0x2000);
	uint64_t c1, n1, n2, old_o = 0, old_n, new_o = 0, new_n;
	int ra, rb;

	do {
		c1 = util_coarse_ms();
		n1 = heap_clock_ms(h);
	} while (util_coarse_ms() != c1);
	heap_set_event_time(h, (c1 - 300) * 1000000);	/* 300 ms before n1 */
	heap_alloc(h, 0x1000, 8, a);
	heap_set_event_time(h, (c1 + 60000) * 1000000);	/* a minute ahead: no later than now */
	heap_alloc(h, 0x2000, 8, b);
	heap_set_event_time(h, 0);
	n2 = heap_clock_ms(h);
	heap_view_begin(h, n2, 0);
	ra = heap_stack_age(h, a, &old_o, &old_n);
	rb = heap_stack_age(h, b, &new_o, &new_n);
	ok(ra == 0 && old_o == 300 + (n2 - n1), "event time: 300 ms before the first reading (%lu, %lu ms between readings)",
	   (unsigned long)old_o, (unsigned long)(n2 - n1));
	ok(rb == 0 && new_o <= n2 - n1, "event time: a future one is stamped now (%lu)", (unsigned long)new_o);
	heap_view_end(h);
	heap_destroy(h);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_buckets();
	test_counters();
	test_peak();
	test_timeline();
	test_timeline_stacks();
	test_timeline_merge();
	test_timeline_merge_stress();
	test_filtered_and_ranks();
	test_clear_live();
	test_ages();
	test_event_time();
	return tap_done();
}
