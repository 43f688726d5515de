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
#include "tracer.h"
#include "uevent.h"
#include "uprobes.h"
#include "util.h"

/* ---- handle ---- */

/*
 * Work a handler leaves to be done after it decided, before its restart, in
 * this order (stop_finish): a handler decides, and never calls the modules
 * that stop a whole process, check leaks or hand threads over.
 */
enum {
	STOP_WORK_CHILD = 1,		/* a fork, vfork or clone event: take the new child's first stop */
	STOP_WORK_LEAK_CHECK = 2,	/* _exit under --leak-check: check the process while its memory is whole */
	STOP_WORK_STEP = 4,		/* step it over the breakpoint with its process stopped, or send it to tracer thread 0 */
	STOP_WORK_REBALANCE = 8,	/* hand it to a less busy tracer thread if one is due (else restart it) */
};

/* A handler's decision: the work left, then how the thread goes on. */
struct stop_decision {
	unsigned work;			/* STOP_WORK_* */
	unsigned event;			/* STOP_WORK_CHILD: the ptrace event */
	struct restart restart;
};

static struct stop_decision
stop_decide(unsigned work, struct restart r)
{
	struct stop_decision d = { work, 0, r };
	return d;
}

/*
 * t sits in a SIGTRAP stop at one of our breakpoints, and nobody waits for
 * it to stop: records the event and decides its restart (held back until the
 * lock is released, or at once), or leaves a step over the breakpoint, a
 * leak check or a hand-over to stop_finish. A hit met while its process is
 * being stopped is stopall_collect's instead.
 */
static struct stop_decision
stop_breakpoint(struct jt_tracer *tr, struct jt_thread *t, struct jt_stop *st)
{
	enum call_action action;
	unsigned work;

	/* Before the registers are held back for the restart: the repair runs code in t. */
	if (t->proc->sigtrap.kind != SIGTRAP_UNKNOWN)
		sigtrap_hit(t);
	action = stop_hit_record(tr, t, st);
	/* _exit under --leak-check (the hit just recorded): the memory is whole for the last time. */
	work = t->proc->leak_due ? STOP_WORK_LEAK_CHECK : 0;
	if (action == CALL_STEP) {
		stop_hit_step_pending(t, st);
		return stop_decide(work | STOP_WORK_STEP, restart_decide(RESTART_NONE, t->tid, 0, NULL));
	}
	stop_note_resume(t, &st->regs);
	if (!work && t->owner->resume_tid == 0 && !handover_rebalance_due(tr, t)) {
		/* The common case: set the registers and restart it once the lock is released. */
		t->owner->resume_tid = t->tid;
		t->owner->resume_regs = st->regs;
		return stop_decide(0, restart_decide(RESTART_LATER, t->tid, 0, NULL));
	}
	if (kops->setregs(t->tid, &st->regs) < 0 && errno != ESRCH)
		perror_msg("thread %d: cannot set its registers", t->tid);
	return stop_decide(work | STOP_WORK_REBALANCE, restart_decide(RESTART_CONT, t->tid, 0, NULL));
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
stop_note_handler(struct jt_thread *t, int sig, arch_regs *regs)
{
	if (!stop_sig_caught(t->tid, sig))
		return;
	if (call_settle(t, regs)) {
		debug_msg("signal %d: thread %d had returned to a trampoline; return finished first", sig, t->tid);
		if (kops->setregs(t->tid, regs) < 0)
			return;
	}
	call_signal_delivered(t, arch_sp(regs));
}

/* A signal for the program (its own SIGTRAP too): delivered unchanged. */
static struct restart
stop_signal(struct jt_tracer *tr, struct jt_thread *t, int sig)
{
	arch_regs regs;
	int ret, end;

	if (sig == SIGTRAP)
		sigtrap_learn(t);	/* the program's own: its handler is the one to keep */
	/* The registers at the delivery, read once for both. */
	if ((tr->uprobes || t->ncalls > 0) && kops->getregs(t->tid, &regs) == 0) {
		if (tr->uprobes)
			uevent_signal(t, &regs);
		if (t->ncalls > 0)
			stop_note_handler(t, sig, &regs);
	}
	if (sig == SIGTRAP && (ret = sigtrap_deliver(t, &end)) >= 0) {
		if (ret)
			lifecycle_exited(tr, t->tid, end);
		return restart_decide(RESTART_NONE, 0, 0, NULL);
	}
	return restart_decide(RESTART_CONT, t->tid, sig, "a signal for the program");
}

/* A stop of a thread nobody asked to stop: the decision for each kind. */
static struct stop_decision
stop_handle(struct jt_tracer *tr, struct jt_thread *t, struct jt_stop *st)
{
	switch (st->ev) {
	case STOP_BREAKPOINT:
		return stop_breakpoint(tr, t, st);
	case STOP_SIGNAL:
		return stop_decide(0, stop_signal(tr, t, st->sig));
	case STOP_GROUP:
		/* Stay stopped the way the program expects, but keep seeing events. */
		return stop_decide(0, restart_decide(RESTART_LISTEN, t->tid, 0, "group-stop"));
	case STOP_INTERRUPT:
		return stop_decide(0, restart_decide(RESTART_CONT, t->tid, 0,
				   "an interrupt stop we do not wait for (a new thread's first, or one overtaken)"));
	case STOP_EXEC:
		return stop_decide(0, lifecycle_exec(tr, t));
	case STOP_FORK:
	case STOP_VFORK:
	case STOP_CLONE: {
		struct stop_decision d = stop_decide(STOP_WORK_CHILD,
						     restart_decide(RESTART_CONT, t->tid, 0, "after a new thread or process"));

		d.event = st->event;
		return d;
	}
	case STOP_VFORK_DONE:
	case STOP_OTHER_EVENT:
		return stop_decide(0, restart_decide(RESTART_CONT, t->tid, 0, "after an event"));
	case STOP_HOOK:
		uevent_settle(t);
		call_on_hook(t, st->hook_fn);
		return stop_decide(0, restart_decide(RESTART_CONT, t->tid, 0, "after a uprobe hook (its SIGTRAP dropped)"));
	default:	/* STOP_GONE; the others do not reach here */
		return stop_decide(0, restart_decide(RESTART_NONE, 0, 0, NULL));
	}
}

/* Carries out the work decision d of t's stop left; returns the restart left to apply. */
static struct restart
stop_finish(struct jt_tracer *tr, struct jt_thread *t, struct stop_decision d)
{
	struct restart none = restart_decide(RESTART_NONE, 0, 0, NULL);

	if ((d.work & STOP_WORK_LEAK_CHECK) && leakcheck_at_exit(tr, t) < 0)
		return none;	/* t or its process went meanwhile */
	if (d.work & STOP_WORK_STEP) {
		/* t may exit meanwhile (another thread ends the process) and be freed. */
		stopall_step_or_send(tr, t);
		return none;
	}
	if ((d.work & STOP_WORK_REBALANCE) && handover_rebalance(tr, t))
		return none;
	return d.restart;
}

/*
 * Handles one wait status up to its restart, left in *r. Returns the tid of
 * a new child whose first stop was taken (its wait status then in *status),
 * or 0.
 */
static pid_t
stop_one(struct jt_tracer *tr, pid_t tid, int *status, struct restart *r)
{
	struct jt_thread *t;
	struct jt_stop st;
	struct stop_decision d;

	*r = restart_decide(RESTART_NONE, 0, 0, NULL);
	/* --source uprobe: what the thread did before this stop is applied before the stop is. */
	uprobes_drain(tr->uprobes);
	t = thread_find(tr, tid);
	if (!t && WIFSTOPPED(*status)) {
		if (!(t = lifecycle_adopt(tr, tid)))
			return 0;
		t->born_traced = 1;
	}
	stop_classify(t, *status, &st);
	if (st.ev == STOP_EXITED || st.ev == STOP_KILLED) {
		lifecycle_exited(tr, tid, *status);
		return 0;
	}
	if (st.ev == STOP_NONE)
		return 0;
	t->vforking = 0;
	if (thread_wants_stop(t)) {
		*r = stopall_collect(tr, t, &st);
		return 0;
	}
	d = stop_handle(tr, t, &st);
	if (d.work & STOP_WORK_CHILD) {
		*r = d.restart;
		return lifecycle_wait_child(tr, t, d.event, status);
	}
	*r = stop_finish(tr, t, d);
	return 0;
}

/*
 * Handles one wait status; threads that want to stop are collected, others
 * run on. A fork's, vfork's or clone's new child has its first stop taken
 * and handled before the parent goes on, so that no child is ever traced
 * without being in our tables: one after the other, not one inside the other.
 */
void
stop_dispatch(struct jt_tracer *tr, pid_t tid, int status)
{
	struct restart parent, child;
	pid_t ctid;

	DEBUG_ASSERT(tthread_locked(&tr->tthreads));
	ctid = stop_one(tr, tid, &status, &parent);
	if (ctid) {
		stop_one(tr, ctid, &status, &child);	/* a first stop: never a fork event itself */
		restart_apply(child);
	}
	restart_apply(parent);
}
