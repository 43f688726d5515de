/* live.c - the live-block table: 16-byte entries in 256 sorted open-addressing shards that grow an eighth at a time. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "live.h"
#include "table.h"
#include "util.h"

/*
 * Why this shape (issue 33): a server with 50 million live blocks must not
 * need gigabytes beside it. The table it replaces (24-byte slots, doubling
 * at 75% load) held 27 to 54 bytes a block, and 63 at the moment of a
 * doubling, when the old and the new array are both there.
 *
 * The key. An 8-aligned address below 2^48 is k = addr >> 3, 45 bits.
 * x = key_mix(k) is a bijection of the 45-bit numbers: its top 8 bits pick
 * the shard, and the other 37, q, are all an entry keeps of the address
 * (the shard says the rest; live_each inverts the mix to give addresses).
 *
 * An entry is 16 bytes: q and the size in 27 bits (from 128 MiB up the size
 * sits in the side table big), the stack id + 1 (0: an empty slot) and the
 * stamp.
 *
 * A shard is an array sorted by q, with gaps: ordered linear probing. q's
 * home slot is q * nhome >> 37, which never decreases as q grows, and an
 * entry sits at or after its home with no empty slot in between. A lookup
 * stops at the first larger q, so a miss costs as much as a hit even at 90%
 * load (heap_find_inside makes 512 misses). There is no wrap-around: the
 * slots past nhome are room for the last run to spill into.
 *
 * Growth. A shard at 90% grows by an eighth; its entries, already in
 * order, go to the new array in one pass. The load stays between 80 and
 * 90% (17.8 to 20 bytes a block) and the peak is the steady state plus one
 * shard's copy, 1/256 of the table. Arrays of a page or more are mappings
 * of their own, in whole pages, rather than malloc's: its free chunks of
 * every size the shards grew through stayed in the tracer's heap, 3.5 bytes
 * a block more (test_heap_blocks's stress).
 *
 * Addresses that are not 8-aligned or lie above 2^48 (rare: a named
 * allocator's own layout) go to the map odd (addr -> stack id | stamp << 32)
 * with their size in big.
 */
#define KEY_BITS	45
#define KEY_MASK	((1ull << KEY_BITS) - 1)
#define SHARD_BITS	8
#define NSHARDS		(1u << SHARD_BITS)
#define Q_BITS		(KEY_BITS - SHARD_BITS)
#define Q_MASK		((1ull << Q_BITS) - 1)
#define SIZE_ESC	((1ull << (64 - Q_BITS)) - 1)
/* Odd multipliers of the mix (murmur3's finalizer's, cut to 45 bits). */
#define MUL1		(0xff51afd7ed558ccdull & KEY_MASK)
#define MUL2		(0xc4ceb9fe1a85ec53ull & KEY_MASK)
#define MIN_SLOTS	8u
#define MAP_MIN		(4u * 1024)
#define PAGE_BYTES	4096u

struct live_ent {
	uint64_t w0;		/* q | size << Q_BITS */
	uint64_t w1;		/* stack id + 1 | stamp << 32; 0 when the slot is empty */
};

struct live_shard {
	struct live_ent *e;
	uint32_t nslots;	/* e's length */
	uint32_t nhome;		/* homes are in [0, nhome); the rest is spill room */
	uint32_t count;
	int mapped;		/* e is a mapping of its own, not malloc's */
};

struct jt_live {
	struct live_shard sh[NSHARDS];
	uint64_t inv1, inv2;	/* MUL1's and MUL2's inverses mod 2^45, to undo the mix */
	struct jt_table odd;	/* addresses no shard takes: addr -> stack id | stamp << 32 */
	struct jt_table big;	/* addr -> size, for escaped sizes and every odd address */
	size_t mem, mem_peak;	/* bytes of shard arrays held, now and at most */
};

static uint64_t
key_mix(uint64_t k)
{
	k ^= k >> 23;
	k = k * MUL1 & KEY_MASK;
	k ^= k >> 22;
	k = k * MUL2 & KEY_MASK;
	k ^= k >> 23;
	return k;
}

/* Undoes y = x ^ x >> s on KEY_BITS bits: x = y ^ y >> s ^ y >> 2s ... */
static uint64_t
unshift(uint64_t y, unsigned s)
{
	uint64_t x = y;

	for (unsigned t = s; t < KEY_BITS; t += s)
		x ^= y >> t;
	return x;
}

static uint64_t
key_unmix(const struct jt_live *l, uint64_t x)
{
	x = unshift(x, 23);
	x = x * l->inv2 & KEY_MASK;
	x = unshift(x, 22);
	x = x * l->inv1 & KEY_MASK;
	return unshift(x, 23);
}

/* The inverse of odd c mod 2^64 by Newton's iteration: each step doubles the bits that are right (3 at first). */
static uint64_t
mul_inverse(uint64_t c)
{
	uint64_t v = c;

	for (int i = 0; i < 5; i++)
		v *= 2 - c * v;
	return v & KEY_MASK;
}

/* An address a shard can take: sets its mixed key. */
static int
key_of(uint64_t addr, uint64_t *x)
{
	if ((addr & 7) || addr >> 48)
		return 0;
	*x = key_mix(addr >> 3);
	return 1;
}

static size_t
ent_home(uint64_t q, uint32_t nhome)
{
	return (size_t)(((unsigned __int128)q * nhome) >> Q_BITS);
}

static int
ent_used(const struct live_ent *e)
{
	return (uint32_t)e->w1 != 0;
}

static uint64_t
ent_q(const struct live_ent *e)
{
	return e->w0 & Q_MASK;
}

static void
mem_add(struct jt_live *l, size_t bytes)
{
	l->mem += bytes;
	if (l->mem > l->mem_peak)
		l->mem_peak = l->mem;
}

/* A zeroed array of at least *nslots entries; *nslots gets what it holds (whole pages when mapped). */
static struct live_ent *
ents_alloc(struct jt_live *l, uint32_t *nslots, int *mapped)
{
	size_t bytes = (size_t)*nslots * sizeof(struct live_ent);

	*mapped = 0;
	if (bytes >= MAP_MIN) {
		void *p;

		bytes = (bytes + PAGE_BYTES - 1) & ~(size_t)(PAGE_BYTES - 1);
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			*nslots = (uint32_t)(bytes / sizeof(struct live_ent));
			*mapped = 1;
			mem_add(l, bytes);
			return p;
		}
	}
	mem_add(l, bytes);
	return xcalloc(*nslots, sizeof(struct live_ent));
}

static void
ents_free(struct jt_live *l, struct live_ent *e, uint32_t nslots, int mapped)
{
	size_t bytes = (size_t)nslots * sizeof(struct live_ent);

	if (!e)
		return;
	if (mapped)
		munmap(e, bytes);
	else
		free(e);
	l->mem -= bytes;
}

/* The slots of an array of n past its homes: a thirty-second, for the last run. */
static uint32_t
spill_of(uint32_t n)
{
	return n / 32 + 2;
}

/*
 * Moves shard s into an array of n slots, in one pass since its entries
 * are in order. Returns -1 (s unchanged) when the last run would not fit.
 */
static int
shard_rebuild(struct jt_live *l, struct live_shard *s, uint32_t n)
{
	int mapped;
	struct live_ent *e = ents_alloc(l, &n, &mapped);
	uint32_t nhome = n - spill_of(n);
	size_t pos = 0, h;

	for (uint32_t i = 0; i < s->nslots; i++) {
		if (!ent_used(&s->e[i]))
			continue;
		h = ent_home(ent_q(&s->e[i]), nhome);
		if (h < pos)
			h = pos;
		if (h >= n) {
			ents_free(l, e, n, mapped);
			return -1;
		}
		e[h] = s->e[i];
		pos = h + 1;
	}
	ents_free(l, s->e, s->nslots, s->mapped);
	s->e = e;
	s->nslots = n;
	s->nhome = nhome;
	s->mapped = mapped;
	return 0;
}

/* Grows s by an eighth (by MIN_SLOTS at least), more if its last run needs it. */
static void
shard_grow(struct jt_live *l, struct live_shard *s)
{
	uint32_t n = s->nslots + (s->nslots / 8 > MIN_SLOTS ? s->nslots / 8 : MIN_SLOTS);

	while (shard_rebuild(l, s, n) < 0)
		n += n / 8;
}

/* The slot where q is, or where it would go: the first at or past its home with no smaller q. */
static size_t
shard_seek(const struct live_shard *s, uint64_t q)
{
	size_t j = ent_home(q, s->nhome);

	while (j < s->nslots && ent_used(&s->e[j]) && ent_q(&s->e[j]) < q)
		j++;
	return j;
}

static int
shard_has(const struct live_shard *s, size_t j, uint64_t q)
{
	return j < s->nslots && ent_used(&s->e[j]) && ent_q(&s->e[j]) == q;
}

/* The slot of key x's entry in s, its shard (live_get, live_take), or -1 when it has none. */
static ptrdiff_t
shard_find(const struct live_shard *s, uint64_t x)
{
	size_t j = shard_seek(s, x & Q_MASK);

	return shard_has(s, j, x & Q_MASK) ? (ptrdiff_t)j : -1;
}

/* Opens slot j for a new entry by moving the run from j one slot on; -1 when it reaches the end. */
static int
shard_open(struct live_shard *s, size_t j)
{
	size_t k = j;

	while (k < s->nslots && ent_used(&s->e[k]))
		k++;
	if (k == s->nslots)
		return -1;
	memmove(&s->e[j + 1], &s->e[j], (k - j) * sizeof(*s->e));
	return 0;
}

/* Empties slot j, moving back the entries after it that are past their home. */
static void
shard_close(struct live_shard *s, size_t j)
{
	while (j + 1 < s->nslots && ent_used(&s->e[j + 1]) && ent_home(ent_q(&s->e[j + 1]), s->nhome) <= j) {
		s->e[j] = s->e[j + 1];
		j++;
	}
	memset(&s->e[j], 0, sizeof(s->e[j]));
	s->count--;
}

static void
ent_read(const struct jt_live *l, const struct live_ent *e, uint64_t addr, struct jt_block *b)
{
	uint64_t size = e->w0 >> Q_BITS;

	b->size = size == SIZE_ESC ? table_find(&l->big, addr)->val : size;
	b->stack_id = (uint32_t)e->w1 - 1;
	b->stamp = (uint32_t)(e->w1 >> 32);
}

/* Drops the side entry of an escaped size. */
static void
ent_release(struct jt_live *l, const struct live_ent *e, uint64_t addr)
{
	if (e->w0 >> Q_BITS == SIZE_ESC)
		table_remove_at(&l->big, table_probe(&l->big, addr));
}

static void
ent_write(struct jt_live *l, struct live_ent *e, uint64_t q, uint64_t addr, const struct jt_block *b)
{
	uint64_t size = b->size < SIZE_ESC ? b->size : SIZE_ESC;
	int fresh;

	if (size == SIZE_ESC)
		table_claim(&l->big, addr, &fresh)->val = b->size;
	e->w0 = q | size << Q_BITS;
	e->w1 = (uint64_t)(b->stack_id + 1) | (uint64_t)b->stamp << 32;
}

struct jt_live *
live_new(void)
{
	struct jt_live *l = xcalloc(1, sizeof(*l));

	l->inv1 = mul_inverse(MUL1);
	l->inv2 = mul_inverse(MUL2);
	table_init(&l->odd, 16, 0);
	table_init(&l->big, 16, 0);
	return l;
}

void
live_destroy(struct jt_live *l)
{
	if (!l)
		return;
	for (unsigned i = 0; i < NSHARDS; i++)
		ents_free(l, l->sh[i].e, l->sh[i].nslots, l->sh[i].mapped);
	table_free(&l->odd);
	table_free(&l->big);
	free(l);
}

static void
odd_read(const struct jt_live *l, const struct jt_slot *s, struct jt_block *b)
{
	b->size = table_find(&l->big, s->addr)->val;
	b->stack_id = (uint32_t)s->val;
	b->stamp = (uint32_t)(s->val >> 32);
}

static int
odd_set(struct jt_live *l, uint64_t addr, const struct jt_block *b, struct jt_block *old)
{
	int fresh, bfresh;
	struct jt_slot *s = table_claim(&l->odd, addr, &fresh);

	if (!fresh && old)
		odd_read(l, s, old);
	s->val = b->stack_id | (uint64_t)b->stamp << 32;
	table_claim(&l->big, addr, &bfresh)->val = b->size;
	return !fresh;
}

int
live_set(struct jt_live *l, uint64_t addr, const struct jt_block *b, struct jt_block *old)
{
	uint64_t x, q;
	struct live_shard *s;
	size_t j;

	if (!key_of(addr, &x))
		return odd_set(l, addr, b, old);
	s = &l->sh[x >> Q_BITS];
	q = x & Q_MASK;
	j = shard_seek(s, q);
	if (shard_has(s, j, q)) {
		if (old)
			ent_read(l, &s->e[j], addr, old);
		ent_release(l, &s->e[j], addr);
		ent_write(l, &s->e[j], q, addr, b);
		return 1;
	}
	/* 90% full, or no room left after the run: grow, and seek again in the new array. */
	while ((uint64_t)(s->count + 1) * 10 > (uint64_t)s->nslots * 9 || shard_open(s, j) < 0) {
		shard_grow(l, s);
		j = shard_seek(s, q);
	}
	ent_write(l, &s->e[j], q, addr, b);
	s->count++;
	return 0;
}

int
live_get(const struct jt_live *l, uint64_t addr, struct jt_block *b)
{
	const struct live_shard *s;
	ptrdiff_t j;
	uint64_t x;

	if (!key_of(addr, &x)) {
		const struct jt_slot *o = table_find(&l->odd, addr);

		if (!o)
			return -1;
		if (b)
			odd_read(l, o, b);
		return 0;
	}
	s = &l->sh[x >> Q_BITS];
	if ((j = shard_find(s, x)) < 0)
		return -1;
	if (b)
		ent_read(l, &s->e[j], addr, b);
	return 0;
}

void
live_prefetch(const struct jt_live *l, uint64_t addr)
{
	uint64_t x;
	const struct live_shard *s;

	if (!key_of(addr, &x))
		return;
	s = &l->sh[x >> Q_BITS];
	if (s->nslots)
		__builtin_prefetch(&s->e[ent_home(x & Q_MASK, s->nhome)]);
}

static int
odd_take(struct jt_live *l, uint64_t addr, struct jt_block *b)
{
	size_t i = table_probe(&l->odd, addr);

	if (!l->odd.slots[i].addr)
		return -1;
	if (b)
		odd_read(l, &l->odd.slots[i], b);
	table_remove_at(&l->odd, i);
	table_remove_at(&l->big, table_probe(&l->big, addr));
	return 0;
}

int
live_take(struct jt_live *l, uint64_t addr, struct jt_block *b)
{
	struct live_shard *s;
	ptrdiff_t j;
	uint64_t x;

	if (!key_of(addr, &x))
		return odd_take(l, addr, b);
	s = &l->sh[x >> Q_BITS];
	if ((j = shard_find(s, x)) < 0)
		return -1;
	if (b)
		ent_read(l, &s->e[j], addr, b);
	ent_release(l, &s->e[j], addr);
	shard_close(s, (size_t)j);
	return 0;
}

void
live_each(const struct jt_live *l, void (*fn)(void *arg, uint64_t addr, const struct jt_block *b), void *arg)
{
	struct jt_block b;

	for (unsigned i = 0; i < NSHARDS; i++) {
		const struct live_shard *s = &l->sh[i];

		for (uint32_t j = 0; j < s->nslots; j++) {
			uint64_t addr;

			if (!ent_used(&s->e[j]))
				continue;
			addr = key_unmix(l, (uint64_t)i << Q_BITS | ent_q(&s->e[j])) << 3;
			ent_read(l, &s->e[j], addr, &b);
			fn(arg, addr, &b);
		}
	}
	for (size_t i = 0; i < l->odd.cap; i++) {
		if (!l->odd.slots[i].addr)
			continue;
		odd_read(l, &l->odd.slots[i], &b);
		fn(arg, l->odd.slots[i].addr, &b);
	}
}

size_t
live_count(const struct jt_live *l)
{
	size_t n = l->odd.count;

	for (unsigned i = 0; i < NSHARDS; i++)
		n += l->sh[i].count;
	return n;
}

void
live_clear(struct jt_live *l)
{
	for (unsigned i = 0; i < NSHARDS; i++) {
		struct live_shard *s = &l->sh[i];

		ents_free(l, s->e, s->nslots, s->mapped);
		memset(s, 0, sizeof(*s));
	}
	table_free(&l->odd);
	table_free(&l->big);
	table_init(&l->odd, 16, 0);
	table_init(&l->big, 16, 0);
}

size_t
live_mem(const struct jt_live *l, size_t *peak)
{
	size_t side = (l->odd.cap + l->big.cap) * sizeof(struct jt_slot);

	if (peak)
		*peak = l->mem_peak + side;
	return l->mem + side;
}
