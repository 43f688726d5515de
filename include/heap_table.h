/* heap_table.h - the open-addressing map from a non-zero address to a 64-bit value under the heap's tables. */
#ifndef JT_HEAP_TABLE_H
#define JT_HEAP_TABLE_H

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
/* Makes t empty with cap slots (a power of two), with a stamp per slot when stamped. */
void table_init(struct jt_table *t, size_t cap, int stamped);
/* Frees t's arrays. */
void table_free(struct jt_table *t);
/* Returns the index of the slot holding addr, or of the empty slot where it would go. */
size_t table_probe(const struct jt_table *t, uint64_t addr);
/* Returns the slot of addr, claiming an empty one when absent (*fresh = 1); grows at 75% load. */
struct jt_slot *table_claim(struct jt_table *t, uint64_t addr, int *fresh);
/* Empties slot hole, moving later entries back so that no tombstone is left. */
void table_remove_at(struct jt_table *t, size_t hole);

#endif
