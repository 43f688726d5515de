/* heap.c - the live-block table (address -> size, stack) and the deduplicated stack table. */
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "util.h"

/*
 * Live blocks sit in an open-addressing table with linear probing. A slot
 * is 16 bytes: the address (0 marks an empty slot; a live block is never at
 * 0) and a packed value, size << 32 | stack id. With growth at 75% load that
 * is 21 to 43 bytes per live block, so a target holding millions of blocks
 * keeps the tracer small.
 *
 * A block of 4 GiB or more cannot keep its size in 32 bits: its value reads
 * VAL_ESCAPE << 32 | stack id and the size sits in a second table of the
 * same kind, h->big. Few such blocks fit in an address space, so it stays tiny.
 */
#define TABLE_MIN_CAP	16u
#define LIVE_MIN_CAP	1024u
#define VAL_ESCAPE	0xffffffffu

/* Stacks are kept in fixed chunks so that jt_stack pointers never move. */
#define STACK_CHUNK_SHIFT	10
#define STACK_CHUNK		(1u << STACK_CHUNK_SHIFT)
#define STACK_IDX_MIN_CAP	1024u

struct jt_slot {
	uint64_t addr;
	uint64_t val;
};

/* Maps a non-zero address to a 64-bit value. */
struct jt_table {
	struct jt_slot *slots;
	size_t cap, count;		/* cap is a power of two */
};

/* One index slot of the stack table: id + 1 (0 = empty) and its hash. */
struct jt_sidx {
	uint32_t hash;
	uint32_t id1;
};

struct jt_heap {
	struct jt_table live;		/* addr -> packed size and stack */
	struct jt_table big;		/* addr -> size, for escaped blocks */
	struct jt_stack **chunks;	/* chunks[id >> SHIFT][id & (CHUNK-1)] */
	uint32_t nstacks, nchunks;
	struct jt_sidx *sidx;
	size_t sidx_cap;
	struct jt_heap_totals tot;
};

/*
 * murmur3's finalizer. Addresses are 16-byte aligned and the index takes
 * the low bits, so the high bits must reach them.
 */
static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static void
table_init(struct jt_table *t, size_t cap)
{
	t->slots = xcalloc(cap, sizeof(*t->slots));
	t->cap = cap;
	t->count = 0;
}

static size_t
table_home(const struct jt_table *t, uint64_t addr)
{
	return mix64(addr) & (t->cap - 1);
}

/* Returns the slot holding addr, or the empty slot where it would go. */
static size_t
table_probe(const struct jt_table *t, uint64_t addr)
{
	size_t i = table_home(t, addr);

	while (t->slots[i].addr && t->slots[i].addr != addr)
		i = (i + 1) & (t->cap - 1);
	return i;
}

static void
table_grow(struct jt_table *t)
{
	struct jt_slot *old = t->slots;
	size_t old_cap = t->cap, count = t->count, i;

	table_init(t, 2 * old_cap);
	for (i = 0; i < old_cap; i++)
		if (old[i].addr)
			t->slots[table_probe(t, old[i].addr)] = old[i];
	t->count = count;
	free(old);
}

/* Returns the slot of addr, claiming an empty one when absent (*fresh = 1). */
static struct jt_slot *
table_claim(struct jt_table *t, uint64_t addr, int *fresh)
{
	struct jt_slot *s;

	if (4 * (t->count + 1) > 3 * t->cap)
		table_grow(t);
	s = &t->slots[table_probe(t, addr)];
	*fresh = !s->addr;
	if (*fresh) {
		s->addr = addr;
		t->count++;
	}
	return s;
}

/*
 * Backward-shift deletion: walk the cluster after the hole and pull back
 * every entry whose home is not inside (hole, j]; the table then looks as
 * if the removed key had never been inserted, so no tombstones pile up.
 */
static void
table_remove_at(struct jt_table *t, size_t hole)
{
	size_t mask = t->cap - 1, j = hole, home;

	for (;;) {
		j = (j + 1) & mask;
		if (!t->slots[j].addr)
			break;
		home = table_home(t, t->slots[j].addr);
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			t->slots[hole] = t->slots[j];
			hole = j;
		}
	}
	t->slots[hole].addr = 0;
	t->slots[hole].val = 0;
	t->count--;
}

static uint64_t
val_pack(struct jt_heap *h, uint64_t addr, uint64_t size, uint32_t stack_id)
{
	int fresh;

	if (size < VAL_ESCAPE)
		return size << 32 | stack_id;
	table_claim(&h->big, addr, &fresh)->val = size;
	return (uint64_t)VAL_ESCAPE << 32 | stack_id;
}

static void
val_unpack(const struct jt_heap *h, uint64_t addr, uint64_t val,
	   uint64_t *size, uint32_t *stack_id)
{
	*stack_id = (uint32_t)val;
	*size = val >> 32;
	if (*size == VAL_ESCAPE)
		*size = h->big.slots[table_probe(&h->big, addr)].val;
}

/* Drops the side entry of an escaped value. */
static void
val_release(struct jt_heap *h, uint64_t addr, uint64_t val)
{
	if (val >> 32 == VAL_ESCAPE)
		table_remove_at(&h->big, table_probe(&h->big, addr));
}

static struct jt_stack *
stack_at(const struct jt_heap *h, uint32_t id)
{
	return &h->chunks[id >> STACK_CHUNK_SHIFT][id & (STACK_CHUNK - 1)];
}

/* Adds (add != 0) or removes one block of size bytes to the live figures. */
static void
live_account(struct jt_heap *h, uint32_t stack_id, uint64_t size, int add)
{
	struct jt_stack *s = stack_at(h, stack_id);
	uint64_t d = add ? size : -size, n = add ? 1 : -1;

	s->live_bytes += d;
	s->live_blocks += n;
	h->tot.live_bytes += d;
	h->tot.live_blocks += n;
	if (h->tot.live_bytes > h->tot.peak_live_bytes)
		h->tot.peak_live_bytes = h->tot.live_bytes;
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
	return mix64(x);
}

static void
stack_index_grow(struct jt_heap *h)
{
	struct jt_sidx *old = h->sidx;
	size_t old_cap = h->sidx_cap, cap = 2 * old_cap, i, j;

	h->sidx = xcalloc(cap, sizeof(*h->sidx));
	h->sidx_cap = cap;
	for (i = 0; i < old_cap; i++) {
		if (!old[i].id1)
			continue;
		for (j = old[i].hash & (cap - 1); h->sidx[j].id1; j = (j + 1) & (cap - 1))
			;
		h->sidx[j] = old[i];
	}
	free(old);
}

static int
stack_equal(const struct jt_stack *s, const uint64_t *pcs, uint32_t depth, int truncated)
{
	return s->depth == depth && s->truncated == truncated &&
	       (!depth || !memcmp(s->pcs, pcs, depth * sizeof(*pcs)));
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
	uint32_t hash = (uint32_t)stack_hash(pcs, depth) ^ (truncated ? 0x9e3779b9u : 0);
	size_t mask, i;

	if (4 * ((size_t)h->nstacks + 1) > 3 * h->sidx_cap)
		stack_index_grow(h);
	mask = h->sidx_cap - 1;
	for (i = hash & mask; h->sidx[i].id1; i = (i + 1) & mask) {
		if (h->sidx[i].hash == hash &&
		    stack_equal(stack_at(h, h->sidx[i].id1 - 1), pcs, depth, truncated))
			return h->sidx[i].id1 - 1;
	}
	h->sidx[i].hash = hash;
	h->sidx[i].id1 = stack_add(h, pcs, depth, truncated) + 1;
	return h->sidx[i].id1 - 1;
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

struct jt_heap *
heap_new(void)
{
	struct jt_heap *h = xcalloc(1, sizeof(*h));

	table_init(&h->live, LIVE_MIN_CAP);
	table_init(&h->big, TABLE_MIN_CAP);
	h->sidx = xcalloc(STACK_IDX_MIN_CAP, sizeof(*h->sidx));
	h->sidx_cap = STACK_IDX_MIN_CAP;
	return h;
}

void
heap_destroy(struct jt_heap *h)
{
	uint32_t i;

	if (!h)
		return;
	for (i = 0; i < h->nstacks; i++)
		free(stack_at(h, i)->pcs);
	for (i = 0; i < h->nchunks; i++)
		free(h->chunks[i]);
	free(h->chunks);
	free(h->sidx);
	free(h->big.slots);
	free(h->live.slots);
	free(h);
}

/*
 * Besides the contract in heap.h: addr 0 (a failed allocation) and an
 * unknown stack_id are caller bugs; both return -1 and record nothing
 * rather than corrupt the table.
 */
int
heap_alloc(struct jt_heap *h, uint64_t addr, uint64_t size, uint32_t stack_id)
{
	struct jt_slot *slot;
	struct jt_stack *s;
	uint64_t old_size;
	uint32_t old_stack;
	int fresh;

	if (!addr || stack_id >= h->nstacks)
		return -1;
	slot = table_claim(&h->live, addr, &fresh);
	if (!fresh) {
		/* A free we never saw: drop the old block, but not as a free. */
		val_unpack(h, addr, slot->val, &old_size, &old_stack);
		val_release(h, addr, slot->val);
		live_account(h, old_stack, old_size, 0);
	}
	slot->val = val_pack(h, addr, size, stack_id);
	live_account(h, stack_id, size, 1);
	s = stack_at(h, stack_id);
	s->alloc_calls++;
	s->alloc_bytes += size;
	h->tot.allocs++;
	h->tot.bytes_allocated += size;
	return !fresh;
}

/* Returns the slot of a live addr and unpacks its figures, or -1. */
static long
live_find(const struct jt_heap *h, uint64_t addr, uint64_t *size, uint32_t *stack_id)
{
	size_t i;

	if (!addr)
		return -1;
	i = table_probe(&h->live, addr);
	if (!h->live.slots[i].addr)
		return -1;
	val_unpack(h, addr, h->live.slots[i].val, size, stack_id);
	return (long)i;
}

int
heap_free(struct jt_heap *h, uint64_t addr, uint64_t *size, int temporary)
{
	uint64_t bsize;
	uint32_t stack_id;
	long i = live_find(h, addr, &bsize, &stack_id);

	if (i < 0)
		return -1;
	val_release(h, addr, h->live.slots[i].val);
	table_remove_at(&h->live, (size_t)i);
	live_account(h, stack_id, bsize, 0);
	h->tot.frees++;
	if (size)
		*size = bsize;
	return 0;
}

void
heap_unknown_free(struct jt_heap *h)
{
	h->tot.unknown_frees++;
}

int
heap_invalid_free(struct jt_heap *h, uint32_t stack_id)
{
	if (stack_id >= h->nstacks)
		return -1;
	stack_at(h, stack_id)->invalid_frees++;
	h->tot.invalid_frees++;
	h->tot.unknown_frees++;
	return 0;
}

int
heap_lookup(const struct jt_heap *h, uint64_t addr, uint64_t *size, uint32_t *stack_id)
{
	uint64_t bsize;
	uint32_t sid;

	if (live_find(h, addr, &bsize, &sid) < 0)
		return -1;
	if (size)
		*size = bsize;
	if (stack_id)
		*stack_id = sid;
	return 0;
}

void
heap_totals(const struct jt_heap *h, struct jt_heap_totals *out)
{
	*out = h->tot;
}

/*
 * The new image starts small, so the table shrinks back to its first size.
 * The old image's invalid frees go too: their stacks cannot be symbolized
 * against the new one (the exec snapshot listed them).
 */
void
heap_clear_live(struct jt_heap *h)
{
	uint32_t id;

	free(h->live.slots);
	free(h->big.slots);
	table_init(&h->live, LIVE_MIN_CAP);
	table_init(&h->big, TABLE_MIN_CAP);
	for (id = 0; id < h->nstacks; id++) {
		stack_at(h, id)->live_bytes = 0;
		stack_at(h, id)->live_blocks = 0;
		stack_at(h, id)->invalid_frees = 0;
	}
	h->tot.live_bytes = 0;
	h->tot.live_blocks = 0;
	h->tot.invalid_frees = 0;
}

/* qsort_r comparator: live bytes, then live blocks, descending; then id. */
static int
live_cmp(const void *a, const void *b, void *arg)
{
	const struct jt_stack *x = stack_at(arg, *(const uint32_t *)a);
	const struct jt_stack *y = stack_at(arg, *(const uint32_t *)b);

	if (x->live_bytes != y->live_bytes)
		return x->live_bytes > y->live_bytes ? -1 : 1;
	if (x->live_blocks != y->live_blocks)
		return x->live_blocks > y->live_blocks ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* qsort_r comparator: invalid frees descending, then id. */
static int
invalid_cmp(const void *a, const void *b, void *arg)
{
	const struct jt_stack *x = stack_at(arg, *(const uint32_t *)a);
	const struct jt_stack *y = stack_at(arg, *(const uint32_t *)b);

	if (x->invalid_frees != y->invalid_frees)
		return x->invalid_frees > y->invalid_frees ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Reports are rare: a scan of the stack table when one is written is enough. */
uint32_t
heap_rank_stacks(const struct jt_heap *h, enum heap_rank by, uint32_t *ids, uint32_t max)
{
	uint32_t *all, id, n = 0;

	if (!max || !h->nstacks)
		return 0;
	all = xmalloc(h->nstacks * sizeof(*all));
	for (id = 0; id < h->nstacks; id++)
		if (by == HEAP_RANK_LIVE ? stack_at(h, id)->live_blocks : stack_at(h, id)->invalid_frees)
			all[n++] = id;
	qsort_r(all, n, sizeof(*all), by == HEAP_RANK_LIVE ? live_cmp : invalid_cmp, (void *)h);
	if (n > max)
		n = max;
	memcpy(ids, all, n * sizeof(*ids));
	free(all);
	return n;
}

/* STUB: the new figures, filled in by the counters work. */
uint32_t
heap_filtered_stack(struct jt_heap *h)
{
	return heap_stack_intern_cut(h, NULL, 0, 0);
}

void
heap_set_clock(struct jt_heap *h, uint64_t (*now_ms)(void *arg), void *arg)
{
	(void)h; (void)now_ms; (void)arg;
}

void
heap_peak(const struct jt_heap *h, struct jt_heap_peak *out)
{
	out->live_bytes = h->tot.peak_live_bytes;
	out->live_blocks = 0;
	out->time_ms = 0;
}

void
heap_sample(struct jt_heap *h, int force)
{
	(void)h; (void)force;
}

const struct jt_heap_sample *
heap_timeline(const struct jt_heap *h, size_t *n)
{
	(void)h;
	*n = 0;
	return NULL;
}
