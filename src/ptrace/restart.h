/* restart.h - the one place a stopped tracee is restarted: a handler's decision, carried out and logged. */
#ifndef JT_RESTART_H
#define JT_RESTART_H

#include <sys/types.h>

struct jt_tracer;
struct jt_thread;
struct jt_tthread;

/* How a handled stop ends: what restart_thread does with the thread. */
enum restart_op {
	RESTART_NONE,		/* nothing: gone, handed over, let go, or already restarted */
	RESTART_HOLD,		/* leave it stopped (thread_is_stopped) for whole-process work */
	RESTART_CONT,		/* PTRACE_CONT, delivering sig (0: none) */
	RESTART_LISTEN,		/* PTRACE_LISTEN: stay in the group-stop, still reporting events */
	RESTART_STEP,		/* PTRACE_SINGLESTEP (the step loops) */
	RESTART_LATER,		/* PTRACE_CONT after the lock is released (restart_held) */
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
restart_decide(enum restart_op op, pid_t tid, int sig, const char *why)
{
	struct restart r = { op, sig, tid, why };

	return r;
}

/* Non-zero for the signals that cause a group-stop. */
int restart_is_stop_signal(int sig);

/*
 * The one place that restarts a tracee: PTRACE_CONT with sig, PTRACE_LISTEN
 * or PTRACE_SINGLESTEP as op says (RESTART_NONE, RESTART_HOLD and
 * RESTART_LATER do nothing here). With why non-NULL the decision is logged
 * under --verbose; the breakpoint hit's own restart passes NULL, as it is
 * every event. Returns 0, or -1 with errno set; ESRCH (the thread is gone,
 * its exit comes later) is not reported.
 */
int restart_thread(pid_t tid, enum restart_op op, int sig, const char *why);

/* restart_thread with a handler's decision. */
void restart_apply(struct restart r);

/*
 * Does the restart the last breakpoint hit held back until the lock is
 * released: sets the registers and continues the thread. Only its own
 * tracer thread calls it, with or without the lock.
 */
void restart_held(struct jt_tthread *tt);

/* Restarts a stopped thread, delivering the signal held for it, or listening in a group-stop. */
void restart_stopped(struct jt_tracer *tr, struct jt_thread *t);

#endif
