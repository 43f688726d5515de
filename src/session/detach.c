/* detach.c - lets every traced process go as it was: no trap byte, no replaced return address, no thread traced. */
#include <errno.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "call.h"
#include "detach.h"
#include "handover.h"
#include "kops.h"
#include "lifecycle.h"
#include "proc.h"
#include "regs.h"
#include "restart.h"
#include "stopall.h"
#include "tracer.h"
#include "tthread.h"
#include "uprobes.h"
#include "util.h"

#define DETACH_PASSES 1000	/* stop passes over the processes before giving up */
#define DETACH_VFORK_MS 2000	/* how long a vfork parent may keep us waiting */

/* Calls fn on every thread we trace; fn may free the thread. */
static void
detach_each_thread(struct jt_tracer *tr, void (*fn)(struct jt_tracer *, struct jt_thread *))
{
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++) {
		struct jt_thread *t = tr->threads[i], *next;

		for (; t; t = next) {
			next = t->hnext;
			fn(tr, t);
		}
	}
}

/* Non-zero once p exited: its threads left in our tables are on their way out. */
static int
detach_gone(const struct jt_tracer *tr, const struct jt_proc *p)
{
	return p->exited || (p->pid == tr->main_pid && tr->main_exited);
}

/*
 * Brings every thread of every process to tracer thread 0, stopped. While
 * one process is being stopped, another may gain a child (a fork event
 * collected) or a thread; start over until one pass finds them all stopped.
 */
static void
detach_stop_all(struct jt_tracer *tr)
{
	struct jt_tthread *self = tthread_self();

	for (int pass = 0; pass < DETACH_PASSES; pass++) {
		struct jt_proc *p;

		for (p = tr->procs; p; p = p->next)
			if (!detach_gone(tr, p) && p->nthreads > 0 &&
			    (!stopall_is_stopped(tr, p) || handover_elsewhere(tr, p, self)))
				break;
		if (!p)
			return;
		stopall_wait(tr, p);
	}
	error_msg("some threads could not be stopped for the detach");
}

/* Puts back the return addresses of t's allocator calls in flight. */
static void
detach_unhijack(struct jt_tracer *tr, struct jt_thread *t)
{
	arch_regs regs;

	(void)tr;
	if (t->ncalls > 0 && kops->getregs(t->tid, &regs) == 0 && call_settle(t, &regs))
		kops->setregs(t->tid, &regs);
	call_restore_all(t);
	/* Once the trap bytes are out it simply runs the original instruction. */
	t->step_pending = 0;
}

/* Puts back the original bytes under every breakpoint, in each address space once. */
static void
detach_remove_breakpoints(struct jt_tracer *tr)
{
	for (struct jt_proc *p = tr->procs; p; p = p->next)
		if (p->vm_owner == p && bp_remove_all(&p->bps, p->pid) < 0 && p->nthreads > 0 && !detach_gone(tr, p))
			perror_msg("process %d: cannot remove every breakpoint", p->pid);
}

static void
detach_let_go(struct jt_tracer *tr, struct jt_thread *t)
{
	lifecycle_unpin(t);
	if (kops_request(PTRACE_DETACH, t->tid, t->pending_sig) < 0) {
		if (errno == ESRCH && t->vforking)
			return;	/* not in a stop yet: see detach_vfork_parents */
		if (errno != ESRCH)
			perror_msg("ptrace(PTRACE_DETACH, %d)", t->tid);
	}
	thread_free(tr, t);
}

/*
 * One vfork parent left: it waits in the kernel, where it cannot be
 * detached, until its child (let go by now) execs or exits; then it stops
 * for the interrupt we sent it. Returns 1 when it was let go (or is gone).
 */
static int
detach_vfork_parent(struct jt_tracer *tr, struct jt_thread *t, int last)
{
	int status;
	pid_t r = kops->wait(t->tid, &status, WNOHANG | __WALL | __WNOTHREAD);

	if (r == 0 && !last)
		return 0;
	if (r == t->tid && WIFSTOPPED(status)) {
		/* A signal-delivery stop carries a signal for the program: deliver it. */
		int sig = ((unsigned)status >> 16) == 0 ? WSTOPSIG(status) : 0;

		lifecycle_unpin(t);
		if (kops_request(PTRACE_DETACH, t->tid, sig) < 0 && errno != ESRCH)
			perror_msg("ptrace(PTRACE_DETACH, %d)", t->tid);
		debug_msg("thread %d: let go once its vfork child was gone", t->tid);
	} else if (r == 0) {
		/* Nothing of ours is left in its memory; the kernel lets it go when we exit. */
		debug_msg("thread %d: its vfork child runs on; left to be detached at our exit", t->tid);
	}
	thread_free(tr, t);
	return 1;
}

/* Lets go the vfork parents detach_let_go could not, waiting a while for each. */
static void
detach_vfork_parents(struct jt_tracer *tr)
{
	for (int ms = 0;; ms++) {
		int left = 0;

		for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++) {
			struct jt_thread *t = tr->threads[i], *next;

			for (; t; t = next) {
				next = t->hnext;
				left += !detach_vfork_parent(tr, t, ms >= DETACH_VFORK_MS);
			}
		}
		if (!left)
			return;
		usleep(1000);
	}
}

void
detach_all(struct jt_tracer *tr)
{
	struct jt_proc *p, *next;

	DEBUG_ASSERT(tthread_is_first(&tr->tthreads) && tthread_locked(&tr->tthreads));
	tr->detaching = 1;
	restart_held(tthread_self());
	detach_stop_all(tr);
	/* --source uprobe: every event made so far counts, then the kernel takes its probes out. */
	uprobes_detach(tr->uprobes);
	detach_each_thread(tr, detach_unhijack);
	detach_remove_breakpoints(tr);
	detach_each_thread(tr, detach_let_go);
	detach_vfork_parents(tr);
	for (p = tr->procs; p; p = next) {
		next = p->next;
		if (p->pid != tr->main_pid)
			proc_free(tr, p);
	}
	/* What was kept for the loop is of threads let go now. */
	tthread_clear_waited(tthread_self());
	tr->detaching = 0;
	tr->detached = 1;
}
