/* sigtrap.c - keeps the program's own SIGTRAP handler in place although our breakpoints raise SIGTRAP. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "inject.h"
#include "kops.h"
#include "proc.h"
#include "procfs.h"
#include "restart.h"
#include "sigtrap.h"
#include "util.h"

/*
 * Why this is needed: our trap instruction (or a single step) makes the kernel force a
 * SIGTRAP on the thread (force_sig_info_to_task in kernel/signal.c). When
 * SIGTRAP is blocked in the thread, as it is inside the program's own
 * SIGTRAP handler, or ignored, the kernel first resets the process's SIGTRAP
 * disposition to SIG_DFL and unblocks SIGTRAP in that thread, before we see
 * the stop and suppress the signal. The program's next SIGTRAP of its own
 * would then kill it. The reset leaves sa_flags, sa_mask and sa_restorer
 * alone, which tells it from the program setting SIG_DFL itself.
 *
 * Only a handler is kept. SIG_IGN cannot be put back this way: the step
 * that runs the injected rt_sigaction ends in a forced SIGTRAP itself,
 * which resets SIG_IGN again at once.
 */

#define SIGTRAP_BIT (1ull << (SIGTRAP - 1))
/* Field of /proc/PID/stat (proc(5)): the caught signals. */
#define SIGTRAP_STAT_CAUGHT 34

/* 1 when the process has a SIGTRAP handler, 0 when not, -1 when /proc cannot say. */
static int
sigtrap_caught(pid_t tid)
{
	unsigned long long set;

	if (procfs_stat_field(tid, SIGTRAP_STAT_CAUGHT, &set) < 0)
		return -1;
	return (set & SIGTRAP_BIT) != 0;
}

/* Non-zero when cur is what the kernel's reset makes of the learned handler. */
static int
sigtrap_was_reset(const struct jt_sigtrap *st, const struct arch_ksigaction *cur)
{
	return cur->handler == (uint64_t)(uintptr_t)SIG_DFL && cur->flags == st->act.flags &&
	       cur->restorer == st->act.restorer && cur->mask == st->act.mask;
}

/*
 * The process has no SIGTRAP handler now, but had one: puts it back if our
 * breakpoint (in t or in another thread) reset it. Returns 1 when it did.
 */
static int
sigtrap_restore(struct jt_thread *t)
{
	struct jt_sigtrap *st = &t->proc->sigtrap;
	struct arch_ksigaction cur;

	if (inject_sigaction(t, SIGTRAP, NULL, &cur) < 0)
		return 0;
	if (!sigtrap_was_reset(st, &cur)) {
		/* The program changed it itself: nothing of ours to undo, now or later. */
		st->kind = SIGTRAP_UNKNOWN;
		return 0;
	}
	if (inject_sigaction(t, SIGTRAP, &st->act, NULL) < 0) {
		error_msg("process %d: cannot put back the program's SIGTRAP handler", t->proc->pid);
		return 0;
	}
	debug_msg("thread %d: SIGTRAP handler put back after our breakpoint reset it", t->tid);
	return 1;
}

/* Reads the handler into the cache. */
static void
sigtrap_read(struct jt_thread *t)
{
	struct jt_sigtrap *st = &t->proc->sigtrap;
	struct arch_ksigaction old;

	st->kind = SIGTRAP_UNKNOWN;
	if (inject_sigaction(t, SIGTRAP, NULL, &old) < 0 || (old.flags & SA_RESETHAND))
		return;	/* SA_RESETHAND: the kernel resets it by design; putting it back would be wrong */
	st->kind = SIGTRAP_CAUGHT;
	st->act = old;
	debug_msg("process %d: SIGTRAP caught, handler %#lx flags %#lx", t->proc->pid,
		  (unsigned long)old.handler, (unsigned long)old.flags);
}

void
sigtrap_learn(struct jt_thread *t)
{
	struct jt_sigtrap *st = &t->proc->sigtrap;
	int caught = sigtrap_caught(t->tid), have_si;
	siginfo_t si;

	if (caught < 0 || (caught == 0 && st->kind == SIGTRAP_UNKNOWN)) {
		st->kind = SIGTRAP_UNKNOWN;
		return;
	}
	/* The injected step replaces the siginfo of the stop; the program's SIGTRAP must keep its own. */
	have_si = kops->ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) == 0;
	if (caught)
		sigtrap_read(t);
	else
		sigtrap_restore(t);	/* another thread's hit reset it: this SIGTRAP must find the handler */
	if (have_si)
		kops->ptrace(PTRACE_SETSIGINFO, t->tid, NULL, &si);
}

/* Blocks SIGTRAP in t again: a reset of a handler means the kernel unblocked it. */
static void
sigtrap_reblock(struct jt_thread *t)
{
	uint64_t mask;

	if (kops->ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(mask), &mask) < 0)
		return;
	mask |= SIGTRAP_BIT;
	if (kops->ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(mask), &mask) < 0)
		perror_msg("thread %d: cannot block SIGTRAP again", t->tid);
}

void
sigtrap_repair(struct jt_thread *t)
{
	if (t->proc->sigtrap.kind == SIGTRAP_UNKNOWN || sigtrap_caught(t->tid) != 0 || !sigtrap_restore(t))
		return;
	/*
	 * The kernel unblocked SIGTRAP in the thread whose hit reset the
	 * handler. With one thread that is t. With more it may be another
	 * thread, not stopped yet: blocking SIGTRAP in a thread that is not in
	 * its handler would hold its next SIGTRAP for ever, so it stays
	 * unblocked (a second SIGTRAP then nests in the handler).
	 */
	if (t->proc->nthreads == 1)
		sigtrap_reblock(t);
}

void
sigtrap_hit(struct jt_thread *t)
{
	siginfo_t si;
	int merged;

	merged = kops->ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) == 0 && si.si_code != SI_KERNEL;
	sigtrap_repair(t);
	/* After the repair, whose step would take it: it arrives once t runs (or its handler returns). */
	if (!merged)
		return;
	debug_msg("thread %d: its own SIGTRAP (si_code %d) stood in for our trap's: sending it again", t->tid, si.si_code);
	if (kops->tgkill(t->proc->pid, t->tid, SIGTRAP) < 0)
		perror_msg("thread %d: cannot send its SIGTRAP again", t->tid);
}

int
sigtrap_deliver(struct jt_thread *t, int *end)
{
	const struct jt_sigtrap *st = &t->proc->sigtrap;
	uint64_t mask;
	int status;

	if (st->kind != SIGTRAP_CAUGHT || t->proc->nthreads < 2 || (st->act.flags & SA_NODEFER))
		return -1;
	/*
	 * Stepping into the handler stops t at its first instruction (a
	 * ptrace notification, not a forced SIGTRAP: nothing is reset), with
	 * the handler's mask in place.
	 */
	if (restart_thread(t->tid, RESTART_STEP, SIGTRAP, "into its SIGTRAP handler") < 0 ||
	    kops_wait_tid(t->tid, &status) < 0)
		return 0;	/* gone: nothing more to do */
	if (!WIFSTOPPED(status)) {
		*end = status;
		return 1;
	}
	if (kops->ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(mask), &mask) == 0 && (mask & SIGTRAP_BIT)) {
		mask &= ~SIGTRAP_BIT;
		kops->ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(mask), &mask);
	}
	restart_thread(t->tid, RESTART_CONT, 0, "in its SIGTRAP handler");
	return 0;
}
