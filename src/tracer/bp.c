/* bp.c - inserts and removes the trap bytes jmptrace keeps on allocator entries. */
#include <errno.h>
#include <stdlib.h>

#include "arch.h"
#include "bp.h"
#include "kops.h"
#include "util.h"

void
bp_table_init(struct jt_bps *t)
{
	t->v = NULL;
	t->n = t->cap = 0;
	table_init(&t->index, 64, 0);
}

void
bp_table_clear(struct jt_bps *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
	table_free(&t->index);
}

struct jt_bp *
bp_find(const struct jt_bps *t, uint64_t addr)
{
	const struct jt_slot *s = table_find(&t->index, addr);

	return s ? t->v[s->val] : NULL;
}

struct jt_bp *
bp_find_entry(const struct jt_bps *t, uint64_t entry)
{
	struct jt_bp *bp = bp_find(t, entry);

	/* A moved breakpoint is rare (another tracer's on the entry): a scan finds it. */
	for (size_t i = 0; !bp && i < t->n; i++)
		if (t->v[i]->entry == entry)
			bp = t->v[i];
	return bp;
}

/* Adds bp, at an address not in t yet. */
static void
bp_put(struct jt_bps *t, struct jt_bp *bp)
{
	int fresh;

	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	table_claim(&t->index, bp->addr, &fresh)->val = t->n;
	t->v[t->n++] = bp;
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
	if (kops->read(pid, addr, code, sizeof(code)) < 0)
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
	t->pending_addr = addr;
	t->pending_byte = code[0];
	__atomic_store_n(&t->pending, 1, __ATOMIC_SEQ_CST);
	if (kops->write(pid, addr, &trap, 1) < 0) {
		t->pending = 0;
		free(bp);
		return -1;
	}
	bp->inserted = 1;
	bp_put(t, bp);
	__atomic_store_n(&t->pending, 0, __ATOMIC_SEQ_CST);
	return 0;
}

int
bp_check_taken(struct jt_bps *t, pid_t pid, void (*taken)(void *arg, struct jt_bp *bp), void *arg)
{
	int n = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct jt_bp *bp = t->v[i];
		uint8_t byte;

		/* Unreadable (unmapped, the process gone) or another byte: not the kernel's doing. */
		if (!bp->inserted || bp->taken || kops->read(pid, bp->addr, &byte, 1) < 0 ||
		    byte != bp->insn.bytes[0])
			continue;
		bp->taken = 1;
		taken(arg, bp);
		n++;
	}
	return n;
}

int
bp_put_back(struct jt_bp *bp, pid_t pid)
{
	uint8_t trap = ARCH_TRAP_BYTE;

	if (kops->write(pid, bp->addr, &trap, 1) < 0)
		return -1;
	bp->taken = 0;
	return 0;
}

int
bp_disarm(struct jt_bp *bp, pid_t pid)
{
	if (!bp->inserted)
		return 0;
	if (kops->write(pid, bp->addr, bp->insn.bytes, 1) < 0)
		return -1;
	bp->inserted = 0;
	return 0;
}

/* Writes the original byte back at every inserted breakpoint of t in pid. Returns 0 or -1. */
static int
bp_restore(const struct jt_bps *t, pid_t pid)
{
	int ret = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct jt_bp *bp = t->v[i];
		if (!bp->inserted)
			continue;
		if (kops->write(pid, bp->addr, bp->insn.bytes, 1) < 0)
			ret = -1;
	}
	return ret;
}

int
bp_remove_all(const struct jt_bps *t, pid_t pid)
{
	int ret = bp_restore(t, pid);

	for (size_t i = 0; i < t->n; i++)
		t->v[i]->inserted = 0;
	return ret;
}

int
bp_restore_into(const struct jt_bps *t, pid_t pid)
{
	return bp_restore(t, pid);
}
