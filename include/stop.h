/* stop.h - one stop of one traced thread, as a pipeline: classify the wait status, handle the event, restart the thread. */
#ifndef JT_STOP_H
#define JT_STOP_H

#include <sys/types.h>

#include "arch.h"
#include "restart.h"

struct jt_tracer;
struct jt_thread;
struct jt_tthread;
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

/* Handles one wait status of one of the calling tracer thread's tracees (tr->tthreads.lock held). */
void stop_dispatch(struct jt_tracer *tr, pid_t tid, int status);

/*
 * t sits in a SIGTRAP stop at one of our breakpoints. Records the event;
 * unless collecting, restarts it (or holds the restart back, or steps it,
 * or hands it over); collecting, it is left stopped with its registers
 * ready. Returns the decision left to apply.
 */
struct restart stop_breakpoint(struct jt_tracer *tr, struct jt_thread *t, struct jt_stop *st, int collecting);

/*
 * t stopped at a fork, vfork or clone event: handles the new child's first
 * stop at once (lifecycle_wait_child).
 */
void stop_take_child(struct jt_tracer *tr, struct jt_thread *t, unsigned event);

/* Notes where t goes on after our breakpoint: see stop_trap_sent in stop.c. */
void stop_note_resume(struct jt_thread *t, const arch_regs *regs);

/* Classifies status, a stop of t (NULL when t exited or is unknown): see enum stop_event. */
void stop_classify(struct jt_thread *t, int status, struct jt_stop *st);

#endif
