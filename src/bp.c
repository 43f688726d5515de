/* bp.c - inserts and removes the trap bytes jmptrace keeps on allocator entries. */
#include <errno.h>
#include <stdlib.h>

#include "arch.h"
#include "bp.h"
#include "mem.h"
#include "util.h"

static uint32_t
bp_hash(uint64_t addr)
{
	addr ^= addr >> 29;
	addr *= 0xbf58476d1ce4e5b9ULL;
	return (uint32_t)(addr ^ (addr >> 32));
}

void
bp_table_init(struct jt_bps *t)
{
	t->mask = 63;
	t->count = 0;
	t->slots = xcalloc(t->mask + 1, sizeof(*t->slots));
}

void
bp_table_clear(struct jt_bps *t)
{
	for (uint32_t i = 0; t->slots && i <= t->mask; i++)
		free(t->slots[i]);
	free(t->slots);
	t->slots = NULL;
	t->count = 0;
}

struct jt_bp *
bp_find(const struct jt_bps *t, uint64_t addr)
{
	for (uint32_t i = bp_hash(addr) & t->mask; t->slots[i]; i = (i + 1) & t->mask)
		if (t->slots[i]->addr == addr)
			return t->slots[i];
	return NULL;
}

struct jt_bp *
bp_find_entry(const struct jt_bps *t, uint64_t entry)
{
	struct jt_bp *bp = bp_find(t, entry);

	/* A moved breakpoint is rare (another tracer's on the entry): a scan finds it. */
	for (uint32_t i = 0; !bp && i <= t->mask; i++)
		if (t->slots[i] && t->slots[i]->entry == entry)
			bp = t->slots[i];
	return bp;
}

static void
bp_put(struct jt_bps *t, struct jt_bp *bp)
{
	uint32_t i = bp_hash(bp->addr) & t->mask;

	while (t->slots[i])
		i = (i + 1) & t->mask;
	t->slots[i] = bp;
	t->count++;
}

static void
bp_grow(struct jt_bps *t)
{
	struct jt_bp **old = t->slots;
	uint32_t oldmask = t->mask;

	t->mask = t->mask * 2 + 1;
	t->slots = xcalloc(t->mask + 1, sizeof(*t->slots));
	t->count = 0;
	for (uint32_t i = 0; i <= oldmask; i++)
		if (old[i])
			bp_put(t, old[i]);
	free(old);
}

int
bp_insert(struct jt_bps *t, pid_t pid, uint64_t addr, int fn)
{
	return bp_insert_moved(t, pid, addr, addr, fn, 0);
}

int
bp_insert_moved(struct jt_bps *t, pid_t pid, uint64_t entry, uint64_t addr, int fn, uint64_t sp_delta)
{
	uint8_t code[16];
	struct jt_bp *bp;
	uint8_t trap = ARCH_TRAP_BYTE;

	if (bp_find(t, addr))
		return 0;
	if (mem_read(pid, addr, code, sizeof(code)) < 0)
		return -1;
	if (code[0] == ARCH_TRAP_BYTE) {
		/* Someone else's breakpoint (or a stale one of ours): we cannot know the real byte. */
		errno = EEXIST;
		return -1;
	}
	bp = xcalloc(1, sizeof(*bp));
	bp->addr = addr;
	bp->fn = fn;
	bp->sp_delta = sp_delta;
	bp->entry = entry;
	if (emu_decode(&bp->insn, addr, code, sizeof(code)) < 0) {
		free(bp);
		errno = EILSEQ;
		return -1;
	}
	if (mem_write(pid, addr, &trap, 1) < 0) {
		free(bp);
		return -1;
	}
	bp->inserted = 1;
	if ((t->count + 1) * 2 > t->mask)
		bp_grow(t);
	bp_put(t, bp);
	return 0;
}

int
bp_check_taken(struct jt_bps *t, pid_t pid, void (*taken)(void *arg, struct jt_bp *bp), void *arg)
{
	int n = 0;

	for (uint32_t i = 0; i <= t->mask; i++) {
		struct jt_bp *bp = t->slots[i];
		uint8_t byte;

		/* Unreadable (unmapped, the process gone) or another byte: not the kernel's doing. */
		if (!bp || !bp->inserted || bp->taken || mem_read(pid, bp->addr, &byte, 1) < 0 ||
		    byte != bp->insn.bytes[0])
			continue;
		bp->taken = 1;
		taken(arg, bp);
		n++;
	}
	return n;
}

/* Writes the original byte back at every inserted breakpoint of t in pid. Returns 0 or -1. */
static int
bp_restore(const struct jt_bps *t, pid_t pid)
{
	int ret = 0;

	for (uint32_t i = 0; i <= t->mask; i++) {
		struct jt_bp *bp = t->slots[i];
		if (!bp || !bp->inserted)
			continue;
		if (mem_write(pid, bp->addr, bp->insn.bytes, 1) < 0)
			ret = -1;
	}
	return ret;
}

int
bp_remove_all(const struct jt_bps *t, pid_t pid)
{
	int ret = bp_restore(t, pid);

	for (uint32_t i = 0; i <= t->mask; i++)
		if (t->slots[i])
			t->slots[i]->inserted = 0;
	return ret;
}

int
bp_restore_into(const struct jt_bps *t, pid_t pid)
{
	return bp_restore(t, pid);
}
