/* stop.c - one stop of one traced thread: classify the wait status, handle the event by its kind, restart the thread. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "arch.h"
#include "call.h"
#include "handover.h"
#include "kops.h"
#include "leakcheck.h"
#include "lifecycle.h"
#include "proc.h"
#include "regs.h"
#include "restart.h"
#include "sigtrap.h"
#include "stop.h"
#include "stopall.h"
#include "uevent.h"
#include "uprobes.h"
#include "util.h"

/* ---- handle ---- */

/*
 * t stopped at a fork, vfork or clone event: handles the new child's first
 * stop at once (lifecycle_wait_child), so that no child is ever traced
 * without being in our tables.
 */
static void
stop_take_child(struct jt_tracer *tr, struct jt_thread *t, unsigned event)
{
	int status;
	pid_t child = lifecycle_wait_child(tr, t, event, &status);

	if (child)
		stop_dispatch(tr, child, status);
}

/*
 * t sits in a SIGTRAP stop at one of our breakpoints, and nobody waits for
 * it to stop: records the event and restarts it (or holds the restart back,
 * or steps it over with its process stopped, or hands it over). A hit met
 * while its process is being stopped is stopall_collect's instead.
 */
static struct restart
stop_breakpoint(struct jt_tracer *tr, struct jt_thread *t, struct jt_stop *st)
{
	struct jt_proc *p = t->proc;
	pid_t tid = t->tid;
	enum call_action action;

	/* Before the registers are held back for the restart: the repair runs code in t. */
	if (p->sigtrap.kind != SIGTRAP_UNKNOWN)
		sigtrap_hit(t);
	action = stop_hit_record(tr, t, st);
	/* _exit under --leak-check: the memory is whole for the last time. */
	if (p->leak_due && leakcheck_at_exit(tr, t) < 0)
		return restart_decide(RESTART_NONE, tid, 0, NULL);
	if (action == CALL_STEP) {
		stop_hit_step_pending(t, st);
		/* t may exit meanwhile (another thread ends the process) and be freed: tid, not t->tid. */
		stopall_step_or_send(tr, t);
		return restart_decide(RESTART_NONE, tid, 0, NULL);
	}
	stop_note_resume(t, &st->regs);
	if (t->owner->resume_tid == 0 && !handover_rebalance_due(tr, t)) {
		/* The common case: set the registers and restart it once the lock is released. */
		t->owner->resume_tid = t->tid;
		t->owner->resume_regs = st->regs;
		return restart_decide(RESTART_LATER, t->tid, 0, NULL);
	}
	if (kops->setregs(t->tid, &st->regs) < 0 && errno != ESRCH)
		perror_msg("thread %d: cannot set its registers", t->tid);
	if (handover_rebalance(tr, t))
		return restart_decide(RESTART_NONE, t->tid, 0, NULL);
	return restart_decide(RESTART_CONT, t->tid, 0, NULL);
}

/* Non-zero when the program catches sig (SigCgt in /proc/TID/status). */
static int
stop_sig_caught(pid_t tid, int sig)
{
	char buf[32];
	unsigned long long mask;

	if (kops->status_field(tid, "SigCgt", buf, sizeof(buf)) < 0)
		return 0;
	mask = strtoull(buf, NULL, 16);
	return sig > 0 && sig <= 64 && (mask >> (sig - 1)) & 1;
}

/*
 * A signal arrives while an allocator call is in flight: its handler's calls
 * are not nested. A thread interrupted between a call's ret and our trap on
 * the trampoline has returned: finish that return first, so that the signal
 * frame records the real return address as the interrupted pc, as it would
 * untraced, and not the allocator's entry, from which the handler's stack
 * cannot be unwound (the slot above is the caller's, not a return address).
 */
static void
stop_note_handler(struct jt_thread *t, int sig)
{
	arch_regs regs;

	if (!stop_sig_caught(t->tid, sig) || kops->getregs(t->tid, &regs) < 0)
		return;
	if (call_settle(t, &regs)) {
		debug_msg("signal %d: thread %d had returned to a trampoline; return finished first", sig, t->tid);
		if (kops->setregs(t->tid, &regs) < 0)
			return;
	}
	call_signal_delivered(t, arch_sp(&regs));
}

/* A signal for the program (its own SIGTRAP too): delivered unchanged. */
static struct restart
stop_signal(struct jt_tracer *tr, struct jt_thread *t, int sig)
{
	int ret, end;

	if (sig == SIGTRAP)
		sigtrap_learn(t);	/* the program's own: its handler is the one to keep */
	if (t->ncalls > 0)
		stop_note_handler(t, sig);
	if (sig == SIGTRAP && (ret = sigtrap_deliver(t, &end)) >= 0) {
		if (ret)
			lifecycle_exited(tr, t->tid, end);
		return restart_decide(RESTART_NONE, 0, 0, NULL);
	}
	return restart_decide(RESTART_CONT, t->tid, sig, "a signal for the program");
}

/* A stop of a thread nobody asked to stop: the decision for each kind. */
static struct restart
stop_handle(struct jt_tracer *tr, struct jt_thread *t, struct jt_stop *st)
{
	switch (st->ev) {
	case STOP_BREAKPOINT:
		return stop_breakpoint(tr, t, st);
	case STOP_SIGNAL:
		return stop_signal(tr, t, st->sig);
	case STOP_GROUP:
		/* Stay stopped the way the program expects, but keep seeing events. */
		return restart_decide(RESTART_LISTEN, t->tid, 0, "group-stop");
	case STOP_INTERRUPT:
		return restart_decide(RESTART_CONT, t->tid, 0,
				   "an interrupt stop we do not wait for (a new thread's first, or one overtaken)");
	case STOP_EXEC:
		return lifecycle_exec(tr, t);
	case STOP_FORK:
	case STOP_VFORK:
	case STOP_CLONE:
		stop_take_child(tr, t, st->event);
		return restart_decide(RESTART_CONT, t->tid, 0, "after a new thread or process");
	case STOP_VFORK_DONE:
	case STOP_OTHER_EVENT:
		return restart_decide(RESTART_CONT, t->tid, 0, "after an event");
	case STOP_HOOK:
		uevent_settle(t);
		call_on_hook(t, st->hook_fn);
		return restart_decide(RESTART_CONT, t->tid, 0, "after a uprobe hook (its SIGTRAP dropped)");
	default:	/* STOP_GONE; the others do not reach here */
		return restart_decide(RESTART_NONE, 0, 0, NULL);
	}
}

/* Handles one wait status; threads that want to stop are collected, others run on. */
void
stop_dispatch(struct jt_tracer *tr, pid_t tid, int status)
{
	struct jt_thread *t;
	struct jt_stop st;

	/* --source uprobe: what the thread did before this stop is applied before the stop is. */
	uprobes_drain(tr->uprobes);
	t = thread_find(tr, tid);
	if (!t && WIFSTOPPED(status)) {
		if (!(t = lifecycle_adopt(tr, tid)))
			return;
		t->born_traced = 1;
	}
	stop_classify(t, status, &st);
	if (st.ev == STOP_EXITED || st.ev == STOP_KILLED) {
		lifecycle_exited(tr, tid, status);
		return;
	}
	if (st.ev == STOP_NONE)
		return;
	t->vforking = 0;
	restart_apply(thread_wants_stop(t) ? stopall_collect(tr, t, &st) : stop_handle(tr, t, &st));
}
