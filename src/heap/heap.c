/* heap.c - the heap: the deduplicated stack table and its counters, the live blocks (kept in live.c), the peak and the timeline. */
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "heap_int.h"
#include "heap_tlog.h"
#include "live.h"
#include "table.h"
#include "util.h"

/*
 * Live blocks sit in live.c's table, about 20 bytes a block (issue 33):
 * the address, the size, the stack id and the allocation time, the
 * clock's ms in 32 bits (the stamp). An age is now - stamp in 32-bit
 * arithmetic, exact for any block younger than 49 days, whatever the
 * clock reads; no stamp is ever later than the clock, so no age is negative.
 */
static void heap_sample_at(struct jt_heap *h, uint64_t now, int force);

/*
 * Records the live figures of every stack as the peak's: at the first free
 * after a new highest point (live_account), and at a snapshot taken at one
 * (heap_sample), so the peak is exact, not only within massif's 1%. Only
 * the stacks whose figures changed since the last record are visited (the
 * dirty list), so a record costs at most the events since the last one:
 * every event stays O(1), amortized, whatever the number of stacks.
 */
static void
heap_peak_record(struct jt_heap *h)
{
	for (size_t i = 0; i < h->ndirty; i++) {
		struct jt_stack *s = stack_at(h, h->dirty[i]);

		s->peak_bytes = s->live_bytes;
		s->peak_blocks = s->live_blocks;
		s->dirty = 0;
	}
	h->ndirty = 0;
	h->peak.live_bytes = h->tot.live_bytes;
	h->peak.live_blocks = h->tot.live_blocks;
	h->peak.time_ms = h->peak_ms;
}

/* Puts stack_id on a list of changed stacks once: *flag says it is there. */
static void
dirty_mark(int *flag, uint32_t **list, size_t *n, size_t *cap, uint32_t stack_id)
{
	if (*flag)
		return;
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		*list = xrealloc(*list, *cap * sizeof(**list));
	}
	(*list)[(*n)++] = stack_id;
	*flag = 1;
}

/* Adds (add != 0) or removes one block of size bytes to the live figures. */
static void
live_account(struct jt_heap *h, uint32_t stack_id, uint64_t size, int add)
{
	struct jt_stack *s = stack_at(h, stack_id);
	uint64_t d = add ? size : -size, n = add ? 1 : -1;
	uint64_t now = h->now_ms(h->clock_arg);

	/* The heap turns down from its highest point yet: that is the peak to keep. */
	if (!add && h->tot.live_bytes == h->tot.peak_live_bytes && h->tot.live_bytes > h->peak.live_bytes)
		heap_peak_record(h);
	s->live_bytes += d;
	s->live_blocks += n;
	h->tot.live_bytes += d;
	h->tot.live_blocks += n;
	dirty_mark(&s->dirty, &h->dirty, &h->ndirty, &h->dirty_cap, stack_id);
	dirty_mark(&s->tl_dirty, &h->tdirty, &h->ntdirty, &h->tdirty_cap, stack_id);
	if (h->tot.live_bytes > h->tot.peak_live_bytes) {
		h->tot.peak_live_bytes = h->tot.live_bytes;
		h->peak_ms = now;
	}
	heap_sample_at(h, now, 0);
}

static uint64_t
stack_hash(const uint64_t *pcs, uint32_t depth)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ depth;
	uint32_t i;

	for (i = 0; i < depth; i++) {
		x = (x ^ pcs[i]) * 0xbf58476d1ce4e5b9ULL;
		x ^= x >> 29;
	}
	return table_mix64(x);
}

/* A stack being looked up in the index. */
struct stack_key {
	const struct jt_heap *h;
	const uint64_t *pcs;
	uint32_t depth;
	int truncated;
};

static int
stack_equal(const void *arg, uint32_t id)
{
	const struct stack_key *k = arg;
	const struct jt_stack *s = stack_at(k->h, id);

	return s->depth == k->depth && s->truncated == k->truncated &&
	       (!k->depth || !memcmp(s->pcs, k->pcs, k->depth * sizeof(*k->pcs)));
}

static uint32_t
stack_add(struct jt_heap *h, const uint64_t *pcs, uint32_t depth, int truncated)
{
	uint32_t id = h->nstacks;
	struct jt_stack *s;

	if ((id >> STACK_CHUNK_SHIFT) == h->nchunks) {
		h->chunks = xrealloc(h->chunks, (h->nchunks + 1) * sizeof(*h->chunks));
		h->chunks[h->nchunks++] = xcalloc(STACK_CHUNK, sizeof(struct jt_stack));
	}
	s = stack_at(h, id);
	s->id = id;
	s->depth = depth;
	s->truncated = truncated;
	if (depth) {
		s->pcs = xmalloc(depth * sizeof(uint64_t));
		memcpy(s->pcs, pcs, depth * sizeof(uint64_t));
	}
	h->nstacks++;
	return id;
}

uint32_t
heap_stack_intern(struct jt_heap *h, const uint64_t *pcs, uint32_t depth)
{
	return heap_stack_intern_cut(h, pcs, depth, 0);
}

uint32_t
heap_stack_intern_cut(struct jt_heap *h, const uint64_t *pcs, uint32_t depth, int truncated)
{
	struct stack_key k = { h, pcs, depth, truncated };
	uint32_t hash, id;

	/* Compared before it is hashed: cheaper than the hash and the index's probe when it is the same. */
	if (h->last_sid < h->nstacks && stack_equal(&k, h->last_sid))
		return h->last_sid;
	hash = (uint32_t)stack_hash(pcs, depth) ^ (truncated ? 0x9e3779b9u : 0);
	id = index_find(&h->sidx, hash, stack_equal, &k);
	if (id == UINT32_MAX) {
		id = stack_add(h, pcs, depth, truncated);
		index_add(&h->sidx, hash, id);
	}
	h->last_sid = id;
	return id;
}

/* The pointer stays valid until heap_destroy: stacks live in fixed chunks. */
const struct jt_stack *
heap_stack_get(const struct jt_heap *h, uint32_t id)
{
	return id < h->nstacks ? stack_at(h, id) : NULL;
}

uint32_t
heap_stack_count(const struct jt_heap *h)
{
	return h->nstacks;
}

static uint64_t
heap_default_clock(void *arg)
{
	const struct jt_heap *h = arg;

	/* A few ms of resolution are plenty for 100 ms samples, and it costs no system call. */
	return util_coarse_ms() - h->origin_ms;
}

struct jt_heap *
heap_new(void)
{
	struct jt_heap *h = xcalloc(1, sizeof(*h));

	h->live = live_new();
	index_init(&h->sidx, STACK_IDX_MIN_CAP);
	h->now_ms = heap_default_clock;
	h->clock_arg = h;
	h->origin_ms = util_coarse_ms();
	tlog_init(&h->tlog, HEAP_TL_CHANGES_MAX);
	h->memo = xcalloc(1, sizeof(*h->memo));
	return h;
}

void
heap_destroy(struct jt_heap *h)
{
	uint32_t i;

	if (!h)
		return;
	if (h->origin) {
		heap_frozen_free(h);
		return;
	}
	for (i = 0; i < h->nstacks; i++) {
		free(stack_at(h, i)->pcs);
		free(stack_at(h, i)->hist);
	}
	free(h->dirty);
	free(h->tl);
	free(h->tdirty);
	tlog_free(&h->tlog);
	free(h->view);
	free(h->memo->v);
	free(h->memo);
	for (i = 0; i < h->nchunks; i++)
		free(h->chunks[i]);
	free(h->chunks);
	index_free(&h->sidx);
	live_destroy(h->live);
	free(h);
}

/* The allocation time of a block recorded now: the event's, never later than the clock. */
static uint32_t
heap_event_stamp(const struct jt_heap *h)
{
	uint64_t now = h->now_ms(h->clock_arg);

	/* An age is a 32-bit difference: a stamp from before the origin wraps, and still gives it. */
	return (uint32_t)(h->event_set && h->event_ms < (int64_t)now ? (uint64_t)h->event_ms : now);
}

void
heap_set_event_time(struct jt_heap *h, uint64_t mono_ns)
{
	h->event_set = mono_ns != 0;
	h->event_ms = (int64_t)(mono_ns / 1000000) - (int64_t)h->origin_ms;
}

/*
 * Besides the contract in heap.h: addr 0 (a failed allocation) and an
 * unknown stack_id are caller bugs; both return -1 and record nothing
 * rather than corrupt the table.
 */
int
heap_alloc(struct jt_heap *h, uint64_t addr, uint64_t size, uint32_t stack_id)
{
	struct jt_block b = { size, stack_id, 0 }, old;
	struct jt_stack *s;
	int again;

	if (!addr || stack_id >= h->nstacks)
		return -1;
	b.stamp = heap_event_stamp(h);
	again = live_set(h->live, addr, &b, &old);
	/* A free we never saw, or not yet: drop the old block, but not as a free. */
	if (again) {
		live_account(h, old.stack_id, old.size, 0);
		h->dropped_addr = addr;
		h->dropped_size = old.size;
		h->dropped_stack = old.stack_id;
		h->dropped = 1;
	}
	live_account(h, stack_id, size, 1);
	s = stack_at(h, stack_id);
	s->alloc_calls++;
	s->alloc_bytes += size;
	if (!s->hist)
		s->hist = xcalloc(HEAP_HIST_BUCKETS, sizeof(*s->hist));
	s->hist[heap_hist_bucket(size)]++;
	h->tot.allocs++;
	h->tot.bytes_allocated += size;
	return again;
}

int
heap_take_dropped(struct jt_heap *h, uint64_t *addr, uint64_t *size, uint32_t *stack_id)
{
	if (!h->dropped)
		return 0;
	h->dropped = 0;
	*addr = h->dropped_addr;
	*size = h->dropped_size;
	*stack_id = h->dropped_stack;
	return 1;
}

/* Counts a free of a block of stack stack_id, its live figures taken down before. */
static void
heap_count_free(struct jt_heap *h, uint32_t stack_id, int temporary)
{
	stack_at(h, stack_id)->frees++;
	h->tot.frees++;
	if (temporary) {
		stack_at(h, stack_id)->temporary++;
		h->tot.temporary++;
	}
}

void
heap_free_dropped(struct jt_heap *h, uint32_t stack_id, int temporary)
{
	if (stack_id < h->nstacks)
		heap_count_free(h, stack_id, temporary);
}

int
heap_free(struct jt_heap *h, uint64_t addr, uint64_t *size, int temporary)
{
	struct jt_block b;

	if (!addr || live_take(h->live, addr, &b) < 0)
		return -1;
	live_account(h, b.stack_id, b.size, 0);
	heap_count_free(h, b.stack_id, temporary);
	if (size)
		*size = b.size;
	return 0;
}

/* Puts a live block in the table with its stamp, counting no allocation: a piece of one counted before. */
static void
live_put(struct jt_heap *h, uint64_t addr, uint64_t size, uint32_t stack_id, uint32_t stamp)
{
	struct jt_block b = { size, stack_id, stamp };

	live_set(h->live, addr, &b, NULL);
	live_account(h, stack_id, size, 1);
}

int
heap_carve(struct jt_heap *h, uint64_t addr, uint64_t lo, uint64_t hi)
{
	struct jt_block b;

	if (!addr || live_get(h->live, addr, &b) < 0)
		return -1;
	lo = lo > addr ? lo : addr;
	hi = hi < addr + b.size ? hi : addr + b.size;
	if (lo >= hi)
		return 0;
	if (lo == addr && hi == addr + b.size)
		return heap_free(h, addr, NULL, 0);
	live_take(h->live, addr, NULL);
	live_account(h, b.stack_id, b.size, 0);
	if (lo > addr)
		live_put(h, addr, lo - addr, b.stack_id, b.stamp);
	if (hi < addr + b.size)
		live_put(h, hi, addr + b.size - hi, b.stack_id, b.stamp);
	return 0;
}

int
heap_place(struct jt_heap *h, uint64_t addr, uint64_t size, uint32_t stack_id)
{
	if (!addr || !size || stack_id >= h->nstacks || heap_lookup(h, addr, NULL, NULL) == 0)
		return -1;
	live_put(h, addr, size, stack_id, heap_event_stamp(h));
	return 0;
}

void
heap_unknown_free(struct jt_heap *h)
{
	h->tot.unknown_frees++;
}

int
heap_invalid_free(struct jt_heap *h, uint32_t stack_id, int inside)
{
	if (stack_id >= h->nstacks)
		return -1;
	stack_at(h, stack_id)->invalid_frees++;
	stack_at(h, stack_id)->inside_frees += inside != 0;
	h->tot.invalid_frees++;
	h->tot.inside_frees += inside != 0;
	h->tot.unknown_frees++;
	return 0;
}

int
heap_lookup(const struct jt_heap *h, uint64_t addr, uint64_t *size, uint32_t *stack_id)
{
	struct jt_block b;

	if (!addr || live_get(h->live, addr, &b) < 0)
		return -1;
	if (size)
		*size = b.size;
	if (stack_id)
		*stack_id = b.stack_id;
	return 0;
}

/* How many candidates ahead heap_find_inside prefetches: a lookup is a cache miss, and they overlap. */
#define INSIDE_AHEAD 8

int
heap_find_inside(const struct jt_heap *h, uint64_t addr, uint64_t *start)
{
	/*
	 * The starts a block holding addr could have, nearest first, each one
	 * lookup: a walk of the table instead made every free of a lost
	 * allocation (a uprobe ring that overflowed) cost the whole heap, and
	 * a snapshot's drain of 100,000 of them took minutes.
	 */
	uint64_t cand = addr & ~(uint64_t)(HEAP_INSIDE_ALIGN - 1);

	if (cand == addr)
		cand -= HEAP_INSIDE_ALIGN;
	for (; cand && addr - cand <= HEAP_INSIDE_REACH; cand -= HEAP_INSIDE_ALIGN) {
		struct jt_block b;

		if (cand > INSIDE_AHEAD * HEAP_INSIDE_ALIGN && addr - cand + INSIDE_AHEAD * HEAP_INSIDE_ALIGN <= HEAP_INSIDE_REACH)
			live_prefetch(h->live, cand - INSIDE_AHEAD * HEAP_INSIDE_ALIGN);
		if (live_get(h->live, cand, &b) == 0 && addr - cand < b.size) {
			if (start)
				*start = cand;
			return 0;
		}
	}
	return -1;
}

/* heap_each_live's caller's function and argument, for live_each. */
struct each_live {
	void (*fn)(void *arg, uint64_t addr, uint64_t size, uint32_t stack_id);
	void *arg;
};

static void
each_live_one(void *arg, uint64_t addr, const struct jt_block *b)
{
	const struct each_live *e = arg;

	e->fn(e->arg, addr, b->size, b->stack_id);
}

void
heap_each_live(const struct jt_heap *h, void (*fn)(void *arg, uint64_t addr, uint64_t size, uint32_t stack_id),
	       void *arg)
{
	struct each_live e = { fn, arg };

	if (h->live)	/* a frozen copy has none */
		live_each(h->live, each_live_one, &e);
}

void
heap_totals(const struct jt_heap *h, struct jt_heap_totals *out)
{
	*out = h->tot;
}

/*
 * The new image starts small, so the table gives its memory back.
 * The old image's invalid frees go too: their stacks cannot be symbolized
 * against the new one (the exec snapshot listed them).
 */
void
heap_clear_live(struct jt_heap *h)
{
	uint32_t id;

	live_clear(h->live);
	for (id = 0; id < h->nstacks; id++) {
		struct jt_stack *s = stack_at(h, id);

		/* Through live_account, so that the dirty list knows: a later peak then sees 0. */
		if (s->live_blocks || s->live_bytes)
			live_account(h, id, s->live_bytes, 0);
		s->live_blocks = 0;
		s->invalid_frees = 0;
		s->inside_frees = 0;
	}
	h->tot.live_bytes = 0;
	h->tot.live_blocks = 0;
	h->tot.invalid_frees = 0;
	h->tot.inside_frees = 0;
}

uint32_t
heap_filtered_stack(struct jt_heap *h)
{
	/* Not in the index: no captured stack, even an empty one, is ever equal to it. */
	if (!h->filtered_id1) {
		h->filtered_id1 = stack_add(h, NULL, 0, 0) + 1;
		stack_at(h, h->filtered_id1 - 1)->filtered = 1;
	}
	return h->filtered_id1 - 1;
}

void
heap_set_clock(struct jt_heap *h, uint64_t (*now_ms)(void *arg), void *arg)
{
	h->now_ms = now_ms;
	h->clock_arg = arg;
}

void
heap_clock_from(struct jt_heap *h, const struct jt_heap *from)
{
	h->origin_ms = from->origin_ms;
	if (from->now_ms != heap_default_clock) {
		h->now_ms = from->now_ms;
		h->clock_arg = from->clock_arg;
	}
}

uint64_t
heap_clock_ms(const struct jt_heap *h)
{
	return h->now_ms(h->clock_arg);
}

void
heap_peak(const struct jt_heap *h, struct jt_heap_peak *out)
{
	*out = h->peak;
}

void
heap_sample(struct jt_heap *h, int force)
{
	heap_sample_at(h, h->now_ms(h->clock_arg), force);
}

/*
 * Lists the stacks whose live bytes changed since the last sample in the
 * record of the sample just taken (replace: taken again in the same ms).
 */
static void
heap_tl_record(struct jt_heap *h, int replace)
{
	for (size_t i = 0; i < h->ntdirty; i++) {
		struct jt_stack *s = stack_at(h, h->tdirty[i]);

		s->tl_dirty = 0;
		if (s->live_bytes == s->tl_bytes)
			continue;
		tlog_put(&h->tlog, s->id, s->live_bytes, replace);
		s->tl_bytes = s->live_bytes;
	}
	h->ntdirty = 0;
	tlog_bound(&h->tlog, h->nstacks);
}

static void
heap_sample_at(struct jt_heap *h, uint64_t now, int force)
{
	struct jt_heap_sample *last = h->ntl ? &h->tl[h->ntl - 1] : NULL;

	/* A snapshot at the highest point yet: it is the peak, not yet recorded (no free since). */
	if (force && h->tot.live_bytes == h->tot.peak_live_bytes && h->tot.live_bytes > h->peak.live_bytes)
		heap_peak_record(h);

	if (!force && last && now - last->time_ms < HEAP_SAMPLE_MS)
		return;
	/* Two samples in one ms (a snapshot right after an event): the later wins. */
	if (last && last->time_ms == now) {
		last->live_bytes = h->tot.live_bytes;
		last->live_blocks = h->tot.live_blocks;
		heap_tl_record(h, 1);
		return;
	}
	if (h->ntl == h->tl_cap) {
		h->tl_cap = h->tl_cap ? 2 * h->tl_cap : 256;
		h->tl = xrealloc(h->tl, h->tl_cap * sizeof(*h->tl));
	}
	h->tl[h->ntl++] = (struct jt_heap_sample){ now, h->tot.live_bytes, h->tot.live_blocks };
	tlog_begin(&h->tlog);
	heap_tl_record(h, 0);
}

const struct jt_heap_sample *
heap_timeline(const struct jt_heap *h, size_t *n)
{
	*n = h->ntl;
	return h->tl;
}

const struct jt_heap_change *
heap_timeline_stacks(const struct jt_heap *h, size_t i, size_t *n)
{
	return tlog_get(&h->tlog, i, n);
}

void
heap_set_timeline_max(struct jt_heap *h, size_t max)
{
	h->tlog.max = max;
}
