/* leak_mark_int.h - the mark phase's context, shared by leak_mark.c and the heuristics in leak_heur.c (not for other modules). */
#ifndef JT_LEAK_MARK_INT_H
#define JT_LEAK_MARK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "leak.h"

#define LK_BUF		(1u << 20)	/* root memory is read in chunks this big */
#define LK_PAGE		4096u
#define LK_WIN_SHIFT	16		/* block memory is read in aligned 64 KiB windows ... */
#define LK_WIN		(1u << LK_WIN_SHIFT)
#define LK_NWIN		256		/* ... kept in a direct-mapped cache of 16 MiB */
#define LK_WIN_ALL	0xffffu		/* its 16 pages */
#define LK_VT_WORDS	21		/* memcheck looks at a vtable's words ptr .. ptr + 20 words */
#define LK_MAX_BUCKETS	(1u << 22)

/* lk_ctx.hstate bits: a block's first words read (or not readable), its first word a vtable pointer. */
#define LK_HEAD_READ	1
#define LK_HEAD_BAD	2
#define LK_VT_KNOWN	4
#define LK_VT_YES	8

/* memcheck's states map onto the kinds: Unreached is DEFINITE, IndirectLeak INDIRECT. */
#define LK_UNREACHED	LEAK_DEFINITE

/* One classification: the index over the blocks, the mark stack and the read buffers. */
struct lk_ctx {
	struct leak_block *b;
	size_t n;
	const struct leak_input *in;
	struct leak_stats *st;
	uint64_t *start;	/* b[i].addr, compact for the search */
	uint64_t lo, span;	/* [lo, lo + span): every block, a 0-size one counting as 1 byte */
	uint32_t *bucket;	/* bucket[k]: first block whose (addr - lo) >> shift is >= k */
	size_t nbuckets;
	unsigned shift;
	uint32_t *stack;	/* the mark stack: pending blocks, each at most once */
	size_t top;
	uint8_t *buf;		/* the memory being scanned */
	uint8_t *win;		/* LK_NWIN windows of block memory */
	uint64_t wtag[LK_NWIN];	/* window number + 1, 0 for none */
	uint16_t wpages[LK_NWIN];	/* the pages of that window that could be read */
	uint64_t *head;		/* with heuristics: each block's first two words, ... */
	uint8_t *hstate;	/* ... once LK_HEAD_READ */
};

/* Reads len bytes at a from a cached window, else alone: 0 or -1. */
int lk_peek(struct lk_ctx *c, uint64_t a, void *dst, size_t len);
/* The word at a, which must lie within block b (else memcheck finds it unaddressable): 0 or -1. */
int lk_word(struct lk_ctx *c, const struct leak_block *b, uint64_t a, uint64_t *w);
/* memcheck's heuristic_reachedness for an interior pointer v into block i: a heuristic's bit number + 1, or 0. */
unsigned lk_heuristic(struct lk_ctx *c, uint64_t v, size_t i);

#endif
