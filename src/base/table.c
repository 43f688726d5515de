/* table.c - the open-addressing tables: a map from a non-zero 64-bit key (an address) to a 64-bit value, and an index of a caller's items by content. */
#include <stdlib.h>

#include "table.h"
#include "util.h"

/*
 * murmur3's finalizer. Addresses are 16-byte aligned and the index takes
 * the low bits, so the high bits must reach them.
 */
uint64_t
table_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint64_t
table_hash_bytes(const char *p, size_t len)
{
	uint64_t h = 14695981039346656037ULL;

	while (len--)
		h = (h ^ (unsigned char)*p++) * 1099511628211ULL;
	return h;
}

void
table_init(struct jt_table *t, size_t cap, int stamped)
{
	t->slots = xcalloc(cap, sizeof(*t->slots));
	t->stamps = stamped ? xcalloc(cap, sizeof(*t->stamps)) : NULL;
	t->cap = cap;
	t->count = 0;
}

void
table_free(struct jt_table *t)
{
	free(t->slots);
	free(t->stamps);
	t->slots = NULL;
	t->stamps = NULL;
}

static size_t
table_home(const struct jt_table *t, uint64_t addr)
{
	return table_mix64(addr) & (t->cap - 1);
}

size_t
table_probe(const struct jt_table *t, uint64_t addr)
{
	size_t i = table_home(t, addr);

	while (t->slots[i].addr && t->slots[i].addr != addr)
		i = (i + 1) & (t->cap - 1);
	return i;
}

struct jt_slot *
table_find(const struct jt_table *t, uint64_t addr)
{
	struct jt_slot *s = &t->slots[table_probe(t, addr)];

	return s->addr ? s : NULL;
}

static void
table_grow(struct jt_table *t)
{
	struct jt_slot *old = t->slots;
	uint32_t *old_stamps = t->stamps;
	size_t old_cap = t->cap, count = t->count, i, j;

	table_init(t, 2 * old_cap, old_stamps != NULL);
	for (i = 0; i < old_cap; i++) {
		if (!old[i].addr)
			continue;
		j = table_probe(t, old[i].addr);
		t->slots[j] = old[i];
		if (old_stamps)
			t->stamps[j] = old_stamps[i];
	}
	t->count = count;
	free(old);
	free(old_stamps);
}

struct jt_slot *
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
void
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
			if (t->stamps)
				t->stamps[hole] = t->stamps[j];
			hole = j;
		}
	}
	t->slots[hole].addr = 0;
	t->slots[hole].val = 0;
	t->count--;
}


void
index_init(struct jt_index *x, size_t cap)
{
	x->slots = xcalloc(cap, sizeof(*x->slots));
	x->cap = cap;
	x->count = 0;
}

void
index_free(struct jt_index *x)
{
	free(x->slots);
	x->slots = NULL;
}

/* Puts s in the first empty slot from its hash on. */
static void
index_put(struct jt_index *x, struct jt_index_slot s)
{
	size_t mask = x->cap - 1, i;

	for (i = s.hash & mask; x->slots[i].id1; i = (i + 1) & mask)
		;
	x->slots[i] = s;
}

void
index_add(struct jt_index *x, uint32_t hash, uint32_t id)
{
	if (4 * (x->count + 1) > 3 * x->cap) {
		struct jt_index_slot *old = x->slots;
		size_t old_cap = x->cap, count = x->count;

		index_init(x, 2 * old_cap);
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].id1)
				index_put(x, old[i]);
		x->count = count;
		free(old);
	}
	index_put(x, (struct jt_index_slot){ hash, id + 1 });
	x->count++;
}
