/* pages.h - the program's own anonymous mappings and brk growth (--pages), as regions in a heap table of their own. */
#ifndef JT_PAGES_H
#define JT_PAGES_H

#include <stdint.h>

struct jt_heap;

/*
 * The page table is a struct jt_heap whose blocks are regions: one per
 * mapping (or sbrk growth) the program made, keyed by its start, with the
 * stack that made it. Its stacks, live figures, peak and timeline are the
 * heap's, so every writer reads them as it reads the heap. Regions never
 * overlap: whatever a new mapping covers is taken out of older ones first.
 */

/* Returns an empty page table whose clock is heap's (its timeline lines up with heap's); never NULL. */
struct jt_heap *pages_new(const struct jt_heap *heap);

/* Lengths as the kernel takes them: rounded up to whole pages. */
uint64_t pages_round(uint64_t len);

/* [addr, addr + len) was mapped, made from stack stack_id: it replaces any region there (MAP_FIXED). */
void pages_map(struct jt_heap *pg, uint64_t addr, uint64_t len, uint32_t stack_id);

/* [addr, addr + len) was unmapped, or mapped over by something not counted: regions lose those bytes. */
void pages_unmap(struct jt_heap *pg, uint64_t addr, uint64_t len);

/*
 * mremap moved [old, old + old_len) to [addr, addr + len): the regions'
 * pages there move with their stacks (keep_old: MREMAP_DONTUNMAP, they stay
 * too), cut at len; growth past old_len is a region of stack_id. Nothing
 * happens when no region lay in the old range (the mapping was not counted).
 */
void pages_remap(struct jt_heap *pg, uint64_t old, uint64_t old_len, uint64_t addr, uint64_t len,
		 uint32_t stack_id, int keep_old);

#endif
