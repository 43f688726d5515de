/* handover.c - moving a stopped thread from one tracer thread to another: parking it, seizing it, rebalancing, recalling a process. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#include "handover.h"
#include "kops.h"
#include "park.h"
#include "park_pc.h"
#include "proc.h"
#include "regs.h"
#include "restart.h"
#include "sigsafe.h"
#include "tracer.h"
#include "util.h"

/*
 * Where a parked thread waits, with every signal blocked: on a system call
 * instruction calling pause(), which only SIGKILL or our PTRACE_INTERRUPT
 * ends. A thread under seccomp might not be allowed pause(), so it spins on
 * a jump to itself instead, for the moment the hand-over takes. Returns the
 * pc and sets *code, or 0 when the process has no such code.
 */
static uint64_t
handover_park_pc(struct jt_thread *t, enum arch_park_code *code)
{
	struct jt_proc *p = t->proc;

	if (kops_seccomp(t->tid)) {
		*code = ARCH_PARK_SPIN;
		return park_pc_spin(p);
	}
	*code = ARCH_PARK_SYSCALL;
	return park_pc_syscall(p);
}

int
handover_send(struct jt_thread *t, struct jt_tthread *to)
{
	struct jt_tthread *from = t->owner;
	uint64_t all = ~0ull, pc;
	enum arch_park_code code;
	arch_regs park;

	if (kops->getregs(t->tid, &t->park_regs) < 0 ||
	    kops->ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(all), &t->park_mask) < 0 ||
	    !(pc = handover_park_pc(t, &code)))
		return -1;
	park = t->park_regs;
	arch_park_setup(&park, code, pc);
	if (kops->ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(all), &all) < 0)
		return -1;
	/*
	 * A signal held for t goes with the detach. t sits in the
	 * signal-delivery-stop it came in (nothing else holds one), and the
	 * kernel queues a signal injected while blocked again: t gets it once
	 * the new tracer thread gives it its own mask back. Held instead, it
	 * would be lost: the new tracer thread restarts t from an interrupt
	 * stop, where a restart's signal is ignored.
	 */
	if (kops->setregs(t->tid, &park) < 0 ||
	    kops_request(PTRACE_DETACH, t->tid, t->pending_sig) < 0) {
		kops->setregs(t->tid, &t->park_regs);
		kops->ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(all), &t->park_mask);
		return -1;
	}
	debug_msg("thread %d: handed from tracer thread %d to %d", t->tid, from ? from->index : -1, to->index);
	thread_set_owner(t, to);
	thread_set_state(t, TS_IN_TRANSIT);
	t->pending_sig = 0;
	t->inext = to->inbox;
	to->inbox = t;
	tthread_wake(to);
	pthread_cond_broadcast(&to->tr->tthreads.cond);
	return 0;
}

/*
 * Takes t over from its parked state, as tracer thread tt. Returns 0 with
 * t stopped under us, -1 when it is gone, or 1 when the seize waited
 * HANDOVER_SEIZE_MS in vain (t is still parked: try again later).
 */
static int
handover_seize(struct jt_tracer *tr, struct jt_tthread *tt, struct jt_thread *t)
{
	int status, group;

	if (tthread_seize(tt, t->tid, (long)tr->ptrace_options, HANDOVER_SEIZE_MS) < 0) {
		if (errno == EINTR) {
			debug_msg("thread %d: not taken over yet (PTRACE_SEIZE waited %d ms: an exec in its process)",
				  t->tid, HANDOVER_SEIZE_MS);
			return 1;
		}
		if (errno != ESRCH)
			perror_msg("thread %d: cannot take it over (PTRACE_SEIZE)", t->tid);
		return -1;
	}
	kops_request(PTRACE_INTERRUPT, t->tid, 0);
	if (kops_wait_tid(t->tid, &status) < 0 || !WIFSTOPPED(status))
		return -1;	/* killed while parked; nobody else will report it */
	group = (unsigned)status >> 16 == PTRACE_EVENT_STOP && restart_is_stop_signal(WSTOPSIG(status));
	if ((unsigned)status >> 16 == 0 && !t->pending_sig) {
		/* SIGSTOP or SIGKILL-class signal dequeued before our interrupt: deliver it later. */
		t->pending_sig = WSTOPSIG(status);
	}
	if (kops->setregs(t->tid, &t->park_regs) < 0 ||
	    kops->ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(t->park_mask), &t->park_mask) < 0) {
		perror_msg("thread %d: cannot restore it after the hand-over", t->tid);
		return -1;
	}
	thread_set_state(t, group ? TS_GROUP_STOPPED : TS_STOPPED);
	return 0;
}

void
handover_receive(struct jt_tthread *tt)
{
	struct jt_thread *t;
	int r;

	while ((t = tt->inbox)) {
		tt->inbox = t->inext;
		t->inext = NULL;
		if ((r = handover_seize(tt->tr, tt, t)) > 0) {
			/*
			 * Kept for the next look. Meanwhile the exec must go on:
			 * our own threads that it killed are reaped, and the lock
			 * is left to the other tracer threads, which reap theirs.
			 */
			t->inext = tt->inbox;
			tt->inbox = t;
			handover_reap_own(tt->tr, tt);
			handover_wait(tt->tr, HANDOVER_SEIZE_MS);
			return;
		}
		if (r < 0) {
			thread_free(tt->tr, t);
			continue;
		}
		tt->tr->arrived(tt->tr, t);
	}
}

struct jt_tthread *
handover_rebalance_due(struct jt_tracer *tr, struct jt_thread *t)
{
	struct jt_tthread *to;

	if (tr->tthreads.n <= 1 || tr->recall || t->tid == t->proc->pid || t->proc->vfork_child)
		return NULL;
	to = tthread_least_loaded(&tr->tthreads);
	if (to == t->owner || t->owner->nactive < to->nactive + 2)
		return NULL;
	return to;
}

int
handover_rebalance(struct jt_tracer *tr, struct jt_thread *t)
{
	struct jt_tthread *to = handover_rebalance_due(tr, t);

	if (!to)
		return 0;
	thread_set_state(t, TS_STOPPED);
	if (handover_send(t, to) == 0)
		return 1;
	thread_set_state(t, TS_RUNNING);
	return 0;
}

/*
 * A vfork parent waiting in the kernel does not count: it cannot stop until
 * its child execs or exits, and the child may be the very thread we hold
 * stopped; it cannot run either, so it is as good as stopped
 * (stopall_is_stopped says so too). Waiting for it was a deadlock.
 */
int
handover_elsewhere(struct jt_tracer *tr, struct jt_proc *p, struct jt_tthread *self)
{
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		for (struct jt_thread *t = tr->threads[i]; t; t = t->hnext)
			if (t->proc == p && (thread_in_transit(t) || (t->owner != self && !t->vforking)))
				return 1;
	return 0;
}

void
handover_wait(struct jt_tracer *tr, unsigned ms)
{
	/* On the tracer's one clock: a step of the wall clock must not stretch the wait. */
	uint64_t until = util_now_us() + (uint64_t)ms * 1000;
	struct timespec ts = { (time_t)(until / 1000000), (long)(until % 1000000) * 1000 };

	DEBUG_ASSERT(tthread_locked(&tr->tthreads));
	restart_held(tthread_self());
	tthread_wait(&tr->tthreads, &tr->tthreads.cond, &ts);
}

/*
 * The tracer thread that traces tid when it is not tt, which waited for
 * its stop: NULL when it is tt's own. The kernel reports a child's stops to
 * the thread that forked it, __WNOTHREAD or not, when its tracer is of the
 * same thread group: so tracer thread 0 meets the stops of the launched
 * program's main thread after a thread of it handed to another tracer
 * thread exec'd and took the main thread's tid. The exec's own stop comes
 * under a tid still in the tables as tt's (the old main thread): only the
 * kernel's TracerPid tells whose it is.
 */
struct jt_tthread *
handover_tracer_of(struct jt_tracer *tr, struct jt_tthread *tt, pid_t tid, int status)
{
	struct jt_thread *t = thread_find(tr, tid);

	if (!WIFSTOPPED(status) || (status >> 16) != PTRACE_EVENT_EXEC)
		return t && t->owner && t->owner != tt && !thread_in_transit(t) ? t->owner : NULL;
	if (sigsafe_traced_by(tid, tid, tt->ktid))
		return NULL;
	for (int i = 0; i < tr->tthreads.n; i++)
		if (&tr->tthreads.t[i] != tt && tr->tthreads.t[i].ktid > 0 &&
		    sigsafe_traced_by(tid, tid, tr->tthreads.t[i].ktid))
			return &tr->tthreads.t[i];
	return NULL;
}

void
handover_pass_on(struct jt_tthread *tt, struct jt_tthread *to, pid_t tid, int status)
{
	debug_msg("thread %d: a stop of it reported to tracer thread %d, passed on to tracer thread %d", (int)tid,
		  tt->index, to->index);
	tthread_keep_waited(to, tid, status);
	tthread_wake(to);
}

void
handover_reap_own(struct jt_tracer *tr, struct jt_tthread *self)
{
	struct jt_tthread *to;
	int status;
	pid_t tid;

	while ((tid = kops->wait(-1, &status, __WALL | __WNOTHREAD | WNOHANG)) > 0) {
		if ((to = handover_tracer_of(tr, self, tid, status)))
			handover_pass_on(self, to, tid, status);
		else
			tthread_keep_waited(self, tid, status);
	}
}

void
handover_recall(struct jt_tracer *tr, struct jt_proc *p)
{
	struct jt_tthread *self = tthread_self();
	pid_t pid = p->pid;
	int rounds = 0;

	if (tr->tthreads.n <= 1 || !self || self->index != 0)
		return;
	tr->recall = p;
	while (proc_find(tr, pid) == p) {
		handover_receive(self);
		if (!handover_elsewhere(tr, p, self))
			break;
		if (++rounds > 500) {	/* 10 s of 20 ms waits */
			error_msg("process %d: some threads could not be brought back from the other tracer threads", pid);
			break;
		}
		/* Wake them each round: a wake that lands just before a tracer thread blocks is lost. */
		tthread_wake_all(&tr->tthreads);
		handover_wait(tr, 20);
		handover_reap_own(tr, self);
	}
	tr->recall = NULL;
}

void
handover_serve_recall(struct jt_tracer *tr, struct jt_tthread *tt)
{
	if (!tr->recall)
		return;
	restart_held(tt);
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++) {
		struct jt_thread *t = tr->threads[i], *next;

		for (; t; t = next) {
			next = t->hnext;
			if (t->owner != tt || t->proc != tr->recall || thread_in_transit(t))
				continue;
			if (thread_is_stopped(t)) {
				if (handover_send(t, &tr->tthreads.t[0]) < 0)
					debug_msg("thread %d: cannot hand it over for a recall", t->tid);
			} else if (t->state == TS_RUNNING) {
				thread_set_state(t, TS_STOPPING);
				if (kops_request(PTRACE_INTERRUPT, t->tid, 0) < 0 && errno == ESRCH)
					thread_set_state(t, TS_STOPPED);
			}
		}
	}
}
