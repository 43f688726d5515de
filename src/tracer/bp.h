/* bp.h - trap-byte breakpoints on allocator entries, with the displaced instruction decoded for emulation. */
#ifndef JT_BP_H
#define JT_BP_H

#include <stdint.h>
#include <sys/types.h>

#include "emu.h"
#include "table.h"

struct jt_bp {
	uint64_t addr;
	int fn;			/* enum jt_fn */
	int inserted;		/* the trap byte is in target memory */
	int taken;		/* the kernel took it back (bp_check_taken): a stop from before still counts as ours */
	/*
	 * 0 on a function's entry. On a breakpoint moved past the first
	 * instruction (its entry held another tracer's, see image.c): what
	 * that instruction took off the stack pointer, so the entry's stack
	 * pointer, and the return address's slot, is sp + sp_delta here.
	 */
	uint64_t sp_delta;
	uint64_t entry;		/* the function's entry: addr, unless the breakpoint was moved */
	struct jt_insn insn;	/* the instruction the trap byte displaced */
};

/* All breakpoints of one address space, in the order they were inserted, and found by address. */
struct jt_bps {
	struct jt_bp **v;
	size_t n, cap;
	struct jt_table index;	/* addr -> position in v */
	/*
	 * A trap byte being written and not yet in v: the way out of a
	 * dying jmptrace (emerg.c), which may interrupt the insertion, puts
	 * pending_byte back at pending_addr while pending is set.
	 */
	volatile uint64_t pending_addr;
	volatile uint8_t pending_byte;
	volatile int pending;
};

void bp_table_init(struct jt_bps *t);
/* Frees the table; does not touch target memory (see bp_remove_all). */
void bp_table_clear(struct jt_bps *t);

/* Returns the breakpoint at addr, or NULL. */
struct jt_bp *bp_find(const struct jt_bps *t, uint64_t addr);

/* Returns the breakpoint of the function whose entry is entry (at it, or moved past it), or NULL. */
struct jt_bp *bp_find_entry(const struct jt_bps *t, uint64_t entry);

/*
 * Decodes the instruction at addr in pid and writes the trap byte there.
 * An address that already has a breakpoint is left alone (returns 0).
 * Returns 0, or -1 with errno set (the table is then unchanged): EEXIST
 * when addr already holds a trap byte that is not ours.
 */
int bp_insert(struct jt_bps *t, pid_t pid, uint64_t addr, int fn);

/*
 * bp_insert for a breakpoint at addr moved past the first instruction of
 * the function at entry, which lowered the stack pointer by sp_delta.
 */
int bp_insert_moved(struct jt_bps *t, pid_t pid, uint64_t entry, uint64_t addr, int fn, uint64_t sp_delta);

/*
 * Finds the inserted breakpoints whose trap byte pid's memory no longer
 * holds, its original byte back in its place: the kernel took it. While a
 * kernel uprobe is registered on the same instruction for any process (a
 * bpftrace, bcc or perf probe, another jmptrace's --source uprobe), a trap
 * there is the kernel's, and it puts the instruction back in a process it
 * does not probe: that breakpoint never reports again. Marks each one
 * taken and calls taken(arg, bp), which must not change t. Returns how many.
 */
int bp_check_taken(struct jt_bps *t, pid_t pid, void (*taken)(void *arg, struct jt_bp *bp), void *arg);
/* Writes a taken breakpoint's trap byte back (bp_check_taken's callback may). Returns 0 or -1. */
int bp_put_back(struct jt_bp *bp, pid_t pid);
/*
 * Writes bp's original byte back and keeps it in the table, not inserted:
 * a thread stopped at it still finds it (its instruction is emulated from
 * the table). Returns 0 or -1.
 */
int bp_disarm(struct jt_bp *bp, pid_t pid);
/* Puts back the original byte of every breakpoint in pid's memory. Returns 0 or -1. */
int bp_remove_all(const struct jt_bps *t, pid_t pid);

/* Puts the original bytes back into another process that shares nothing with us (a fork child). */
int bp_restore_into(const struct jt_bps *t, pid_t pid);

#endif
