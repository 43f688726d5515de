/* table.h - the open-addressing tables: a map from a non-zero 64-bit key (an address) to a 64-bit value, and an index of a caller's items by content. */
#ifndef JT_TABLE_H
#define JT_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct jt_slot {
	uint64_t addr;
	uint64_t val;
};

/*
 * Maps a non-zero address to a 64-bit value, and, in a stamped table, to a
 * 32-bit stamp too: a parallel array (stamps[i] goes with slots[i]), so that
 * the stamp costs 4 bytes a slot rather than a 24-byte slot's 8.
 */
struct jt_table {
	struct jt_slot *slots;
	uint32_t *stamps;		/* NULL in a table made without them */
	size_t cap, count;		/* cap is a power of two */
};

/* murmur3's finalizer: spreads an address's high bits into the low ones the index takes. */
uint64_t table_mix64(uint64_t x);
/* FNV-1a of p[0..len): the hash of a name or any other string key. */
uint64_t table_hash_bytes(const char *p, size_t len);
/* Makes t empty with cap slots (a power of two), with a stamp per slot when stamped. */
void table_init(struct jt_table *t, size_t cap, int stamped);
/* Frees t's arrays. */
void table_free(struct jt_table *t);
/* Returns the index of the slot holding addr, or of the empty slot where it would go. */
size_t table_probe(const struct jt_table *t, uint64_t addr);
/* Returns the slot of addr, or NULL when absent. */
struct jt_slot *table_find(const struct jt_table *t, uint64_t addr);
/* Returns the slot of addr, claiming an empty one when absent (*fresh = 1); grows at 75% load. */
struct jt_slot *table_claim(struct jt_table *t, uint64_t addr, int *fresh);
/* Empties slot hole, moving later entries back so that no tombstone is left. */
void table_remove_at(struct jt_table *t, size_t hole);

/*
 * An index of the items of a caller's array (ids from 0) by their content,
 * for keys that are no number (a name, a stack): the caller hashes what it
 * looks for, and says whether the item of an id is that. Items are never
 * removed.
 */
struct jt_index_slot {
	uint32_t hash;
	uint32_t id1;			/* id + 1; 0 when the slot is empty */
};

struct jt_index {
	struct jt_index_slot *slots;
	size_t cap, count;		/* cap is a power of two */
};

/* Whether item id is the one that arg describes. */
typedef int (*index_eq_fn)(const void *arg, uint32_t id);

/* Makes x empty with cap slots (a power of two). */
void index_init(struct jt_index *x, size_t cap);
/* Frees x's slots. */
void index_free(struct jt_index *x);
/*
 * Returns the id of the item with hash that eq(arg, id) accepts, or
 * UINT32_MAX when there is none. Inline, so that eq is too: the heap looks
 * up a stack at every allocation.
 */
static inline uint32_t
index_find(const struct jt_index *x, uint32_t hash, index_eq_fn eq, const void *arg)
{
	size_t mask = x->cap - 1;

	for (size_t i = hash & mask; x->slots[i].id1; i = (i + 1) & mask)
		if (x->slots[i].hash == hash && eq(arg, x->slots[i].id1 - 1))
			return x->slots[i].id1 - 1;
	return UINT32_MAX;
}
/* Enters item id, whose content hashes to hash and is not in x yet; grows at 75% load. */
void index_add(struct jt_index *x, uint32_t hash, uint32_t id);

#endif
