/* stopall.c - work that needs a whole process stopped: stopping every thread of it, stepping one over a breakpoint meanwhile, restarting them all. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "arch.h"
#include "bp.h"
#include "call.h"
#include "handover.h"
#include "kops.h"
#include "lifecycle.h"
#include "proc.h"
#include "regs.h"
#include "restart.h"
#include "sigtrap.h"
#include "stop_event.h"
#include "stopall.h"
#include "tracer.h"
#include "tthread.h"
#include "uevent.h"
#include "uprobes.h"
#include "util.h"

static void stopall_step_locked(struct jt_tracer *tr, struct jt_thread *t);
static void stopall_take(struct jt_tracer *tr, struct jt_proc *p, pid_t tid, int status);

/*
 * Non-zero when the SIGTRAP stop tid sits in was sent by the kernel: during
 * our single-step that is the end of the step. The program's own raise()
 * or tgkill() has si_code <= 0. Not TRAP_TRACE alone: on some hosts (seen
 * on a KVM guest, once in some 100,000 steps) a finished step reports
 * TRAP_BRKPT, the debug status register's single-step bit not set.
 */
static int
stopall_is_kernel_trap(pid_t tid)
{
	siginfo_t si;

	return kops->ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0 && si.si_code > 0;
}

/*
 * Steps t over the original instruction at its breakpoint while every other
 * thread of the process is stopped, so none can run through the spot while
 * the trap byte is out. Signals that arrive meanwhile are held for later.
 * The trap byte goes back only once the step is over: put back while the
 * step is still under way, it is what t runs, and t enters the function a
 * second time, hijacking its own trampoline. Returns 0, or -1 when t ended
 * meanwhile (*end then holds the wait status nobody else will see).
 */
static int
stopall_step_one(struct jt_thread *t, int *end)
{
	struct jt_bp *bp = bp_find(&t->proc->vm_owner->bps, t->step_addr);
	uint8_t trap = ARCH_TRAP_BYTE;
	int status, ret = 0, extra[8], nextra = 0;
	arch_regs regs;

	t->step_pending = 0;
	if (!bp || kops->write(t->tid, bp->addr, bp->insn.bytes, 1) < 0)
		return 0;
	debug_msg("stepping thread %d over %#lx", t->tid, (unsigned long)bp->addr);
	for (;;) {
		if (restart_thread(t->tid, RESTART_STEP, 0, NULL) < 0 || kops_wait_tid(t->tid, &status) < 0)
			break;	/* not stopped any more: gone */
		if (!WIFSTOPPED(status)) {
			*end = status;
			ret = -1;
			break;
		}
		if (status >> 16)
			continue;	/* an interrupt or group-stop came first: step again */
		if (WSTOPSIG(status) == SIGTRAP && stopall_is_kernel_trap(t->tid))
			break;
		/* A signal for the program: held, delivered when t is restarted. */
		if (!t->pending_sig)
			t->pending_sig = WSTOPSIG(status);
		else if (t->pending_sig != WSTOPSIG(status) && nextra < (int)ARRAY_SIZE(extra))
			extra[nextra++] = WSTOPSIG(status);
	}
	kops->write(t->tid, bp->addr, &trap, 1);
	if (ret < 0)
		return ret;
	if (kops->getregs(t->tid, &regs) == 0)
		stop_note_resume(t, &regs);
	/* The step's trap resets the program's SIGTRAP handler as our trap byte does. */
	if (t->proc->sigtrap.kind != SIGTRAP_UNKNOWN)
		sigtrap_repair(t);
	/* A second signal is queued again, to arrive once t runs (queued now, it would stop the step again). */
	for (int i = 0; i < nextra; i++)
		kops->tgkill(t->proc->pid, t->tid, extra[i]);
	return 0;
}

/* Steps t over its breakpoint with the others running (the fallback), then restarts it. */
static void
stopall_step_over(struct jt_tracer *tr, struct jt_thread *t)
{
	int end;

	if (stopall_step_one(t, &end) < 0)
		lifecycle_exited(tr, t->tid, end);
	else
		restart_stopped(tr, t);
}

/*
 * t must step over a breakpoint with every other thread of its process
 * stopped. Only tracer thread 0 stops a whole process, so another tracer thread
 * hands t to it.
 */
void
stopall_step_or_send(struct jt_tracer *tr, struct jt_thread *t)
{
	arch_regs regs;

	if (t->owner->index == 0) {
		stopall_step_locked(tr, t);
		return;
	}
	/* Held now (a thread that arrived stopped keeps its kind of stop). */
	if (!thread_is_stopped(t))
		thread_set_state(t, TS_STOPPED);
	if (handover_send(t, &tr->tthreads.t[0]) == 0)
		return;
	if (kops->getregs(t->tid, &regs) < 0 && errno == ESRCH) {
		/*
		 * Out of its stop without us: only a SIGKILL does that (another
		 * thread's exec or exit_group). It runs to its exit, which wait4
		 * reports; there is nothing to step and nothing to say.
		 */
		debug_msg("thread %d: killed before its hand-over", t->tid);
		t->step_pending = 0;
		thread_set_state(t, TS_RUNNING);
		return;
	}
	/* Cannot hand it over: step it with the others running, the old way, rather than stall it. */
	error_msg("thread %d: stepping over a breakpoint without stopping the other threads", t->tid);
	stopall_step_over(tr, t);
}

/*
 * Threads of a process being recalled are held; one that must step over a
 * breakpoint is stepped (by tracer thread 0); any other runs on.
 */
void
stopall_arrived(struct jt_tracer *tr, struct jt_thread *t)
{
	if (tr->recall == t->proc || tr->detaching)
		return;
	if (!t->step_pending) {
		restart_stopped(tr, t);
		return;
	}
	if (t->owner->index == 0 && tr->recall) {
		/* Tracer thread 0 is busy recalling another process: step this one after. */
		t->inext = tr->deferred;
		tr->deferred = t;
		return;
	}
	stopall_step_or_send(tr, t);
}

/* Non-zero when a SIGTRAP is queued for the thread itself (SigPnd in /proc/TID/status). */
static int
stopall_trap_queued(pid_t tid)
{
	char buf[32];

	if (kops->status_field(tid, "SigPnd", buf, sizeof(buf)) < 0)
		return 0;
	return (strtoull(buf, NULL, 16) >> (SIGTRAP - 1)) & 1;
}

/*
 * An _exit hit met while its process is being stopped for other work (a step
 * over a breakpoint, a snapshot's check): the leak check it calls for needs a
 * stop-all of its own, which must not nest inside this one, and the collector
 * would restart t past _exit's first instruction, the check never made. So the
 * hit is put back: t is held with its pc on the trap byte and runs into it
 * again once the collection restarts it, when the main loop handles it. At a
 * detach the byte is gone by then and t runs on into _exit untraced.
 */
static struct restart
stopall_defer_exit(struct jt_thread *t, struct jt_stop *st)
{
	arch_set_pc(&st->regs, st->bp->addr);
	if (kops->setregs(t->tid, &st->regs) < 0 && errno != ESRCH)
		perror_msg("thread %d: cannot set its registers", t->tid);
	t->resume_pc = 0;	/* the next hit here is a trap byte's, not a signal sent at this pc */
	debug_msg("thread %d: _exit hit while its process is being stopped; taken again once it runs", t->tid);
	return restart_decide(RESTART_HOLD, t->tid, 0, NULL);
}

/*
 * A breakpoint hit of t while its process is being stopped: the event is
 * recorded and t held with its registers ready, a step over the breakpoint
 * left pending for stopall_resume. Nothing more: no leak check, no step, no
 * hand-over here.
 */
static struct restart
stopall_collect_hit(struct jt_tracer *tr, struct jt_thread *t, struct jt_stop *st)
{
	/* Before the registers are set: the repair runs code in t. */
	if (t->proc->sigtrap.kind != SIGTRAP_UNKNOWN)
		sigtrap_hit(t);
	if (alloc_fns[st->bp->fn].kind == FK_EXIT)
		return stopall_defer_exit(t, st);
	if (stop_hit_record(tr, t, st) == CALL_STEP) {
		stop_hit_step_pending(t, st);
		return restart_decide(RESTART_HOLD, t->tid, 0, NULL);
	}
	stop_note_resume(t, &st->regs);
	if (kops->setregs(t->tid, &st->regs) < 0 && errno != ESRCH)
		perror_msg("thread %d: cannot set its registers", t->tid);
	return restart_decide(RESTART_HOLD, t->tid, 0, NULL);
}

/* t stopped at a fork, vfork or clone event while being collected: its new child's first stop is taken at once. */
static void
stopall_take_child(struct jt_tracer *tr, struct jt_thread *t, unsigned event)
{
	int status;
	pid_t child = lifecycle_wait_child(tr, t, event, &status);

	if (child)
		stopall_take(tr, t->proc, child, status);
}

struct restart
stopall_collect(struct jt_tracer *tr, struct jt_thread *t, struct jt_stop *st)
{
	/* Held from here on, in its kind of stop; the cases that let it go on say so. */
	thread_set_state(t, st->ev == STOP_GROUP ? TS_GROUP_STOPPED : TS_STOPPED);
	switch (st->ev) {
	case STOP_GROUP:
		return restart_decide(RESTART_HOLD, t->tid, 0, "group-stop, while stopping its process");
	case STOP_INTERRUPT:
		if (!stopall_trap_queued(t->tid))
			return restart_decide(RESTART_HOLD, t->tid, 0, "interrupted, while stopping its process");
		/*
		 * It ran a trap byte just as we interrupted it: the interrupt stop is
		 * reported before the queued SIGTRAP. Let the SIGTRAP come (and be
		 * handled as ours); left queued, it would hit the program after
		 * the detach.
		 */
		thread_set_state(t, TS_STOPPING);
		return restart_decide(RESTART_CONT, t->tid, 0, "a SIGTRAP queued behind our interrupt");
	case STOP_EXEC: {
		pid_t pid = t->proc->pid;

		/* Our breakpoints went with the old image: nothing may be written by its table now. */
		thread_set_state(t, TS_RUNNING);
		restart_apply(lifecycle_exec(tr, t));
		/* It is resumed on the new image (as the leader); stop it again, as below. */
		if ((t = thread_find(tr, pid)))
			stopall_interrupt(tr, t);
		return restart_decide(RESTART_NONE, 0, 0, NULL);
	}
	case STOP_FORK:
	case STOP_VFORK:
	case STOP_CLONE:
	case STOP_VFORK_DONE:
	case STOP_OTHER_EVENT:
		/*
		 * A fork, vfork or clone event stops it inside the system call,
		 * where it must not be held: it could not be parked for a hand-over
		 * (the call's return value overwrites the registers set for that)
		 * and its registers are not the program's. This stop used up our
		 * interrupt: let it finish the call and interrupt it again, so that
		 * it stops on its way back, before any instruction of its own.
		 */
		stopall_take_child(tr, t, st->event);
		thread_set_state(t, TS_RUNNING);
		restart_thread(t->tid, RESTART_CONT, 0, "out of an event stop, to be interrupted again");
		stopall_interrupt(tr, t);
		return restart_decide(RESTART_NONE, 0, 0, NULL);
	case STOP_BREAKPOINT:
		return stopall_collect_hit(tr, t, st);
	case STOP_HOOK:
		uevent_settle(t);
		call_on_hook(t, st->hook_fn);
		return restart_decide(RESTART_HOLD, t->tid, 0, "a uprobe hook, while stopping its process");
	case STOP_GONE:
		return restart_decide(RESTART_NONE, 0, 0, NULL);
	default:	/* STOP_SIGNAL */
		t->pending_sig = st->sig;
		return restart_decide(RESTART_HOLD, t->tid, st->sig, "a signal held while stopping its process");
	}
}

void
stopall_interrupt(struct jt_tracer *tr, struct jt_thread *t)
{
	if (t->state != TS_RUNNING)
		return;	/* stopped, asked already, or in transit: not ours to interrupt */
	thread_set_state(t, TS_STOPPING);
	if (kops_request(PTRACE_INTERRUPT, t->tid, 0) < 0 && errno == ESRCH)
		thread_set_state(t, TS_STOPPED);	/* gone; its exit is reported later */
}

int
stopall_is_stopped(struct jt_tracer *tr, struct jt_proc *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		for (struct jt_thread *t = tr->threads[i]; t; t = t->hnext)
			if (t->proc == p && !thread_is_stopped(t) && !t->vforking)
				return 0;
	return 1;
}

/*
 * One wait status met while stopping p, or the first stop of a child met
 * while collecting one of p's threads. A stop or exit of p's own threads is
 * taken now, narrowly (stopall_collect: nothing of a handler's work); any
 * other is kept for the loop (tthread_keep_waited), never handled inside
 * this work. A new thread is adopted at once, so that no child is ever
 * traced without being in our tables.
 */
static void
stopall_take(struct jt_tracer *tr, struct jt_proc *p, pid_t tid, int status)
{
	struct jt_thread *t = thread_find(tr, tid);
	struct jt_stop st;

	if (!t && WIFSTOPPED(status)) {
		if (!(t = lifecycle_adopt(tr, tid)))
			return;
		t->born_traced = 1;
	}
	if (!t || t->proc != p) {
		tthread_keep_waited(tthread_self(), tid, status);
		return;
	}
	/* --source uprobe: what the thread did before this stop (or its end) is applied first. */
	uprobes_drain(tr->uprobes);
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		lifecycle_exited(tr, tid, status);
		return;
	}
	stop_classify(t, status, &st);
	if (st.ev == STOP_NONE)
		return;
	/* Stopped on its own before our interrupt reached it: as good as interrupted. */
	if (t->state == TS_RUNNING)
		thread_set_state(t, TS_STOPPING);
	t->vforking = 0;
	restart_apply(stopall_collect(tr, t, &st));
}

/* Takes one status kept for the loop that belongs to a thread of p (stopall_take). Returns 1 when it took one. */
static int
stopall_take_kept(struct jt_tracer *tr, struct jt_proc *p)
{
	struct jt_tthread *self = tthread_self();
	struct jt_waited w;

	for (size_t i = 0; i < self->nwaited; i++) {
		struct jt_thread *t = thread_find(tr, self->waited[i].tid);

		if (t && t->proc == p && tthread_take_waited(self, i, &w) == 0) {
			stopall_take(tr, p, w.tid, w.status);
			return 1;
		}
	}
	return 0;
}

int
stopall_wait(struct jt_tracer *tr, struct jt_proc *p)
{
	pid_t pid = p->pid;

	DEBUG_ASSERT(tthread_is_first(&tr->tthreads) && tthread_locked(&tr->tthreads));
	/* The stops collected below are handled with the lock kept: see loop_dispatch. */
	tthread_self()->unwind_unlock = 0;
	restart_held(tthread_self());
	handover_recall(tr, p);
	if (proc_find(tr, pid) != p)
		return -1;

	/* Bounded: a thread that never stops (it should not happen) must not hang the detach. */
	for (int rounds = 0; rounds < 100000; rounds++) {
		int status;
		pid_t tid;

		/* A stop of p met earlier, kept for the loop, is p's to collect now. */
		if (stopall_take_kept(tr, p)) {
			if (proc_find(tr, pid) != p || (tr->main_exited && pid == tr->main_pid))
				return -1;
			continue;
		}
		proc_each_thread(tr, p, NULL, stopall_interrupt);
		if (stopall_is_stopped(tr, p))
			return 0;
		restart_held(tthread_self());
		/* __WNOTHREAD: only our own tracees; the other tracer threads wait for theirs. */
		tid = kops->wait(-1, &status, __WALL | __WNOTHREAD);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		stopall_take(tr, p, tid, status);
		/* The process may have exited meanwhile, and a followed child's tables be freed. */
		if (proc_find(tr, pid) != p || (tr->main_exited && pid == tr->main_pid))
			return -1;
	}
	return -1;
}

static void
stopall_step_if_pending(struct jt_tracer *tr, struct jt_thread *t)
{
	int end;

	if (t->step_pending && thread_is_stopped(t) && stopall_step_one(t, &end) < 0)
		lifecycle_exited(tr, t->tid, end);
}

void
stopall_resume(struct jt_tracer *tr, struct jt_proc *p)
{
	stopall_resume_others(tr, p, NULL);
}

void
stopall_resume_others(struct jt_tracer *tr, struct jt_proc *p, const struct jt_thread *keep)
{
	/* Everyone is stopped here, so pending steps over breakpoints are safe now. */
	proc_each_thread(tr, p, keep, stopall_step_if_pending);
	proc_each_thread(tr, p, keep, restart_stopped);
}

/* Stops the other threads, steps t over its breakpoint, and lets everyone go again. */
static void
stopall_step_locked(struct jt_tracer *tr, struct jt_thread *t)
{
	struct jt_proc *p = t->proc;
	pid_t pid = p->pid;

	if (!thread_is_stopped(t))
		thread_set_state(t, TS_STOPPED);
	/* While we wait, t may exit and be freed, and a followed child's p with it. */
	if ((p->nthreads > 1 || p->vfork_child) && stopall_wait(tr, p) < 0 && proc_find(tr, pid) != p)
		return;
	stopall_resume(tr, p);
}
