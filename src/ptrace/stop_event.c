/* stop_event.c - what one wait status of a traced thread means, and the record of a breakpoint hit that every handler of it makes. */
#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "arch.h"
#include "call.h"
#include "kops.h"
#include "proc.h"
#include "regs.h"
#include "restart.h"
#include "stop_event.h"
#include "tracer.h"
#include "tthread.h"
#include "uprobes.h"

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
	return kops->ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) == 0 && si.si_code != SI_KERNEL;
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
	else if (kops->getregs(t->tid, &st->regs) < 0)
		return errno == ESRCH ? STOP_GONE : STOP_SIGNAL;
	tt->regs_tid = 0;
	bp = bp_find(&t->proc->vm_owner->bps, arch_pc(&st->regs) - ARCH_TRAP_PC_ADJUST);
	if (!bp && t->proc->vm_owner->uprobes && (st->hook_fn = uprobes_hook_of(t->proc->vm_owner->uprobes, t)) >= 0)
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

enum call_action
stop_hit_record(struct jt_tracer *tr, struct jt_thread *t, struct jt_stop *st)
{
	tr->events++;
	t->owner->events++;
	if (!t->active) {
		t->active = 1;
		t->owner->nactive++;
	}
	arch_set_pc(&st->regs, arch_pc(&st->regs) - ARCH_TRAP_PC_ADJUST);
	return call_on_trap(t, st->bp, &st->regs, tr->opt);
}

void
stop_hit_step_pending(struct jt_thread *t, struct jt_stop *st)
{
	/* The event is recorded; what is left is running the displaced instruction. */
	kops->setregs(t->tid, &st->regs);
	t->step_pending = 1;
	t->step_addr = arch_pc(&st->regs);
	t->resume_pc = 0;	/* stopall_step_one notes where the step ends */
}
