/* test_up_ring.c - unit tests for up_ring: records merged by time, the cut that keeps a free before the malloc it allowed, wrapped records. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "tap.h"
#include "up_ring.h"

#define DATA 4096

/* A record as the uprobe source's samples start: header, id, pid/tid, time; then a tag for the test. */
struct rec {
	struct perf_event_header h;
	uint64_t id;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t tag;
};

struct fake {
	uint8_t *map;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	struct up_ring *r;
};

static void
fake_new(struct fake *f, uint64_t start)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	f->map = aligned_alloc(page, page + DATA);
	memset(f->map, 0, page + DATA);
	f->meta = (struct perf_event_mmap_page *)f->map;
	f->data = f->map + page;
	f->meta->data_head = f->meta->data_tail = start;
	f->r = up_ring_wrap(-1, f->map, DATA);
}

static void
fake_free(struct fake *f)
{
	up_ring_close(f->r);
	free(f->map);
}

/* Writes a record at the ring's head as the kernel does (byte by byte across the end), then moves the head. */
static void
fake_put(struct fake *f, uint32_t type, uint64_t time, uint64_t tag)
{
	struct rec x = { .h = { .type = type, .size = sizeof(x) }, .time = time, .tag = tag };
	uint64_t head = f->meta->data_head;

	for (size_t i = 0; i < sizeof(x); i++)
		f->data[(head + i) & (DATA - 1)] = ((uint8_t *)&x)[i];
	__atomic_store_n(&f->meta->data_head, head + sizeof(x), __ATOMIC_RELEASE);
}

struct seen {
	uint64_t tag[64];
	size_t n;
};

static void
apply(void *arg, const uint8_t *rec)
{
	struct seen *s = arg;
	struct rec x;

	memcpy(&x, rec, sizeof(x));
	if (s->n < 64)
		s->tag[s->n++] = x.h.type == PERF_RECORD_SAMPLE ? x.tag : 1000 + x.h.type;
}

static int
seen_is(const struct seen *s, const uint64_t *want, size_t n)
{
	return s->n == n && !memcmp(s->tag, want, n * sizeof(*want));
}

/* Two threads' records interleaved in time come out in time order. */
static void
test_order(void)
{
	struct fake a, b;
	struct up_ring *rings[2];
	struct seen s = { 0 };
	const uint64_t want[] = { 1, 2, 3, 4, 5 };

	fake_new(&a, 0);
	fake_new(&b, 0);
	fake_put(&a, PERF_RECORD_SAMPLE, 10, 1);
	fake_put(&b, PERF_RECORD_SAMPLE, 20, 2);
	fake_put(&a, PERF_RECORD_SAMPLE, 30, 3);
	fake_put(&a, PERF_RECORD_SAMPLE, 40, 4);
	fake_put(&b, PERF_RECORD_SAMPLE, 50, 5);
	rings[0] = a.r;
	rings[1] = b.r;
	up_ring_merge(rings, 2, 100, apply, &s);
	ok(seen_is(&s, want, 5), "two rings merged in time order (%zu records)", s.n);
	is_u64(a.meta->data_tail, 3 * sizeof(struct rec), "ring a: its space freed up to its head");
	is_u64(b.meta->data_tail, 2 * sizeof(struct rec), "ring b: its space freed up to its head");
	fake_free(&a);
	fake_free(&b);
}

/*
 * The race the cut closes. Thread B frees a block (sample at t=5) and
 * thread A's malloc returns that block (t=20), but B's record reaches its
 * ring only after the merge read B's head, A's before it read A's: so the
 * first merge sees A's record alone. With the clock read at t=10 before
 * the heads, A's record (t=20 >= cut) must wait; applied now, the free
 * that follows at the next merge would free the block malloc returned.
 */
static void
test_cut(void)
{
	struct fake a, b;
	struct up_ring *rings[2];
	struct seen s = { 0 };
	const uint64_t first[] = { 7 }, both[] = { 7, 5, 20 };

	fake_new(&a, 0);
	fake_new(&b, 0);
	fake_put(&a, PERF_RECORD_SAMPLE, 3, 7);
	fake_put(&a, PERF_RECORD_SAMPLE, 20, 20);
	rings[0] = b.r;
	rings[1] = a.r;
	up_ring_merge(rings, 2, 10, apply, &s);
	ok(seen_is(&s, first, 1), "a sample taken after the cut waits (applied %zu, want 1)", s.n);
	is_u64(a.meta->data_tail, sizeof(struct rec), "ring a: the waiting record's space is kept");
	fake_put(&b, PERF_RECORD_SAMPLE, 5, 5);
	up_ring_merge(rings, 2, 30, apply, &s);
	ok(seen_is(&s, both, 3), "the free (t=5) is applied before the malloc that returned its block (t=20)");
	fake_free(&a);
	fake_free(&b);
}

/* A record that is not a sample (the kernel's LOST) has no time and goes at once, even past the cut. */
static void
test_not_sample(void)
{
	struct fake a;
	struct up_ring *rings[1];
	struct seen s = { 0 };
	const uint64_t want[] = { 1, 1000 + PERF_RECORD_LOST };

	fake_new(&a, 0);
	fake_put(&a, PERF_RECORD_SAMPLE, 5, 1);
	fake_put(&a, PERF_RECORD_LOST, 0, 0);
	fake_put(&a, PERF_RECORD_SAMPLE, 50, 2);
	rings[0] = a.r;
	up_ring_merge(rings, 1, 10, apply, &s);
	ok(seen_is(&s, want, 2), "a LOST record is applied in its place; the later sample waits (%zu)", s.n);
	fake_free(&a);
}

/* Records that straddle the end of the data area are read whole (the kernel's records are 8-aligned). */
static void
test_wrap(void)
{
	const uint64_t starts[] = { DATA - 8, DATA - 24, DATA - sizeof(struct rec), DATA - 16 };

	for (size_t k = 0; k < sizeof(starts) / sizeof(*starts); k++) {
		struct fake a;
		struct up_ring *rings[1];
		struct seen s = { 0 };
		const uint64_t want[] = { 11, 12, 13 };

		fake_new(&a, starts[k]);
		fake_put(&a, PERF_RECORD_SAMPLE, 1, 11);
		fake_put(&a, PERF_RECORD_SAMPLE, 2, 12);
		fake_put(&a, PERF_RECORD_SAMPLE, 3, 13);
		rings[0] = a.r;
		up_ring_merge(rings, 1, 100, apply, &s);
		ok(seen_is(&s, want, 3), "records starting %llu bytes before the end read whole",
		   (unsigned long long)(DATA - starts[k]));
		fake_free(&a);
	}
}

int
main(void)
{
	test_order();
	test_cut();
	test_not_sample();
	test_wrap();
	return tap_done();
}
