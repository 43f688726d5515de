/* test_stop.c - unit tests of the stop pipeline: wait statuses classified, restarts, and the thread state predicates. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "options.h"
#include "proc.h"
#include "tracer.h"
#include "regs.h"
#include "restart.h"
#include "stop.h"
#include "tap.h"
#include "tthread.h"

/* A wait status as the kernel builds it: stopped by sig, with a PTRACE_EVENT_* above. */
#define STOPPED(sig, event) ((((event) << 8 | (sig)) << 8) | 0x7f)

static enum stop_event
classify(struct jt_thread *t, int status)
{
	struct jt_stop st;

	stop_classify(t, status, &st);
	return st.ev;
}

/* Statuses that need no registers: exits, events, group-stops and interrupts. */
static void
test_classify_status(void)
{
	struct jt_thread t;

	memset(&t, 0, sizeof(t));
	ok(classify(NULL, 3 << 8) == STOP_EXITED, "exit(3): exited");
	ok(classify(NULL, SIGKILL) == STOP_KILLED, "SIGKILL: killed");
	ok(classify(NULL, 0xffff) == STOP_NONE, "continued: nothing to do");
	ok(classify(&t, STOPPED(SIGUSR1, 0)) == STOP_SIGNAL, "SIGUSR1: a signal for the program");
	ok(classify(&t, STOPPED(SIGSTOP, 0)) == STOP_SIGNAL, "SIGSTOP before its group-stop: a signal");
	ok(classify(&t, STOPPED(SIGSTOP, PTRACE_EVENT_STOP)) == STOP_GROUP, "event stop with SIGSTOP: group-stop");
	ok(classify(&t, STOPPED(SIGTTIN, PTRACE_EVENT_STOP)) == STOP_GROUP, "event stop with SIGTTIN: group-stop");
	ok(classify(&t, STOPPED(SIGTRAP, PTRACE_EVENT_STOP)) == STOP_INTERRUPT, "event stop with SIGTRAP: interrupt");
	ok(classify(&t, STOPPED(SIGTRAP, PTRACE_EVENT_FORK)) == STOP_FORK, "fork event");
	ok(classify(&t, STOPPED(SIGTRAP, PTRACE_EVENT_VFORK)) == STOP_VFORK, "vfork event");
	ok(classify(&t, STOPPED(SIGTRAP, PTRACE_EVENT_CLONE)) == STOP_CLONE, "clone event");
	ok(classify(&t, STOPPED(SIGTRAP, PTRACE_EVENT_VFORK_DONE)) == STOP_VFORK_DONE, "vfork-done event");
	ok(classify(&t, STOPPED(SIGTRAP, PTRACE_EVENT_EXEC)) == STOP_EXEC, "exec event");
	ok(classify(&t, STOPPED(SIGTRAP, PTRACE_EVENT_EXIT)) == STOP_OTHER_EVENT, "exit event: another event");
	ok(classify(NULL, STOPPED(SIGUSR1, 0)) == STOP_NONE, "a stop of no known thread: nothing");
}

static void __attribute__((noinline))
stop_target(void)
{
	__asm__ volatile("" ::: "memory");
}

/* A traced child stopped in SIGSTOP; once continued, it calls stop_target, then raises SIGTRAP. */
static pid_t
traced_child(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0L, 0L);
		raise(SIGSTOP);
		stop_target();
		raise(SIGTRAP);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		if (pid > 0)
			kill(pid, SIGKILL);
		return -1;
	}
	return pid;
}

/* A SIGTRAP stop is ours at an inserted trap byte, the program's elsewhere; restarts go through restart_thread. */
static void
test_classify_trap(void)
{
	struct jt_tracer tr;
	struct jt_proc p;
	struct jt_thread t;
	struct jt_stop st;
	int status;
	pid_t pid = traced_child();

	if (pid < 0) {
		ok(0, "a traced child");
		return;
	}
	memset(&tr, 0, sizeof(tr));
	memset(&p, 0, sizeof(p));
	memset(&t, 0, sizeof(t));
	tthread_init(&tr.tthreads, &tr, 0);
	p.pid = pid;
	p.vm_owner = &p;
	bp_table_init(&p.bps);
	t.tid = pid;
	t.proc = &p;
	t.owner = tthread_self();
	ok(bp_insert(&p.bps, pid, (uint64_t)(uintptr_t)stop_target, 0) == 0, "a breakpoint on stop_target");
	ok(restart_thread(pid, RESTART_CONT, 0, "test") == 0, "restart_thread continues it");
	ok(waitpid(pid, &status, 0) == pid, "it stops again");
	stop_classify(&t, status, &st);
	ok(st.ev == STOP_BREAKPOINT && st.bp && st.bp->addr == (uint64_t)(uintptr_t)stop_target,
	   "at the trap byte: our breakpoint, found");
	ok(arch_pc(&st.regs) == (uint64_t)(uintptr_t)stop_target + ARCH_TRAP_PC_ADJUST, "with its registers");
	/* Let it past: the original bytes back, its pc on the function. */
	bp_remove_all(&p.bps, pid);
	arch_set_pc(&st.regs, (uint64_t)(uintptr_t)stop_target);
	arch_regs_set(pid, &st.regs);
	restart_thread(pid, RESTART_CONT, 0, NULL);
	ok(waitpid(pid, &status, 0) == pid && classify(&t, status) == STOP_SIGNAL,
	   "its own raise(SIGTRAP): a signal for the program");
	ok(restart_thread(pid, RESTART_HOLD, 0, "test") == 0 && waitpid(pid, &status, WNOHANG) == 0,
	   "RESTART_HOLD leaves it stopped");
	restart_thread(pid, RESTART_CONT, 0, NULL);
	ok(waitpid(pid, &status, 0) == pid && classify(&t, status) == STOP_EXITED, "then it exits");
	ok(restart_thread(pid, RESTART_CONT, 0, "test") < 0, "continuing a thread that is gone fails quietly");
	bp_table_clear(&p.bps);
}

/* restart_stopped on a thread that is not stopped: only a wait for a stop is dropped. */
static void
test_state(void)
{
	struct jt_thread t;

	memset(&t, 0, sizeof(t));
	ok(t.state == TS_RUNNING && !thread_wants_stop(&t) && !thread_is_stopped(&t), "a new thread runs");
	t.state = TS_STOPPING;
	ok(thread_wants_stop(&t) && !thread_is_stopped(&t), "stopping: wants a stop, not stopped yet");
	restart_stopped(NULL, &t);
	ok(t.state == TS_RUNNING, "restarting one still stopping (a vfork parent) drops the wait");
	t.state = TS_IN_TRANSIT;
	restart_stopped(NULL, &t);
	ok(t.state == TS_IN_TRANSIT && thread_in_transit(&t) && !thread_wants_stop(&t),
	   "one in transit stays in transit");
	t.state = TS_GROUP_STOPPED;
	ok(thread_is_stopped(&t) && thread_wants_stop(&t), "group-stopped: stopped");
}

int
main(void)
{
	test_classify_status();
	test_classify_trap();
	test_state();
	return tap_done();
}
