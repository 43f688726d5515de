/* stop_event.h - what one wait status of a traced thread means (classification), and the record of a breakpoint hit that every handler of it makes. */
#ifndef JT_STOP_EVENT_H
#define JT_STOP_EVENT_H

#include <sys/types.h>

#include "arch.h"
#include "call.h"

struct jt_tracer;
struct jt_thread;
struct jt_bp;

/* What a wait status means for the thread it reports on (stop_classify). */
enum stop_event {
	STOP_NONE,		/* nothing to act on (a "continued" report) */
	STOP_EXITED,		/* it exited */
	STOP_KILLED,		/* a signal killed it */
	STOP_BREAKPOINT,	/* a SIGTRAP from one of our trap bytes */
	STOP_SIGNAL,		/* signal-delivery-stop: a signal for the program (its own SIGTRAP too) */
	STOP_GONE,		/* it vanished while we looked at it: its exit is reported later */
	STOP_GROUP,		/* group-stop (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU) */
	STOP_INTERRUPT,		/* our PTRACE_INTERRUPT, or the first stop after a seize */
	STOP_FORK,		/* PTRACE_EVENT_FORK, inside the system call */
	STOP_VFORK,
	STOP_CLONE,
	STOP_VFORK_DONE,
	STOP_EXEC,
	STOP_OTHER_EVENT,	/* another PTRACE_EVENT_*: run on */
	STOP_HOOK,		/* --source uprobe: a hook's SIGTRAP (uprobes_hook_of), ours to drop */
};

/* One classified stop. */
struct jt_stop {
	enum stop_event ev;
	int sig;		/* the stop signal of a stop (WSTOPSIG) */
	unsigned event;		/* the PTRACE_EVENT_* of an event stop, or 0 */
	int status;		/* the raw wait status */
	struct jt_bp *bp;	/* STOP_BREAKPOINT: whose trap byte it ran */
	int hook_fn;		/* STOP_HOOK: the function it reached */
	arch_regs regs;		/* STOP_BREAKPOINT: its registers, pc still past the trap */
};

/* Classifies status, a stop of t (NULL when t exited or is unknown): see enum stop_event. */
void stop_classify(struct jt_thread *t, int status, struct jt_stop *st);

/* Notes where t goes on after our breakpoint: see stop_trap_sent in stop_event.c. */
void stop_note_resume(struct jt_thread *t, const arch_regs *regs);

/*
 * t sits in a SIGTRAP stop at breakpoint st->bp: counts the hit, moves the
 * pc in st->regs back onto the breakpoint and records the allocator event
 * (call_on_trap). Nothing is restarted and no register written. Returns
 * what the call still needs: CALL_STEP when the displaced instruction must
 * be stepped (stop_hit_step_pending).
 */
enum call_action stop_hit_record(struct jt_tracer *tr, struct jt_thread *t, struct jt_stop *st);

/* After stop_hit_record said CALL_STEP: sets t's registers and marks it to step over the breakpoint. */
void stop_hit_step_pending(struct jt_thread *t, struct jt_stop *st);

#endif
