/* test_stopcore.c - unit tests of the stop core (stopall, handover, lifecycle) driven by a scripted kernel through kops: the orders of stops, exits and events that real processes give only by chance. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "alloc.h"
#include "bp.h"
#include "handover.h"
#include "kops.h"
#include "lifecycle.h"
#include "options.h"
#include "proc.h"
#include "restart.h"
#include "stop.h"
#include "stopall.h"
#include "tracer.h"
#include "tap.h"
#include "tthread.h"

/* A wait status as the kernel builds it: stopped by sig, with a PTRACE_EVENT_* above. */
#define STOPPED(sig, event) ((((event) << 8 | (sig)) << 8) | 0x7f)

/* Thread ids above the kernel's PID_MAX_LIMIT (4,194,304): a call that missed the seam reaches no process. */
#define TID(n) (5000000 + (n))

/* The fake target memory: one small page of code, nops but what a test writes. */
#define MEM_BASE 0x400000u
#define EXIT_ADDR (MEM_BASE + 0x40)
#define PARK_ADDR (MEM_BASE + 0x80)

/*
 * The scripted kernel: the wait results a test queued, in order; what each
 * thread's registers hold; and a log of every operation the stop core did.
 */
static struct {
	struct {
		pid_t tid;
		int status;
	} waits[16];
	int nwaits, next;
	arch_regs regs[8];		/* by tid - TID(0) */
	unsigned long eventmsg;		/* PTRACE_GETEVENTMSG's answer */
	pid_t gone;			/* a thread whose requests fail with ESRCH, or 0 */
	pid_t status_tid, status_tgid, status_ppid;	/* /proc/status_tid/status names its Tgid and PPid */
	uint8_t mem[256];
	char log[2048];
} fk;

static void __attribute__((format(printf, 1, 2)))
fk_log(const char *fmt, ...)
{
	size_t len = strlen(fk.log);
	va_list ap;

	if (len)
		len += (size_t)snprintf(fk.log + len, sizeof(fk.log) - len, "; ");
	va_start(ap, fmt);
	vsnprintf(fk.log + len, sizeof(fk.log) - len, fmt, ap);
	va_end(ap);
}

static void
fk_queue(pid_t tid, int status)
{
	fk.waits[fk.nwaits].tid = tid;
	fk.waits[fk.nwaits++].status = status;
}

/* The next queued result (for pid -1) or the first one of pid; ECHILD when there is none: a wait that would hang. */
static pid_t
fk_wait(pid_t pid, int *status, int options)
{
	for (int i = fk.next; i < fk.nwaits; i++) {
		pid_t tid = fk.waits[i].tid;

		if (pid != -1 && tid != pid)
			continue;
		*status = fk.waits[i].status;
		memmove(&fk.waits[i], &fk.waits[i + 1], (size_t)(fk.nwaits - i - 1) * sizeof(fk.waits[0]));
		fk.nwaits--;
		fk_log("wait %d = %d", pid == -1 ? -1 : pid - TID(0), tid - TID(0));
		return tid;
	}
	fk_log("wait %d = none", pid == -1 ? -1 : pid - TID(0));
	errno = ECHILD;
	return -1;
}

static const char *
fk_req_name(int req)
{
	switch (req) {
	case PTRACE_CONT: return "cont";
	case PTRACE_LISTEN: return "listen";
	case PTRACE_SINGLESTEP: return "step";
	case PTRACE_INTERRUPT: return "interrupt";
	case PTRACE_SEIZE: return "seize";
	case PTRACE_DETACH: return "detach";
	case PTRACE_GETEVENTMSG: return "geteventmsg";
	case PTRACE_GETSIGINFO: return "getsiginfo";
	case PTRACE_GETSIGMASK: return "getsigmask";
	case PTRACE_SETSIGMASK: return "setsigmask";
	default: return "other";
	}
}

static long
fk_ptrace(int req, pid_t tid, void *addr, void *data)
{
	long sig = (long)data;

	if (req == PTRACE_CONT || req == PTRACE_DETACH)
		fk_log("%s %d sig %ld", fk_req_name(req), tid - TID(0), sig);
	else
		fk_log("%s %d", fk_req_name(req), tid - TID(0));
	if (tid == fk.gone) {
		errno = ESRCH;
		return -1;
	}
	if (req == PTRACE_GETEVENTMSG)
		*(unsigned long *)data = fk.eventmsg;
	else if (req == PTRACE_GETSIGMASK)
		*(uint64_t *)data = 0;
	else if (req == PTRACE_GETSIGINFO)
		memset(data, 0, sizeof(siginfo_t));
	return 0;
}

static arch_regs *
fk_regs_of(pid_t tid)
{
	unsigned i = (unsigned)(tid - TID(0));

	return i < 8 ? &fk.regs[i] : NULL;
}

static int
fk_getregs(pid_t tid, arch_regs *regs)
{
	arch_regs *r = fk_regs_of(tid);

	fk_log("getregs %d", tid - TID(0));
	if (!r || tid == fk.gone) {
		errno = ESRCH;
		return -1;
	}
	*regs = *r;
	return 0;
}

static int
fk_setregs(pid_t tid, const arch_regs *regs)
{
	arch_regs *r = fk_regs_of(tid);

	fk_log("setregs %d pc %#llx", tid - TID(0), (unsigned long long)arch_pc(regs));
	if (!r || tid == fk.gone) {
		errno = ESRCH;
		return -1;
	}
	*r = *regs;
	return 0;
}

static int
fk_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	if (addr < MEM_BASE || addr + len > MEM_BASE + sizeof(fk.mem)) {
		errno = EIO;
		return -1;
	}
	memcpy(buf, fk.mem + (addr - MEM_BASE), len);
	return 0;
}

static int
fk_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	if (addr < MEM_BASE || addr + len > MEM_BASE + sizeof(fk.mem)) {
		errno = EIO;
		return -1;
	}
	memcpy(fk.mem + (addr - MEM_BASE), buf, len);
	return 0;
}

static int
fk_tgkill(pid_t tgid, pid_t tid, int sig)
{
	fk_log("tgkill %d sig %d", tid - TID(0), sig);
	return 0;
}

/* Tgid and PPid of the one thread a test names; every other line and thread is not there. */
static int
fk_status_field(pid_t pid, const char *key, char *buf, size_t size)
{
	pid_t v;

	if (pid != fk.status_tid)
		return -1;
	if (strcmp(key, "Tgid") == 0)
		v = fk.status_tgid;
	else if (strcmp(key, "PPid") == 0)
		v = fk.status_ppid;
	else
		return -1;
	snprintf(buf, size, "%d", v);
	return 0;
}

/* Every thread a test makes with another's tid shares its memory: the vfork child. */
static int
fk_kcmp_vm(pid_t a, pid_t b)
{
	return 0;
}

static const struct jt_kops fk_kops = {
	.wait = fk_wait,
	.wait_unless_woken = fk_wait,
	.ptrace = fk_ptrace,
	.ptrace_unless_woken = fk_ptrace,
	.getregs = fk_getregs,
	.setregs = fk_setregs,
	.read = fk_read,
	.write = fk_write,
	.tgkill = fk_tgkill,
	.status_field = fk_status_field,
	.kcmp_vm = fk_kcmp_vm,
};

static struct jt_options opt;
static struct jt_tracer tr;

/* A fresh session with no process, one tracer thread (the caller), and an empty script. */
static void
world_reset(void)
{
	memset(&fk, 0, sizeof(fk));
	memset(fk.mem, 0x90, sizeof(fk.mem));	/* nop */
	tthread_clear_waited(&tr.tthreads.t[0]);
	tr.tthreads.n = 1;
	tr.tthreads.t[0].inbox = NULL;
}

static void
world_free(void)
{
	struct jt_proc *p;

	while ((p = tr.procs)) {
		proc_each_thread(&tr, p, NULL, thread_free);
		proc_free(&tr, p);
	}
	while ((p = tr.ended)) {
		tr.ended = p->next;
		proc_free(&tr, p);
	}
	opt.follow_forks = 0;
}

static struct jt_thread *
thread_make(struct jt_proc *p, pid_t tid, enum jt_thread_state state)
{
	struct jt_thread *t = thread_new(&tr, p, tid);

	t->state = state;
	return t;
}

/* Clears the log, so that a test checks the requests of one step at a time. */
static void
log_clear(void)
{
	fk.log[0] = '\0';
}

static void
log_is(const char *want, const char *name)
{
	int same = strcmp(fk.log, want) == 0;

	ok(same, "%s", name);
	if (!same)
		printf("#   got:  %s\n#   want: %s\n", fk.log, want);
}

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
	tr.opt = &opt;
	tthread_init(&tr.tthreads, &tr, 0);
	tthread_lock(&tr.tthreads);	/* as the loop holds it for the stop core */
	kops = &fk_kops;
	test_exit_during_stopall();
	test_exit_hit_while_collecting();
	test_handover_races_signal();
	test_handover_freed_in_transit();
	test_vfork_parent_child_held();
	test_child_exit_during_stopall();
	test_clone_child_first();
	tthread_clear_waited(&tr.tthreads.t[0]);
	tthread_unlock(&tr.tthreads);
	return tap_done();
}
