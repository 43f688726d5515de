/* tstate.h - where a traced thread is, as far as the tracer is concerned, and the changes allowed between those places. */
#ifndef JT_TSTATE_H
#define JT_TSTATE_H

#include <sys/types.h>

/*
 * A thread is in one of these at a time. The changes (thread_set_state is
 * the only writer; tstate.c's table holds exactly these edges, and a
 * JT_DEBUG build checks every change against it):
 *   RUNNING -> STOPPING: we PTRACE_INTERRUPT it (attach, a step, a detach, a
 *     recall), or its own stop was met while its process is being stopped
 *     (stopall_take)
 *   RUNNING -> STOPPED: a breakpoint stop being handled is kept, for a step, a
 *     hand-over or an _exit leak check
 *   STOPPING -> STOPPED or GROUP_STOPPED: its stop is collected (stopall_collect),
 *     or it was gone when we asked it to stop
 *   STOPPING -> RUNNING: a vfork parent that counted as stopped is let go
 *     (restart_stopped): the stop it will report is not one we wait for
 *   STOPPED -> STOPPING: a collected stop that must not be held (an event
 *     stop inside a system call, an interrupt with our SIGTRAP queued behind
 *     it) is restarted and asked to stop again
 *   STOPPED, GROUP_STOPPED -> RUNNING: restart_stopped, or the stop being
 *     handled gets it back (a leak check's or a failed hand-over's hold ends)
 *   STOPPED, GROUP_STOPPED -> IN_TRANSIT: handover_send
 *   IN_TRANSIT -> STOPPED or GROUP_STOPPED: handover_receive, by the kind of
 *     stop it was parked from
 */
enum jt_thread_state {
	TS_RUNNING = 0,		/* runs, or sits in a stop being handled now: we wait for nothing */
	TS_STOPPING,		/* we asked it to stop and wait for that stop */
	TS_STOPPED,		/* it sits in a stop we hold: restart with PTRACE_CONT, delivering pending_sig */
	TS_GROUP_STOPPED,	/* it sits in a group-stop we hold: restart with PTRACE_LISTEN */
	TS_IN_TRANSIT,		/* parked, in owner's inbox, traced by nobody */
	TS_NSTATES
};

/* Non-zero when the change from -> to is one of the edges above (staying put is always allowed). */
int tstate_edge_ok(enum jt_thread_state from, enum jt_thread_state to);

/* The state's name without TS_, for messages. */
const char *tstate_name(enum jt_thread_state s);

#ifdef JT_DEBUG
/* Aborts, naming thread tid and both states, when from -> to is not an edge. */
void tstate_check(pid_t tid, enum jt_thread_state from, enum jt_thread_state to);
#else
static inline void
tstate_check(pid_t tid, enum jt_thread_state from, enum jt_thread_state to)
{
	(void)tid, (void)from, (void)to;
}
#endif

#endif
