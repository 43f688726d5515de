/* inject.c - runs one system call inside a stopped tracee thread, as if the thread had made it. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch.h"
#include "inject.h"
#include "kops.h"
#include "park_pc.h"
#include "proc.h"
#include "regs.h"
#include "restart.h"
#include "util.h"

/* Stops that are not the end of the step (a signal, a group-stop) before we give up. */
#define INJECT_TRIES 16
#define INJECT_SCRATCH 64

/*
 * Single-steps t over the system call instruction its registers point at. The
 * step ends in a SIGTRAP the kernel sends itself (si_code > 0); a signal of
 * the program's that comes first (si_code <= 0 for SIGTRAP) is kept in
 * *held, and a group-stop passed over. Returns 0, or -1 when t is gone.
 */
static int
inject_step(struct jt_thread *t, int *held)
{
	for (int tries = 0; tries < INJECT_TRIES; tries++) {
		siginfo_t si;
		int status;

		if (restart_thread(t->tid, RESTART_STEP, 0, NULL) < 0 || kops_wait_tid(t->tid, &status) < 0 ||
		    !WIFSTOPPED(status))
			return -1;
		if ((unsigned)status >> 16)
			continue;
		if (WSTOPSIG(status) == SIGTRAP && kops->ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) == 0 &&
		    si.si_code > 0)
			return 0;
		*held = WSTOPSIG(status);
	}
	return -1;
}

/*
 * Runs the call with every signal blocked but SIGTRAP: no handler of the
 * program's can run in between, and the step's own trap finds SIGTRAP
 * unblocked, so the kernel does not reset the program's SIGTRAP handler
 * for it (see sigtrap.c).
 */
static int
inject_run(struct jt_thread *t, const arch_regs *saved, uint64_t pc, long nr, const uint64_t args[6],
	   long *ret, int *held)
{
	uint64_t only_trap = ~(1ull << (SIGTRAP - 1));
	arch_regs r = *saved;

	arch_syscall_setup(&r, pc, nr, args);
	if (kops->ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(only_trap), &only_trap) < 0 ||
	    kops->setregs(t->tid, &r) < 0 || inject_step(t, held) < 0 ||
	    kops->getregs(t->tid, &r) < 0)
		return -1;
	*ret = (long)arch_retval(&r);
	return 0;
}

int
inject_syscall(struct jt_thread *t, long nr, const uint64_t args[6], long *ret)
{
	uint64_t pc = park_pc_syscall(t->proc), mask;
	arch_regs saved;
	int rc, held = 0;

	if (!pc || kops_seccomp(t->tid) ||
	    kops->getregs(t->tid, &saved) < 0 ||
	    kops->ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(mask), &mask) < 0)
		return -1;
	rc = inject_run(t, &saved, pc, nr, args, ret, &held);
	if (kops->setregs(t->tid, &saved) < 0 ||
	    kops->ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(mask), &mask) < 0)
		rc = -1;
	/*
	 * A signal that came in between is sent again, to arrive after the
	 * stop like any other: whatever restarts t next need not know of it.
	 * Only its sender (si_pid) changes.
	 */
	if (held && kops->tgkill(t->proc->pid, t->tid, held) < 0)
		perror_msg("thread %d: cannot send signal %d again", t->tid, held);
	debug_msg("thread %d: injected system call %ld: %s, returned %ld", t->tid, nr,
		  rc < 0 ? "failed" : "done", rc < 0 ? 0L : *ret);
	return rc;
}

int
inject_sigaction(struct jt_thread *t, int sig, const struct arch_ksigaction *act,
		 struct arch_ksigaction *old)
{
	uint8_t keep[INJECT_SCRATCH];
	struct arch_ksigaction buf[2];
	uint64_t args[6] = { 0 }, base;
	arch_regs regs;
	long ret = -1;
	int rc = -1;

	if (kops->getregs(t->tid, &regs) < 0)
		return -1;
	/* Below the red zone, where not even a leaf function of the thread keeps anything. */
	base = (arch_sp(&regs) - ARCH_RED_ZONE - INJECT_SCRATCH) & ~15ull;
	if (kops->read(t->tid, base, keep, sizeof(keep)) < 0)
		return -1;
	memset(buf, 0, sizeof(buf));
	if (act)
		buf[0] = *act;
	args[0] = (uint64_t)sig;
	args[1] = act ? base : 0;
	args[2] = old ? base + sizeof(buf[0]) : 0;
	args[3] = sizeof(buf[0].mask);
	if (kops->write(t->tid, base, buf, sizeof(buf)) == 0 &&
	    inject_syscall(t, SYS_rt_sigaction, args, &ret) == 0 && ret == 0 &&
	    (!old || kops->read(t->tid, base + sizeof(buf[0]), old, sizeof(*old)) == 0))
		rc = 0;
	if (kops->write(t->tid, base, keep, sizeof(keep)) < 0)
		rc = -1;
	return rc;
}
