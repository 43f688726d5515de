/* call.h - what an allocator breakpoint hit means: a call entering, or one returning through its trampoline. */
#ifndef JT_CALL_H
#define JT_CALL_H

#include "arch.h"
#include "mem.h"

struct jt_thread;
struct jt_bp;
struct jt_options;

/*
 * What call matching needs from the traced process, given by its caller:
 * the plain functions below use thread t itself; a unit test gives a fake
 * memory map and a fake unwinder, and needs no process. Nothing else in
 * call.c reaches the target but alias_resolve (alias.c, by thread id, only
 * for aligned_alloc and memalign when the program has alias slots) and
 * image_update at the dynamic linker's rendezvous breakpoint.
 */
struct jt_call_io {
	const struct jt_mem_ops *mem;	/* the target's memory, written at once */
	/*
	 * Unwinds the stopped thread whose registers are regs into pcs[0..max),
	 * innermost first (pcs[0] is its pc); returns the count, or -1.
	 */
	int (*unwind)(void *arg, const arch_regs *regs, uint64_t *pcs, int max);
	/* For the next unwind only: the word at slot reads as ret_addr (a hijacked return). */
	void (*override)(void *arg, uint64_t slot, uint64_t ret_addr);
	void *arg;			/* passed to unwind and override */
};

enum call_action {
	CALL_RESUME,		/* regs are ready: set them and continue */
	CALL_STEP,		/* the displaced instruction cannot be emulated: step over it */
};

/*
 * Handles thread t stopped on bp, with the pc in regs already rewound to the
 * breakpoint address. Records the event, and either redirects a returning
 * call to its real return address or emulates the displaced instruction.
 */
enum call_action call_on_trap(struct jt_thread *t, struct jt_bp *bp, arch_regs *regs,
			      const struct jt_options *opt);
/* call_on_trap with the target reached through io. */
enum call_action call_on_trap_io(struct jt_thread *t, const struct jt_call_io *io, struct jt_bp *bp,
				 arch_regs *regs, const struct jt_options *opt);

/*
 * Thread t, stopped, reached the dynamic linker's rendezvous (FK_RTLD: the
 * link map changed) or a C++ unwinder's entry (FK_UNWIND: every hijacked
 * return address goes back first), by a breakpoint or a uprobe's SIGTRAP.
 */
void call_on_hook(struct jt_thread *t, int fn);
void call_on_hook_io(struct jt_thread *t, const struct jt_call_io *io, int fn);

/*
 * A signal with a handler is being delivered to t at stack pointer sp. If a
 * call is in flight, allocations the handler makes are its own calls, not
 * nested ones: remember where the handler began (one mark for handlers
 * delivered one after another, or one inside another, with no call between).
 */
void call_signal_delivered(struct jt_thread *t, uint64_t sp);

/*
 * Before a detach or a signal's delivery: a thread stopped exactly on a
 * trampoline with its stack pointer just above a call's slot has executed
 * that call's ret but not yet our trap. Without the trap byte it would run
 * the allocator again from its entry, and a handler's stack would be
 * unwound from that entry; so finish the return here: regs then hold the
 * real return address. Returns 1 when regs changed.
 */
int call_settle(struct jt_thread *t, arch_regs *regs);
/* call_settle with the target reached through io. */
int call_settle_io(struct jt_thread *t, const struct jt_call_io *io, arch_regs *regs);

/* Puts every hijacked return address of t back (before a detach or an unwind). */
void call_restore_all(struct jt_thread *t);
/* call_restore_all with the target reached through io. */
void call_restore_all_io(struct jt_thread *t, const struct jt_call_io *io);

#endif
