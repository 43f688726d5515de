/* stop.h - one stop of one traced thread, as a pipeline: classify the wait status, handle the event, restart the thread. */
#ifndef JT_STOP_H
#define JT_STOP_H

#include <sys/types.h>

#include "arch.h"

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
};

/* One classified stop. */
struct jt_stop {
	enum stop_event ev;
	int sig;		/* the stop signal of a stop (WSTOPSIG) */
	unsigned event;		/* the PTRACE_EVENT_* of an event stop, or 0 */
	int status;		/* the raw wait status */
	struct jt_bp *bp;	/* STOP_BREAKPOINT: whose trap byte it ran */
	arch_regs regs;		/* STOP_BREAKPOINT: its registers, pc still past the trap */
};

/* How a handled stop ends: what stop_restart does with the thread. */
enum restart_op {
	RESTART_NONE,		/* nothing: gone, handed over, let go, or already restarted */
	RESTART_HOLD,		/* leave it stopped (thread_is_stopped) for whole-process work */
	RESTART_CONT,		/* PTRACE_CONT, delivering sig (0: none) */
	RESTART_LISTEN,		/* PTRACE_LISTEN: stay in the group-stop, still reporting events */
	RESTART_STEP,		/* PTRACE_SINGLESTEP (the step loops) */
	RESTART_LATER,		/* PTRACE_CONT after the lock is released (stop_restart_held) */
};

/* A handler's decision. why says it under --verbose. */
struct restart {
	enum restart_op op;
	int sig;
	pid_t tid;
	const char *why;
};

/* A decision, for a handler's return statement. */
static inline struct restart
stop_decide(enum restart_op op, pid_t tid, int sig, const char *why)
{
	struct restart r = { op, sig, tid, why };

	return r;
}

/* Non-zero for the signals that cause a group-stop. */
int stop_is_stop_signal(int sig);

/* Handles one wait status of one of the calling tracer thread's tracees (tr->tthreads.lock held). */
void stop_dispatch(struct jt_tracer *tr, pid_t tid, int status);

/*
 * The one place that restarts a tracee: PTRACE_CONT with sig, PTRACE_LISTEN
 * or PTRACE_SINGLESTEP as op says (RESTART_NONE, RESTART_HOLD and
 * RESTART_LATER do nothing here). With why non-NULL the decision is logged
 * under --verbose; the breakpoint hit's own restart passes NULL, as it is
 * every event. Returns 0, or -1 with errno set; ESRCH (the thread is gone,
 * its exit comes later) is not reported.
 */
int stop_restart(pid_t tid, enum restart_op op, int sig, const char *why);

/* stop_restart with a handler's decision. */
void stop_apply(struct restart r);

/*
 * Does the restart the last breakpoint hit held back until the lock is
 * released: sets the registers and continues the thread. Only its own
 * tracer thread calls it, with or without the lock.
 */
void stop_restart_held(struct jt_tthread *tt);

/* Restarts a stopped thread, delivering the signal held for it, or listening in a group-stop. */
void stop_restart_stopped(struct jt_tracer *tr, struct jt_thread *t);

/*
 * t sits in a SIGTRAP stop at one of our breakpoints. Records the event;
 * unless collecting, restarts it (or holds the restart back, or steps it,
 * or hands it over); collecting, it is left stopped with its registers
 * ready. Returns the decision left to apply.
 */
struct restart stop_breakpoint(struct jt_tracer *tr, struct jt_thread *t, struct jt_stop *st, int collecting);

/* Notes where t goes on after our breakpoint: see stop_trap_sent in stop.c. */
void stop_note_resume(struct jt_thread *t, const arch_regs *regs);

/* Classifies status, a stop of t (NULL when t exited or is unknown): see enum stop_event. */
void stop_classify(struct jt_thread *t, int status, struct jt_stop *st);

#endif
