/* test_stopcore_stopall.c - unit tests of the stop core (stopall, stop dispatch, lifecycle; the hand-over is test_stopcore_handover.c's) driven by a scripted kernel through kops: the orders of stops, exits and events that real processes give only by chance. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "alloc.h"
#include "bp.h"
#include "kops.h"
#include "lifecycle.h"
#include "options.h"
#include "proc.h"
#include "restart.h"
#include "stop.h"
#include "stopall.h"
#include "stopcore_test.h"
#include "tracer.h"
#include "tap.h"
#include "tthread.h"

/*
 * (a) A thread exits while its process is being stopped: its exit is the
 * answer to our interrupt. The stop-all must end without waiting for a stop
 * that never comes, the thread must be forgotten, the others restarted.
 */
static void
test_exit_during_stopall(void)
{
	struct jt_proc *p;
	struct jt_thread *t3;

	world_reset();
	p = proc_new(&tr, TID(0), "prog");
	thread_make(p, TID(0), TS_STOPPED);
	thread_make(p, TID(1), TS_RUNNING);
	t3 = thread_make(p, TID(2), TS_RUNNING);
	fk_queue(TID(1), 0);	/* exit(0) */
	fk_queue(TID(2), STOPPED(SIGTRAP, PTRACE_EVENT_STOP));

	is_u64(stopall_wait(&tr, p), 0, "exit during stop-all: the stop-all ends");
	log_is("interrupt 1; interrupt 2; wait -1 = 1; wait -1 = 2", "exit during stop-all: two interrupts, two waits, no third");
	ok(thread_find(&tr, TID(1)) == NULL, "exit during stop-all: the exited thread is forgotten");
	is_u64(p->nthreads, 2, "exit during stop-all: two threads left");
	is_u64(t3->state, TS_STOPPED, "exit during stop-all: the interrupted one is held");
	is_u64(p->exited, 0, "exit during stop-all: a thread's exit is not its process's");
	log_clear();
	stopall_resume(&tr, p);
	log_is("cont 0 sig 0; cont 2 sig 0", "exit during stop-all: the two left are restarted, the dead one not");

	/* Gone already when interrupted (ESRCH): counted as stopped, its exit left for the loop. */
	world_free();
	world_reset();
	p = proc_new(&tr, TID(0), "prog");
	thread_make(p, TID(0), TS_STOPPED);
	thread_make(p, TID(1), TS_RUNNING);
	fk.gone = TID(1);
	is_u64(stopall_wait(&tr, p), 0, "gone before the interrupt: the stop-all ends");
	log_is("interrupt 1", "gone before the interrupt: no wait at all");
	world_free();
}

/* Puts an _exit breakpoint at EXIT_ADDR of p and makes the registers of tid stand one past it. */
static void
exit_hit_setup(struct jt_proc *p, pid_t tid)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

	memcpy(fk.mem + (EXIT_ADDR - MEM_BASE), endbr64, sizeof(endbr64));
	ok(bp_insert(&p->bps, p->pid, EXIT_ADDR, FN_EXIT) == 0, "_exit hit: breakpoint inserted");
	arch_set_pc(fk_regs_of(tid), EXIT_ADDR + ARCH_TRAP_PC_ADJUST);
}

/*
 * (b) An _exit hit arrives while a process is collected, and one of another
 * process too. Ours is put back (pc on the trap byte, held, not recorded),
 * so that it is hit again once restarted and the main loop makes its leak
 * check; the other process's is kept for the loop, untouched.
 */
static void
test_exit_hit_while_collecting(void)
{
	struct jt_proc *p, *q;
	struct jt_thread *t1, *q0;
	struct jt_waited w;

	world_reset();
	q = proc_new(&tr, TID(5), "other");
	q0 = thread_make(q, TID(5), TS_RUNNING);
	p = proc_new(&tr, TID(0), "prog");
	thread_make(p, TID(0), TS_STOPPED);
	t1 = thread_make(p, TID(1), TS_RUNNING);
	exit_hit_setup(p, TID(1));
	fk_queue(TID(5), STOPPED(SIGTRAP, 0));
	fk_queue(TID(1), STOPPED(SIGTRAP, 0));

	is_u64(stopall_wait(&tr, p), 0, "_exit hit: the stop-all ends");
	log_is("interrupt 1; wait -1 = 5; wait -1 = 1; getregs 1; setregs 1 pc 0x400040",
	       "_exit hit: the other process's stop is not looked at; ours is put back on the trap byte");
	is_u64(t1->state, TS_STOPPED, "_exit hit: the thread is held");
	is_u64(t1->step_pending, 0, "_exit hit: no step over _exit is left pending");
	is_u64(tr.events, 0, "_exit hit: not recorded now (recorded when hit again)");
	is_u64(p->leak_due, 0, "_exit hit: no leak check started inside the stop-all");
	is_u64(arch_pc(fk_regs_of(TID(1))), EXIT_ADDR, "_exit hit: its pc is on the trap byte again");
	is_u64(q0->state, TS_RUNNING, "_exit hit: the other process's thread is not collected");
	is_u64(tr.tthreads.t[0].nwaited, 1, "_exit hit: one stop kept for the loop");
	ok(tthread_take_waited(&tr.tthreads.t[0], 0, &w) == 0 && w.tid == TID(5) && w.status == STOPPED(SIGTRAP, 0),
	   "_exit hit: the kept stop is the other process's, with its status");
	log_clear();
	stopall_resume(&tr, p);
	log_is("cont 0 sig 0; cont 1 sig 0", "_exit hit: restarted without a signal, to run into the trap byte again");
	world_free();
}

/*
 * (d) A vfork parent while its child is held. Collecting the process, a
 * thread stops at its vfork event: the child is adopted (sharing the
 * parent's memory) and its first stop kept, so the child stays held; the
 * parent, let out of the event stop, waits in the kernel for the child and
 * cannot stop: it counts as stopped, or the stop-all waits forever.
 */
static void
test_vfork_parent_child_held(void)
{
	struct jt_proc *p, *c;
	struct jt_thread *t1;
	struct jt_waited w;

	world_reset();
	p = proc_new(&tr, TID(0), "prog");
	thread_make(p, TID(0), TS_STOPPED);
	t1 = thread_make(p, TID(1), TS_RUNNING);
	fk_queue(TID(1), STOPPED(SIGTRAP, PTRACE_EVENT_VFORK));
	fk_queue(TID(4), STOPPED(SIGTRAP, PTRACE_EVENT_STOP));
	fk.eventmsg = TID(4);
	fk.status_tid = TID(4);
	fk.status_tgid = TID(4);
	fk.status_ppid = TID(0);

	is_u64(stopall_wait(&tr, p), 0, "vfork: the stop-all ends");
	log_is("interrupt 1; wait -1 = 1; geteventmsg 1; wait 4 = 4; cont 1 sig 0; interrupt 1",
	       "vfork: the child's first stop taken, the parent out of its event stop and asked again, no wait for it");
	ok(t1->vforking, "vfork: the parent waits for its child");
	is_u64(t1->state, TS_STOPPING, "vfork: the parent is asked to stop, not held");
	c = proc_find(&tr, TID(4));
	ok(c && c->vfork_child && c->vm_owner == p, "vfork: the child is adopted in its parent's memory");
	ok(c && thread_find(&tr, TID(4)) && thread_find(&tr, TID(4))->born_traced, "vfork: the child's thread is ours");
	ok(tthread_take_waited(&tr.tthreads.t[0], 0, &w) == 0 && w.tid == TID(4),
	   "vfork: the child's first stop is kept for the loop: the child is held");
	log_clear();
	stopall_resume(&tr, p);
	log_is("cont 0 sig 0", "vfork: only the held thread is restarted");
	is_u64(t1->state, TS_RUNNING, "vfork: the parent's coming stop is not waited for");
	world_free();
}

/*
 * (e) A followed child ends while its parent is being stopped. Its exit is
 * kept for the loop, not handled inside the parent's pause; handled there,
 * the child's process leaves for tr->ended with its report due, and nobody
 * writes that report until the loop does (loop_reports_due).
 */
static void
test_child_exit_during_stopall(void)
{
	struct jt_proc *p, *c;
	struct jt_waited w;

	world_reset();
	opt.follow_forks = 1;
	c = proc_new(&tr, TID(6), "child");
	thread_make(c, TID(6), TS_RUNNING);
	thread_make(c, TID(7), TS_RUNNING);
	p = proc_new(&tr, TID(0), "prog");
	thread_make(p, TID(0), TS_STOPPED);
	thread_make(p, TID(1), TS_RUNNING);
	fk_queue(TID(6), 3 << 8);	/* exit(3) */
	fk_queue(TID(1), STOPPED(SIGTRAP, PTRACE_EVENT_STOP));

	is_u64(stopall_wait(&tr, p), 0, "child exit: the parent's stop-all ends");
	log_is("interrupt 1; wait -1 = 6; wait -1 = 1", "child exit: the child's exit met, not acted on");
	ok(proc_find(&tr, TID(6)) == c && c->nthreads == 2 && !c->exited, "child exit: the child is untouched during the pause");
	ok(tr.ended == NULL, "child exit: no report due during the pause");
	ok(tthread_take_waited(&tr.tthreads.t[0], 0, &w) == 0 && w.tid == TID(6), "child exit: its exit kept for the loop");

	/* The loop's turn: the kept exit is the process's end. */
	lifecycle_exited(&tr, w.tid, w.status);
	ok(proc_find(&tr, TID(6)) == NULL && tr.ended == c, "child exit: the child left the process list for the loop's reports");
	ok(tr.ended == c && c->report_due && strcmp(c->report_due, "exit") == 0, "child exit: its report is due, for the exit");
	ok(tr.ended == c && c->exited && c->exit_status == 3, "child exit: exit status 3 noted");
	ok(thread_find(&tr, TID(7)) == NULL, "child exit: its other thread is forgotten");
	is_u64(tr.nsnapshots, 0, "child exit: no report written by the stop core");
	world_free();
}

/*
 * (f) A clone event of a thread nobody asked to stop (stop_dispatch): the new
 * thread's first stop is taken and handled, and only then is the parent let
 * go, one after the other: the child is in our tables before the parent runs
 * an instruction, and no stop is dispatched inside another's handling.
 */
static void
test_clone_child_first(void)
{
	struct jt_proc *p;
	struct jt_thread *t2;

	world_reset();
	p = proc_new(&tr, TID(0), "prog");
	thread_make(p, TID(0), TS_RUNNING);
	fk_queue(TID(2), STOPPED(SIGTRAP, PTRACE_EVENT_STOP));	/* a seized new thread's first stop */
	fk.eventmsg = TID(2);
	fk.status_tid = TID(2);
	fk.status_tgid = TID(0);
	fk.status_ppid = 1;

	stop_dispatch(&tr, TID(0), STOPPED(SIGTRAP, PTRACE_EVENT_CLONE));
	ok(strstr(fk.log, "geteventmsg 0; wait 2 = 2") != NULL, "clone: the new thread's first stop is waited for (%s)", fk.log);
	ok(strstr(fk.log, "cont 2 sig 0; cont 0 sig 0") != NULL,
	   "clone: the new thread is let go from its first stop before its parent is (%s)", fk.log);
	t2 = thread_find(&tr, TID(2));
	ok(t2 && t2->proc == p && p->nthreads == 2, "clone: the new thread is a thread of its process");
	ok(t2 && t2->state == TS_RUNNING, "clone: the new thread runs, nobody waits for its stop");
	world_free();
}

int
main(void)
{
	sc_begin();
	test_exit_during_stopall();
	test_exit_hit_while_collecting();
	test_vfork_parent_child_held();
	test_child_exit_during_stopall();
	test_clone_child_first();
	return sc_end();
}
