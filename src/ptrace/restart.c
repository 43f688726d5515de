/* restart.c - the one place a stopped tracee is restarted (PTRACE_CONT, PTRACE_LISTEN, PTRACE_SINGLESTEP), each decision logged under --verbose. */
#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>

#include "kops.h"
#include "proc.h"
#include "regs.h"
#include "restart.h"
#include "tthread.h"
#include "util.h"

int
restart_is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static const char *const restart_op_names[] = {
	[RESTART_NONE] = "none", [RESTART_HOLD] = "held stopped", [RESTART_CONT] = "continue",
	[RESTART_LISTEN] = "listen", [RESTART_STEP] = "single-step", [RESTART_LATER] = "continue after the lock",
};

int
restart_thread(pid_t tid, enum restart_op op, int sig, const char *why)
{
	enum __ptrace_request req;
	const char *name;

	if (why && jt_debug && op != RESTART_NONE) {
		if (sig)
			debug_msg("thread %d: %s with signal %d: %s", tid, restart_op_names[op], sig, why);
		else
			debug_msg("thread %d: %s: %s", tid, restart_op_names[op], why);
	}
	switch (op) {
	case RESTART_CONT:
		req = PTRACE_CONT, name = "PTRACE_CONT";
		break;
	case RESTART_LISTEN:
		req = PTRACE_LISTEN, name = "PTRACE_LISTEN", sig = 0;
		break;
	case RESTART_STEP:
		req = PTRACE_SINGLESTEP, name = NULL;
		break;
	default:
		return 0;
	}
	if (kops_request(req, tid, sig) == 0)
		return 0;
	/* A failed step is its loop's to judge (it stops stepping); ESRCH means it is gone. */
	if (errno != ESRCH && name)
		perror_msg("ptrace(%s, %d)", name, tid);
	return -1;
}

void
restart_apply(struct restart r)
{
	restart_thread(r.tid, r.op, r.sig, r.why);
}

/* The breakpoint hit's restart, held back by stop_breakpoint (see struct jt_tthread). No lock needed: it is our own tracee. */
void
restart_held(struct jt_tthread *tt)
{
	pid_t tid = tt->resume_tid;

	if (!tid)
		return;
	tt->resume_tid = 0;
	if (kops->setregs(tid, &tt->resume_regs) < 0 && errno != ESRCH)
		perror_msg("thread %d: cannot set its registers", tid);
	restart_thread(tid, RESTART_CONT, 0, NULL);
}

void
restart_stopped(struct jt_tracer *tr, struct jt_thread *t)
{
	int sig = t->pending_sig;

	(void)tr;
	if (!thread_is_stopped(t)) {
		/* A vfork parent counted as stopped: its stop, when it comes, is not one we wait for. */
		if (t->state == TS_STOPPING)
			thread_set_state(t, TS_RUNNING);
		return;
	}
	t->pending_sig = 0;
	if (t->state == TS_GROUP_STOPPED) {
		thread_set_state(t, TS_RUNNING);
		restart_thread(t->tid, RESTART_LISTEN, 0, "back into its group-stop");
		return;
	}
	thread_set_state(t, TS_RUNNING);
	restart_thread(t->tid, RESTART_CONT, sig, "after a stop we held");
}
