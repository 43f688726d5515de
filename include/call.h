/* call.h - what an allocator breakpoint hit means: a call entering, or one returning through its trampoline. */
#ifndef JT_CALL_H
#define JT_CALL_H

#include "arch.h"

struct jt_thread;
struct jt_bp;
struct jt_options;

enum call_action {
	CALL_RESUME,		/* regs are ready: set them and continue */
	CALL_STEP,		/* the displaced instruction cannot be emulated: step over it */
};

/*
 * Handles thread t stopped on bp, with regs->rip already rewound to the
 * breakpoint address. Records the event, and either redirects a returning
 * call to its real return address or emulates the displaced instruction.
 */
enum call_action call_on_trap(struct jt_thread *t, struct jt_bp *bp, arch_regs *regs,
			      const struct jt_options *opt);

/* The fn of a jt_call that marks a signal handler entered while calls were in flight. */
#define CALL_SIGNAL (-1)

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

/* Puts every hijacked return address of t back (before a detach or an unwind). */
void call_restore_all(struct jt_thread *t);

#endif
