/* stop.c - one stop of one traced thread: classify the wait status, handle the event by its kind, restart the thread. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "arch.h"
#include "call.h"
#include "handover.h"
#include "leakcheck.h"
#include "lifecycle.h"
#include "proc.h"
#include "procfs.h"
#include "regs.h"
#include "restart.h"
#include "sigtrap.h"
#include "stop.h"
#include "stopall.h"
#include "uevent.h"
#include "uprobes.h"
#include "util.h"

/* ---- classify ---- */

void
stop_note_resume(struct jt_thread *t, const arch_regs *regs)
{
	t->resume_pc = arch_pc(regs);
	t->resume_sp = arch_sp(regs);
}

/*
 * Non-zero when a SIGTRAP stop one past breakpoint bp is a SIGTRAP sent to
 * t (raise, kill), not our trap byte. Only possible where we restarted t
 * at that very pc, past a one-byte instruction we ran for it, and the
 * signal came before t ran anything: pc and stack pointer are still the
 * ones we let it go with. (Back at the breakpoint through a return to the
 * trampoline the pc is the same, but not the stack pointer: a one-byte
 * entry instruction is a push.) Then a trap byte gives si_code SI_KERNEL,
 * a sent signal SI_USER or SI_TKILL. Asked only then, so the usual hit
 * costs no system call.
 */
static int
stop_trap_sent(const struct jt_thread *t, const struct jt_bp *bp, const arch_regs *regs)
{
	siginfo_t si;

	if (bp->insn.len != ARCH_TRAP_PC_ADJUST || arch_pc(regs) != t->resume_pc || arch_sp(regs) != t->resume_sp)
		return 0;
	return ptrace(PTRACE_GETSIGINFO, t->tid, 0L, &si) == 0 && si.si_code != SI_KERNEL;
}

/*
 * A SIGTRAP signal-delivery-stop: ours when t sits one past an inserted
 * trap byte of its address space. Uses the registers its tracer thread
 * read before taking the lock, when they are this stop's.
 */
static enum stop_event
stop_classify_trap(struct jt_thread *t, struct jt_stop *st)
{
	struct jt_tthread *tt = t->owner;
	struct jt_bp *bp;

	if (tt->regs_tid == t->tid)
		st->regs = tt->regs;
	else if (arch_regs_get(t->tid, &st->regs) < 0)
		return errno == ESRCH ? STOP_GONE : STOP_SIGNAL;
	tt->regs_tid = 0;
	bp = bp_find(&t->proc->vm_owner->bps, arch_pc(&st->regs) - ARCH_TRAP_PC_ADJUST);
	if (!bp && t->proc->vm_owner->uprobes && (st->hook_fn = uprobes_hook_of(t->tid)) >= 0)
		return STOP_HOOK;
	if (!bp || !bp->inserted || stop_trap_sent(t, bp, &st->regs))
		return STOP_SIGNAL;
	st->bp = bp;
	return STOP_BREAKPOINT;
}

static enum stop_event
stop_classify_event(unsigned event, int sig)
{
	switch (event) {
	case PTRACE_EVENT_STOP:
		return restart_is_stop_signal(sig) ? STOP_GROUP : STOP_INTERRUPT;
	case PTRACE_EVENT_FORK:
		return STOP_FORK;
	case PTRACE_EVENT_VFORK:
		return STOP_VFORK;
	case PTRACE_EVENT_CLONE:
		return STOP_CLONE;
	case PTRACE_EVENT_VFORK_DONE:
		return STOP_VFORK_DONE;
	case PTRACE_EVENT_EXEC:
		return STOP_EXEC;
	default:
		return STOP_OTHER_EVENT;
	}
}

void
stop_classify(struct jt_thread *t, int status, struct jt_stop *st)
{
	st->status = status;
	st->sig = 0;
	st->event = 0;
	st->bp = NULL;
	st->hook_fn = -1;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		st->ev = WIFEXITED(status) ? STOP_EXITED : STOP_KILLED;
		return;
	}
	if (!WIFSTOPPED(status) || !t) {
		st->ev = STOP_NONE;
		return;
	}
	st->sig = WSTOPSIG(status);
	st->event = (unsigned)status >> 16;
	if (st->event)
		st->ev = stop_classify_event(st->event, st->sig);
	else if (st->sig == SIGTRAP)
		st->ev = stop_classify_trap(t, st);
	else
		st->ev = STOP_SIGNAL;
}

/* ---- handle ---- */

void
stop_take_child(struct jt_tracer *tr, struct jt_thread *t, unsigned event)
{
	int status;
	pid_t child = lifecycle_wait_child(tr, t, event, &status);

	/* Now, so that no child is ever traced without being in our tables (see lifecycle_wait_child). */
	if (child)
		stop_dispatch(tr, child, status);
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
stop_defer_hit(struct jt_thread *t, struct jt_stop *st, uint64_t addr)
{
	arch_set_pc(&st->regs, addr);
	if (arch_regs_set(t->tid, &st->regs) < 0 && errno != ESRCH)
		perror_msg("thread %d: cannot set its registers", t->tid);
	t->resume_pc = 0;	/* the next hit here is a trap byte's, not a signal sent at this pc */
	debug_msg("thread %d: _exit hit while its process is being stopped; taken again once it runs", t->tid);
	return restart_decide(RESTART_HOLD, t->tid, 0, NULL);
}

struct restart
stop_breakpoint(struct jt_tracer *tr, struct jt_thread *t, struct jt_stop *st, int collecting)
{
	struct jt_proc *p = t->proc;
	uint64_t addr = arch_pc(&st->regs) - ARCH_TRAP_PC_ADJUST;
	pid_t tid = t->tid;
	enum call_action action;

	/* Before the registers are held back for the restart: the repair runs code in t. */
	if (p->sigtrap.kind != SIGTRAP_UNKNOWN)
		sigtrap_hit(t);
	if (collecting && alloc_fns[st->bp->fn].kind == FK_EXIT)
		return stop_defer_hit(t, st, addr);
	tr->events++;
	t->owner->events++;
	if (!t->active) {
		t->active = 1;
		t->owner->nactive++;
	}
	arch_set_pc(&st->regs, addr);
	action = call_on_trap(t, st->bp, &st->regs, tr->opt);
	/* _exit under --leak-check: the memory is whole for the last time. */
	if (p->leak_due && !collecting && leakcheck_at_exit(tr, t) < 0)
		return restart_decide(RESTART_NONE, tid, 0, NULL);
	if (action == CALL_STEP) {
		/* The event is recorded; what is left is running the displaced instruction. */
		arch_regs_set(t->tid, &st->regs);
		t->step_pending = 1;
		t->step_addr = addr;
		t->resume_pc = 0;	/* stopall_step_one notes where the step ends */
		if (collecting)
			return restart_decide(RESTART_HOLD, t->tid, 0, NULL);
		/* t may exit meanwhile (another thread ends the process) and be freed: tid, not t->tid. */
		stopall_step_or_send(tr, t);
		return restart_decide(RESTART_NONE, tid, 0, NULL);
	}
	stop_note_resume(t, &st->regs);
	if (!collecting && t->owner->resume_tid == 0 && !handover_rebalance_due(tr, t)) {
		/* The common case: set the registers and restart it once the lock is released. */
		t->owner->resume_tid = t->tid;
		t->owner->resume_regs = st->regs;
		return restart_decide(RESTART_LATER, t->tid, 0, NULL);
	}
	if (arch_regs_set(t->tid, &st->regs) < 0 && errno != ESRCH)
		perror_msg("thread %d: cannot set its registers", t->tid);
	if (collecting)
		return restart_decide(RESTART_HOLD, t->tid, 0, NULL);
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

	if (procfs_status_field(tid, "SigCgt", buf, sizeof(buf)) < 0)
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

	if (!stop_sig_caught(t->tid, sig) || arch_regs_get(t->tid, &regs) < 0)
		return;
	if (call_settle(t, &regs)) {
		debug_msg("signal %d: thread %d had returned to a trampoline; return finished first", sig, t->tid);
		if (arch_regs_set(t->tid, &regs) < 0)
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
		return stop_breakpoint(tr, t, st, 0);
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
