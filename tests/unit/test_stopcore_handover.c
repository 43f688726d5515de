/* test_stopcore_handover.c - unit tests of the hand-over of a thread between tracer threads, driven by a scripted kernel through kops: the races with signals and exits that real processes give only by chance. */
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>

#include "handover.h"
#include "kops.h"
#include "proc.h"
#include "stopall.h"
#include "stopcore_test.h"
#include "tracer.h"
#include "tap.h"
#include "tthread.h"

/* p gets what a hand-over needs: the parking code's addresses (park_pc.c would search its image for them). */
static struct jt_proc *
handover_proc(void)
{
	struct jt_proc *p = proc_new(&tr, TID(0), "prog");

	p->park_pc = PARK_ADDR;
	p->spin_pc = PARK_ADDR + 8;
	tr.arrived = stopall_arrived;
	tr.tthreads.n = 2;
	memset(&tr.tthreads.t[1], 0, sizeof(tr.tthreads.t[1]));
	tr.tthreads.t[1].index = 1;
	tr.tthreads.t[1].tr = &tr;
	return p;
}

/*
 * (c) A hand-over that races a signal. A signal held for the thread goes
 * with the detach, once; a signal stop that the new tracer thread meets
 * before its interrupt is held and delivered at the restart, once.
 */
static void
test_handover_races_signal(void)
{
	struct jt_proc *p;
	struct jt_thread *t;

	world_reset();
	p = handover_proc();
	t = thread_make(p, TID(1), TS_STOPPED);
	t->owner = &tr.tthreads.t[1];
	t->pending_sig = SIGUSR1;
	arch_set_pc(fk_regs_of(TID(1)), MEM_BASE + 0x10);

	ok(handover_send(t, &tr.tthreads.t[0]) == 0, "hand-over: sent");
	log_is("getregs 1; getsigmask 1; setsigmask 1; setregs 1 pc 0x400088; detach 1 sig 10",
	       "hand-over: parked on the spin (no /proc: seccomp assumed), the held SIGUSR1 goes with the detach");
	is_u64(t->pending_sig, 0, "hand-over: the signal is not held any more");
	is_u64(t->state, TS_IN_TRANSIT, "hand-over: in transit");

	/* The new tracer thread's interrupt comes second: a SIGUSR2 signal-delivery stop first. */
	log_clear();
	fk_queue(TID(1), STOPPED(SIGUSR2, 0));
	handover_receive(&tr.tthreads.t[0]);
	log_is("seize 1; interrupt 1; wait 1 = 1; setregs 1 pc 0x400010; setsigmask 1; cont 1 sig 12",
	       "hand-over: seized, registers and mask back, restarted delivering SIGUSR2 once");
	is_u64(t->pending_sig, 0, "hand-over: nothing left held");
	is_u64(t->state, TS_RUNNING, "hand-over: running");
	is_u64(t->owner->index, 0, "hand-over: traced by tracer thread 0");

	/* In the usual order (the interrupt stop first) nothing is delivered at the restart: SIGUSR1 went with the detach. */
	log_clear();
	t->state = TS_STOPPED;
	t->pending_sig = SIGUSR1;
	t->owner = &tr.tthreads.t[1];
	ok(handover_send(t, &tr.tthreads.t[0]) == 0, "hand-over again: sent");
	fk_queue(TID(1), STOPPED(SIGTRAP, PTRACE_EVENT_STOP));
	handover_receive(&tr.tthreads.t[0]);
	ok(strstr(fk.log, "detach 1 sig 10") && strstr(fk.log, "cont 1 sig 0") && !strstr(fk.log, "cont 1 sig 10"),
	   "hand-over again: SIGUSR1 once, with the detach, not again at the restart (%s)", fk.log);
	world_free();
}

/*
 * (c2) A thread freed while in transit (an exec killed it, parked): it
 * leaves the inbox it waited in. It stayed there, and the receiver's next
 * look read freed memory (ASan in CI's exec.t, "a thread other than main
 * execs": jmptrace exited 1 and the program was killed with it).
 */
static void
test_handover_freed_in_transit(void)
{
	struct jt_proc *p;
	struct jt_thread *t, *u;

	world_reset();
	p = handover_proc();
	t = thread_make(p, TID(1), TS_STOPPED);
	u = thread_make(p, TID(2), TS_STOPPED);
	t->owner = u->owner = &tr.tthreads.t[1];
	arch_set_pc(fk_regs_of(TID(1)), MEM_BASE + 0x10);
	arch_set_pc(fk_regs_of(TID(2)), MEM_BASE + 0x20);
	ok(handover_send(t, &tr.tthreads.t[0]) == 0 && handover_send(u, &tr.tthreads.t[0]) == 0,
	   "two threads handed to tracer thread 0");
	ok(tr.tthreads.t[0].inbox == u && u->inext == t, "both wait in its inbox, the later first");
	thread_free(&tr, u);
	ok(tr.tthreads.t[0].inbox == t && !t->inext, "the one freed (the inbox's head) is out of it");
	thread_free(&tr, t);
	ok(tr.tthreads.t[0].inbox == NULL, "and the other too: the inbox is empty");
	log_clear();
	handover_receive(&tr.tthreads.t[0]);
	ok(fk.log[0] == 0, "the receiver seizes nothing (%s)", fk.log);
	world_free();
}

int
main(void)
{
	sc_begin();
	test_handover_races_signal();
	test_handover_freed_in_transit();
	return sc_end();
}
