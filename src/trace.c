/* trace.c - what a stop means: sorts each stop into its kind and acts on it, alone or with the whole process stopped. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "arch.h"
#include "regs.h"
#include "call.h"
#include "elfhdr.h"
#include "image.h"
#include "mem.h"
#include "proc.h"
#include "procfs.h"
#include "sigtrap.h"
#include "snapshot.h"
#include "trace.h"
#include "util.h"
#include "worker.h"

/* Restarts a stopped thread. ESRCH means it is gone already, which is not an error. */
static int
trace_resume(pid_t tid, int sig)
{
	if (ptrace(PTRACE_CONT, tid, 0L, (long)sig) < 0 && errno != ESRCH) {
		perror_msg("ptrace(PTRACE_CONT, %d)", tid);
		return -1;
	}
	return 0;
}

/* Reads the Tgid and PPid lines of /proc/TID/status. Returns 0 or -1. */
static int
trace_read_ids(pid_t tid, pid_t *tgid, pid_t *ppid)
{
	char buf[32];

	*tgid = *ppid = 0;
	if (procfs_status_field(tid, "Tgid", buf, sizeof(buf)) == 0)
		*tgid = atoi(buf);
	if (procfs_status_field(tid, "PPid", buf, sizeof(buf)) == 0)
		*ppid = atoi(buf);
	return *tgid ? 0 : -1;
}

/*
 * A forked child inherited our trap bytes but is not traced (no -f): give it
 * back its original code and let it go, so it runs exactly as it would.
 */
static void
trace_release_child(struct jt_proc *parent, pid_t pid)
{
	/* --pin: it inherited the pinned affinity of the thread that forked; not ours to keep. */
	if (parent->pin_orig_set && cpu_unpin(pid, &parent->pin_orig) < 0 && errno != ESRCH)
		perror_msg("child %d: cannot give its CPU affinity back", pid);
	if (bp_restore_into(&parent->bps, pid) < 0)
		debug_msg("could not clean breakpoints out of child %d", pid);
	if (ptrace(PTRACE_DETACH, pid, 0L, 0L) < 0 && errno != ESRCH)
		perror_msg("ptrace(PTRACE_DETACH, %d)", pid);
}

static void trace_detach_proc(struct jt_tracer *tr, struct jt_proc *p);

void
trace_unpin(struct jt_thread *t)
{
	if (t->pin_cpu >= 0 && cpu_unpin(t->tid, &t->pin_saved) < 0 && errno != ESRCH)
		perror_msg("thread %d: cannot give its CPU affinity back", t->tid);
	t->pin_cpu = -1;
}

/*
 * -f: a forked child gets its own tables. Its memory is a copy of the
 * parent's, trap bytes included: clean it and set it up like a new image.
 * Blocks it inherited are unknown to it, like blocks before an attach.
 */
static struct jt_thread *
trace_follow_child(struct jt_tracer *tr, struct jt_proc *parent, pid_t pid)
{
	struct jt_proc *p = proc_new(tr, pid, parent->command);
	struct jt_thread *t = thread_new(tr, p, pid);

	p->unseen_blocks = 1;
	/* fork copies the signal dispositions, handler addresses still valid in the copy. */
	p->sigtrap = parent->sigtrap;
	/* --pin: it inherited its parent's pinned affinity; its own is the parent's from before. */
	p->pin_orig_set = parent->pin_orig_set;
	p->pin_orig = parent->pin_orig;
	bp_restore_into(&parent->bps, pid);
	if (image_setup(p) < 0) {
		trace_detach_proc(tr, p);
		return NULL;
	}
	return t;
}

/* A stop from a tid we have not seen: a new thread, or a new process from fork/vfork/clone. */
static struct jt_thread *
trace_adopt(struct jt_tracer *tr, pid_t tid)
{
	pid_t tgid, ppid;
	struct jt_proc *p, *parent;

	if (trace_read_ids(tid, &tgid, &ppid) < 0)
		return NULL;
	if ((p = proc_find(tr, tgid)))
		return thread_new(tr, p, tid);
	parent = proc_find(tr, ppid);
	if (!parent)
		parent = tr->procs;
	if (!parent)
		return NULL;
	if (syscall(SYS_kcmp, parent->pid, tid, KCMP_VM, 0L, 0L) == 0) {
		/* vfork or CLONE_VM: it runs in the parent's memory, over our trap bytes. */
		p = proc_new(tr, tid, parent->command);
		p->vfork_child = 1;
		p->vm_owner = parent;
		p->pin_orig_set = parent->pin_orig_set;
		p->pin_orig = parent->pin_orig;
		return thread_new(tr, p, tid);
	}
	if (!tr->opt->follow_forks) {
		trace_release_child(parent, tid);
		return NULL;
	}
	return trace_follow_child(tr, parent, tid);
}

/* Does the restart trace_trap held back (see struct jt_worker). No lock needed: it is our own tracee. */
void
trace_flush(struct jt_worker *w)
{
	pid_t tid = w->resume_tid;

	if (!tid)
		return;
	w->resume_tid = 0;
	if (arch_regs_set(tid, &w->resume_regs) < 0 && errno != ESRCH)
		perror_msg("thread %d: cannot set its registers", tid);
	trace_resume(tid, 0);
}

/* Where t goes on after our breakpoint: see trace_trap_sent. */
static void
trace_note_resume(struct jt_thread *t, const arch_regs *regs)
{
	t->resume_pc = arch_pc(regs);
	t->resume_sp = arch_sp(regs);
}

/*
 * Non-zero when the SIGTRAP stop tid sits in was sent by the kernel: during
 * our single-step that is the end of the step. The program's own raise()
 * or tgkill() has si_code <= 0. Not TRAP_TRACE alone: on some hosts (seen
 * on a KVM guest, once in some 100,000 steps) a finished step reports
 * TRAP_BRKPT, the debug status register's single-step bit not set.
 */
static int
trace_is_kernel_trap(pid_t tid)
{
	siginfo_t si;

	return ptrace(PTRACE_GETSIGINFO, tid, 0L, &si) == 0 && si.si_code > 0;
}

/*
 * Steps t over the original instruction at its breakpoint while every other
 * thread of the process is stopped, so none can run through the spot while
 * the trap byte is out. Signals that arrive meanwhile are held for later.
 * The trap byte goes back only once the step is over: put back while the
 * step is still under way, it is what t runs, and t enters the function a
 * second time, hijacking its own trampoline. Returns 0, or -1 when t ended
 * meanwhile (*end then holds the wait status nobody else will see).
 */
static int
trace_step_one(struct jt_thread *t, int *end)
{
	struct jt_bp *bp = bp_find(&t->proc->vm_owner->bps, t->step_addr);
	uint8_t trap = ARCH_TRAP_BYTE;
	int status, ret = 0, extra[8], nextra = 0;
	arch_regs regs;

	t->step_pending = 0;
	if (!bp || mem_write(t->tid, bp->addr, bp->insn.bytes, 1) < 0)
		return 0;
	debug_msg("stepping thread %d over %#lx", t->tid, (unsigned long)bp->addr);
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, t->tid, 0L, 0L) < 0 || util_wait_tid(t->tid, &status) < 0)
			break;	/* not stopped any more: gone */
		if (!WIFSTOPPED(status)) {
			*end = status;
			ret = -1;
			break;
		}
		if (status >> 16)
			continue;	/* an interrupt or group-stop came first: step again */
		if (WSTOPSIG(status) == SIGTRAP && trace_is_kernel_trap(t->tid))
			break;
		/* A signal for the program: held, delivered when t is restarted. */
		if (!t->pending_sig)
			t->pending_sig = WSTOPSIG(status);
		else if (t->pending_sig != WSTOPSIG(status) && nextra < (int)ARRAY_SIZE(extra))
			extra[nextra++] = WSTOPSIG(status);
	}
	mem_write(t->tid, bp->addr, &trap, 1);
	if (ret < 0)
		return ret;
	if (arch_regs_get(t->tid, &regs) == 0)
		trace_note_resume(t, &regs);
	/* The step's trap resets the program's SIGTRAP handler as our int3 does. */
	if (t->proc->sigtrap.kind != SIGTRAP_UNKNOWN)
		sigtrap_repair(t);
	/* A second signal is queued again, to arrive once t runs (queued now, it would stop the step again). */
	for (int i = 0; i < nextra; i++)
		syscall(SYS_tgkill, t->proc->pid, t->tid, extra[i]);
	return 0;
}

static void trace_step_locked(struct jt_tracer *tr, struct jt_thread *t);

/*
 * Where t, stopped and about to be restarted, should go to keep the busy
 * threads spread over the tracer threads: the one with the fewest active
 * tracees when t's own has two more; NULL to stay. The main thread of each
 * process stays with the tracer thread that traces it, so its exit is seen
 * by its parent.
 */
static struct jt_worker *
trace_rebalance_due(struct jt_tracer *tr, struct jt_thread *t)
{
	struct jt_worker *to;

	if (tr->nworkers <= 1 || tr->recall || t->tid == t->proc->pid || t->proc->vfork_child)
		return NULL;
	to = worker_least_loaded(tr);
	if (to == t->owner || t->owner->nactive < to->nactive + 2)
		return NULL;
	return to;
}

/* Hands t over where trace_rebalance_due says. Returns 1 when it was handed over. */
static int
trace_rebalance(struct jt_tracer *tr, struct jt_thread *t)
{
	struct jt_worker *to = trace_rebalance_due(tr, t);

	if (!to)
		return 0;
	t->stopped = 1;
	if (worker_send(t, to) == 0)
		return 1;
	t->stopped = 0;
	return 0;
}

static void trace_exited(struct jt_tracer *tr, pid_t tid, int status);

/* Steps t over its breakpoint with the others running (the fallback), then restarts it. */
static void
trace_step_over(struct jt_tracer *tr, struct jt_thread *t)
{
	int end;

	if (trace_step_one(t, &end) < 0)
		trace_exited(tr, t->tid, end);
	else
		trace_restart(tr, t);
}

/*
 * t must step over a breakpoint with every other thread of its process
 * stopped. Only worker 0 stops a whole process, so another tracer thread
 * hands t to it.
 */
static void
trace_step_or_send(struct jt_tracer *tr, struct jt_thread *t)
{
	if (t->owner->index == 0) {
		trace_step_locked(tr, t);
		return;
	}
	t->stopped = t->want_stop = 1;
	if (worker_send(t, &tr->workers[0]) == 0)
		return;
	/* Cannot hand it over: step it with the others running, the old way, rather than stall it. */
	error_msg("thread %d: stepping over a breakpoint without stopping the other threads", t->tid);
	trace_step_over(tr, t);
}

/*
 * Non-zero when a SIGTRAP stop one past breakpoint bp is a SIGTRAP sent to
 * t (raise, kill), not our trap byte. Only possible where we restarted t
 * at that very pc, past a one-byte instruction we ran for it, and the
 * signal came before t ran anything: pc and stack pointer are still the
 * ones we let it go with. (Back at the breakpoint through a return to the
 * trampoline the pc is the same, but not the stack pointer: a one-byte
 * entry instruction is a push.) Then an int3 gives si_code SI_KERNEL, a
 * sent signal SI_USER or SI_TKILL. Asked only then, so the usual hit costs
 * no system call.
 */
static int
trace_trap_sent(const struct jt_thread *t, const struct jt_bp *bp, const arch_regs *regs)
{
	siginfo_t si;

	if (bp->insn.len != ARCH_TRAP_PC_ADJUST || arch_pc(regs) != t->resume_pc || arch_sp(regs) != t->resume_sp)
		return 0;
	return ptrace(PTRACE_GETSIGINFO, t->tid, 0L, &si) == 0 && si.si_code != SI_KERNEL;
}

/*
 * A SIGTRAP stop. Returns 1 when it was ours (the thread is restarted unless
 * collecting, when it is left stopped with its registers ready), 0 when it
 * is a real SIGTRAP for the program.
 */
static int
trace_trap(struct jt_tracer *tr, struct jt_thread *t, int collecting)
{
	struct jt_proc *p = t->proc;
	arch_regs regs;
	struct jt_bp *bp;
	uint64_t addr;

	if (t->owner->regs_tid == t->tid)
		regs = t->owner->regs;
	else if (arch_regs_get(t->tid, &regs) < 0)
		return errno == ESRCH;
	t->owner->regs_tid = 0;
	addr = arch_pc(&regs) - ARCH_TRAP_PC_ADJUST;
	bp = bp_find(&p->vm_owner->bps, addr);
	if (!bp || !bp->inserted || trace_trap_sent(t, bp, &regs))
		return 0;
	/* Before the registers are held back for the restart: the repair runs code in t. */
	if (p->sigtrap.kind != SIGTRAP_UNKNOWN)
		sigtrap_hit(t);
	tr->events++;
	t->owner->events++;
	if (!t->active) {
		t->active = 1;
		t->owner->nactive++;
	}
	arch_set_pc(&regs, addr);
	if (call_on_trap(t, bp, &regs, tr->opt) == CALL_STEP) {
		/* The event is recorded; what is left is running the displaced instruction. */
		arch_regs_set(t->tid, &regs);
		t->step_pending = 1;
		t->step_addr = addr;
		t->resume_pc = 0;	/* trace_step_one notes where the step ends */
		if (!collecting)
			trace_step_or_send(tr, t);
		return 1;
	}
	trace_note_resume(t, &regs);
	if (!collecting && t->owner->resume_tid == 0 && !trace_rebalance_due(tr, t)) {
		/* The common case: set the registers and restart it once the lock is released. */
		t->owner->resume_tid = t->tid;
		t->owner->resume_regs = regs;
		return 1;
	}
	if (arch_regs_set(t->tid, &regs) < 0 && errno != ESRCH)
		perror_msg("thread %d: cannot set its registers", t->tid);
	if (!collecting && !trace_rebalance(tr, t))
		trace_resume(t->tid, 0);
	return 1;
}

/* Forgets every thread of p but keep (the one that survives an execve). */
static void
trace_drop_threads(struct jt_tracer *tr, struct jt_proc *p, struct jt_thread *keep)
{
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++) {
		struct jt_thread *t = tr->threads[i], *next;

		for (; t; t = next) {
			next = t->hnext;
			if (t->proc == p && t != keep)
				thread_free(tr, t);
		}
	}
}

static void
trace_detach_proc(struct jt_tracer *tr, struct jt_proc *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++) {
		struct jt_thread *t = tr->threads[i], *next;

		for (; t; t = next) {
			next = t->hnext;
			if (t->proc != p)
				continue;
			trace_unpin(t);
			ptrace(PTRACE_DETACH, t->tid, 0L, 0L);
			thread_free(tr, t);
		}
	}
	if (p->pid != tr->main_pid)
		proc_free(tr, p);
}

/* After an exec the process is another program: label it with its executable. */
static void
trace_name_proc(struct jt_proc *p)
{
	char link[64], exe[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", p->pid);
	if ((n = readlink(link, exe, sizeof(exe) - 1)) <= 0)
		return;
	exe[n] = 0;
	free(p->command);
	p->command = xstrdup(exe);
}

/*
 * Non-zero when p exec'd a program of another architecture (a 32-bit one:
 * only x86-64 programs have the symbols and registers we expect); what says
 * what it is.
 */
static int
trace_exec_foreign(const struct jt_proc *p, char *what, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", p->pid);
	return elfhdr_classify_file(path, what, size) == ELFHDR_OTHER_ARCH;
}

/* An image we cannot trace: let the program run on untraced, or end the run if it is the first. */
static void
trace_exec_untraceable(struct jt_tracer *tr, struct jt_proc *p, const char *foreign)
{
	int attached_main = p->pid == tr->main_pid && p->attached;

	if (!tr->image_seen) {
		/* A #! script whose interpreter launch_check could not look at. */
		if (foreign)
			error_msg("cannot trace '%s': it is %s; jmptrace traces %s programs only",
				  p->command, foreign, elfhdr_our_arch);
		kill(p->pid, SIGKILL);
		tr->fatal = 1;
		return;
	}
	if (foreign)
		error_msg("process %d: %s is %s; jmptrace traces %s programs only: it runs on untraced",
			  p->pid, p->command, foreign, elfhdr_our_arch);
	else
		error_msg("process %d: the new program cannot be traced; letting it run untraced", p->pid);
	trace_detach_proc(tr, p);	/* frees p unless it is the main process */
	if (attached_main) {
		/*
		 * Not our child: its end will never be reported to us. Its report
		 * is written now, and the run ends as a detach does.
		 */
		snapshot_write(tr, p, "exec");
		tr->detached = 1;
	}
}

/* execve replaced the image of t's process: start over on the new one. */
static void
trace_exec(struct jt_tracer *tr, struct jt_thread *t)
{
	struct jt_proc *p = t->proc;
	unsigned long old_tid = 0;
	char what[64];

	ptrace(PTRACE_GETEVENTMSG, t->tid, 0L, &old_tid);
	mem_forget(p->pid);
	trace_drop_threads(tr, p, t);
	/* A non-leader that execs takes over the leader's tid. */
	if (t->tid != p->pid) {
		struct jt_thread *nt = thread_new(tr, p, p->pid);

		/* The same thread under a new tid: its affinity (--pin) is still the one we saved. */
		nt->pin_cpu = t->pin_cpu;
		nt->pin_saved = t->pin_saved;
		nt->born_traced = t->born_traced;
		thread_free(tr, t);
		t = nt;
	}
	t->ncalls = 0;
	if (p->vfork_child && tr->opt->follow_forks) {
		/* It leaves its parent's memory at exec and becomes a process of its own. */
		p->vfork_child = 0;
		p->vm_owner = p;
	} else if (p->vfork_child || (p->pid != tr->main_pid && !tr->opt->follow_forks)) {
		/* A vfork child leaves its parent's memory at exec: it is no longer ours. */
		trace_detach_proc(tr, p);
		return;
	}
	proc_reset_image(p);
	if (tr->image_seen || p->pid != tr->main_pid)
		trace_name_proc(p);
	if (tr->detaching) {
		/*
		 * About to be let go: give the new image none of our trap bytes. It
		 * is not held here, inside execve (see trace_collect); it is stopped
		 * again on its way out.
		 */
		p->exec_unseen = 1;
		trace_resume(t->tid, 0);
		return;
	}
	if (trace_exec_foreign(p, what, sizeof(what))) {
		trace_exec_untraceable(tr, p, what);
		return;
	}
	if (image_setup(p) < 0) {
		trace_exec_untraceable(tr, p, NULL);
		return;
	}
	tr->image_seen = 1;
	trace_resume(t->tid, 0);
}

static int
trace_is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/*
 * t stopped at a fork, vfork or clone event: the child exists, traced by
 * us, and stops before its first instruction. Waits for that stop and
 * handles it now, so that no child is ever traced without being in our
 * tables: a detach that came before its first stop was reported would
 * leave it with our trap bytes (a fork copies them), untraced.
 */
static void
trace_take_child(struct jt_tracer *tr, struct jt_thread *t, unsigned event)
{
	unsigned long child = 0;
	int status;
	pid_t r;

	if (event != PTRACE_EVENT_FORK && event != PTRACE_EVENT_VFORK && event != PTRACE_EVENT_CLONE)
		return;
	/* Once resumed, a vfork parent waits in the kernel until its child execs or exits. */
	t->vforking = event == PTRACE_EVENT_VFORK;
	if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0L, &child) < 0 || child == 0 || thread_find(tr, (pid_t)child))
		return;
	/* ECHILD: its first stop was seen already and it was let go (a fork without -f). */
	do
		r = waitpid((pid_t)child, &status, __WALL | __WNOTHREAD);
	while (r < 0 && errno == EINTR);
	if (r == (pid_t)child)
		trace_dispatch(tr, r, status);
}

static void
trace_event(struct jt_tracer *tr, struct jt_thread *t, unsigned event, int sig)
{
	switch (event) {
	case PTRACE_EVENT_EXEC:
		trace_exec(tr, t);
		return;
	case PTRACE_EVENT_STOP:
		if (trace_is_stop_signal(sig)) {
			/* Group-stop: stay stopped the way the program expects, but keep seeing events. */
			if (ptrace(PTRACE_LISTEN, t->tid, 0L, 0L) < 0 && errno != ESRCH)
				perror_msg("ptrace(PTRACE_LISTEN, %d)", t->tid);
			return;
		}
		trace_resume(t->tid, 0);
		return;
	default:	/* CLONE, FORK, VFORK, VFORK_DONE */
		trace_take_child(tr, t, event);
		trace_resume(t->tid, 0);
		return;
	}
}

/* Non-zero when the program catches sig (SigCgt in /proc/TID/status). */
static int
trace_sig_caught(pid_t tid, int sig)
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
trace_note_handler(struct jt_thread *t, int sig)
{
	arch_regs regs;

	if (!trace_sig_caught(t->tid, sig) || arch_regs_get(t->tid, &regs) < 0)
		return;
	if (call_settle(t, &regs)) {
		debug_msg("signal %d: thread %d had returned to a trampoline; return finished first", sig, t->tid);
		if (arch_regs_set(t->tid, &regs) < 0)
			return;
	}
	call_signal_delivered(t, arch_sp(&regs));
}

/* Non-zero when a SIGTRAP is queued for the thread itself (SigPnd in /proc/TID/status). */
static int
trace_trap_queued(pid_t tid)
{
	char buf[32];

	if (procfs_status_field(tid, "SigPnd", buf, sizeof(buf)) < 0)
		return 0;
	return (strtoull(buf, NULL, 16) >> (SIGTRAP - 1)) & 1;
}

static void trace_interrupt(struct jt_tracer *tr, struct jt_thread *t);

/* While stopping every thread, a stop is noted instead of restarted. */
static void
trace_collect(struct jt_tracer *tr, struct jt_thread *t, int status)
{
	int sig = WSTOPSIG(status);
	unsigned event = (unsigned)status >> 16;

	t->stopped = 1;
	if (event == PTRACE_EVENT_STOP) {
		t->group_stop = trace_is_stop_signal(sig);
		if (!t->group_stop && trace_trap_queued(t->tid)) {
			/*
			 * It ran an int3 just as we interrupted it: the interrupt stop is
			 * reported before the queued SIGTRAP. Let the SIGTRAP come (and be
			 * handled as ours); left queued, it would hit the program after
			 * the detach.
			 */
			t->stopped = 0;
			trace_resume(t->tid, 0);
		}
		return;
	}
	if (event == PTRACE_EVENT_EXEC) {
		pid_t pid = t->proc->pid;

		/* Our breakpoints went with the old image: nothing may be written by its table now. */
		t->stopped = t->want_stop = 0;
		trace_exec(tr, t);
		/* It is resumed on the new image (as the leader); stop it again, as below. */
		if ((t = thread_find(tr, pid)))
			trace_interrupt(tr, t);
		return;
	}
	if (event) {
		/*
		 * A fork, vfork or clone event stops it inside the system call,
		 * where it must not be held: it could not be parked for a hand-over
		 * (the call's return value overwrites the registers set for that)
		 * and its registers are not the program's. This stop used up our
		 * interrupt: let it finish the call and interrupt it again, so that
		 * it stops on its way back, before any instruction of its own.
		 */
		trace_take_child(tr, t, event);
		t->stopped = t->want_stop = 0;
		trace_resume(t->tid, 0);
		trace_interrupt(tr, t);
		return;
	}
	if (sig == SIGTRAP && trace_trap(tr, t, 1))
		return;
	t->pending_sig = sig;
}

static void trace_exited(struct jt_tracer *tr, pid_t tid, int status);

static void
trace_stopped(struct jt_tracer *tr, struct jt_thread *t, int status)
{
	int sig = WSTOPSIG(status), ret, end;
	unsigned event = (unsigned)status >> 16;

	t->vforking = 0;
	if (t->want_stop) {
		trace_collect(tr, t, status);
		return;
	}
	if (event) {
		trace_event(tr, t, event, sig);
		return;
	}
	if (sig == SIGTRAP && trace_trap(tr, t, 0))
		return;
	if (sig == SIGTRAP)
		sigtrap_learn(t);	/* the program's own: its handler is the one to keep */
	if (t->ncalls > 0)
		trace_note_handler(t, sig);
	if (sig == SIGTRAP && (ret = sigtrap_deliver(t, &end)) >= 0) {
		if (ret)
			trace_exited(tr, t->tid, end);
		return;
	}
	/* A signal for the program: deliver it unchanged. */
	trace_resume(t->tid, sig);
}

/* Records how process p ended, from its wait status. */
static void
trace_set_exit(struct jt_proc *p, int status)
{
	p->exited = 1;
	if (WIFEXITED(status))
		p->exit_status = WEXITSTATUS(status);
	else
		p->killed_by = WTERMSIG(status);
}

static void
trace_exited(struct jt_tracer *tr, pid_t tid, int status)
{
	struct jt_thread *t = thread_find(tr, tid);
	struct jt_proc *p;

	if (!t) {
		/*
		 * The main process may have been let go (an untraceable exec); it
		 * is still our child, and its report must say how it ended.
		 */
		if (tid == tr->main_pid) {
			if ((p = proc_find(tr, tid)))
				trace_set_exit(p, status);
			tr->main_exited = 1;
			tr->main_status = status;
		}
		return;
	}
	p = t->proc;
	thread_free(tr, t);
	if (tid != p->pid)
		return;
	trace_set_exit(p, status);
	if (p->pid == tr->main_pid) {
		tr->main_exited = 1;
		tr->main_status = status;
		return;
	}
	/* An image exec'd during the detach was never traced: a snapshot of it would read 0 calls. */
	if (tr->opt->follow_forks && !p->vfork_child && !p->exec_unseen)
		snapshot_write(tr, p, "exit");
	trace_drop_threads(tr, p, NULL);
	proc_free(tr, p);
}

/* Calls fn on every thread of p; fn may free the thread. */
static void
trace_each_thread(struct jt_tracer *tr, struct jt_proc *p, void (*fn)(struct jt_tracer *, struct jt_thread *))
{
	pid_t pid = p->pid;

	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++) {
		struct jt_thread *t = tr->threads[i], *next;

		for (; t; t = next) {
			next = t->hnext;
			if (t->proc != p)
				continue;
			fn(tr, t);
			/* A followed process whose leader ended is freed with all its threads: next too. */
			if (proc_find(tr, pid) != p)
				return;
		}
	}
}

static void
trace_interrupt(struct jt_tracer *tr, struct jt_thread *t)
{
	if (t->stopped || t->want_stop)
		return;
	t->want_stop = 1;
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0L, 0L) < 0 && errno == ESRCH)
		t->stopped = 1;	/* gone; its exit is reported later */
}

int
trace_all_stopped(struct jt_tracer *tr, struct jt_proc *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		for (struct jt_thread *t = tr->threads[i]; t; t = t->hnext)
			if (t->proc == p && !t->stopped && !t->vforking)
				return 0;
	return 1;
}

/* Handles one wait status; threads that want to stop are collected, others run on. */
void
trace_dispatch(struct jt_tracer *tr, pid_t tid, int status)
{
	struct jt_thread *t;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		trace_exited(tr, tid, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	t = thread_find(tr, tid);
	if (!t) {
		if (!(t = trace_adopt(tr, tid)))
			return;
		t->born_traced = 1;
	}
	trace_stopped(tr, t, status);
}

/*
 * Non-zero while some thread of p is traced by, or on its way to, a tracer
 * thread other than self. A vfork parent waiting in the kernel does not
 * count: it cannot stop until its child execs or exits, and the child may be
 * the very thread we hold stopped; it cannot run either, so it is as good as
 * stopped (trace_all_stopped says so too). Waiting for it was a deadlock.
 */
int
trace_elsewhere(struct jt_tracer *tr, struct jt_proc *p, struct jt_worker *self)
{
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		for (struct jt_thread *t = tr->threads[i]; t; t = t->hnext)
			if (t->proc == p && (t->in_transit || (t->owner != self && !t->vforking)))
				return 1;
	return 0;
}

/*
 * A thread handed to the calling tracer thread arrived, stopped. Threads of
 * a process being recalled are held; one that must step over a breakpoint
 * is stepped (by worker 0); any other runs on.
 */
void
trace_arrived(struct jt_tracer *tr, struct jt_thread *t)
{
	t->stopped = t->want_stop = 1;
	if (tr->recall == t->proc || tr->detaching)
		return;
	if (!t->step_pending) {
		trace_restart(tr, t);
		return;
	}
	if (t->owner->index == 0 && tr->recall) {
		/* Worker 0 is busy recalling another process: step this one after. */
		t->inext = tr->deferred;
		tr->deferred = t;
		return;
	}
	trace_step_or_send(tr, t);
}

/* Waits up to ms on tr->cond (tr->lock held): for a hand-over, or for time to pass. */
void
trace_cond_wait(struct jt_tracer *tr, unsigned ms)
{
	struct timespec ts;

	trace_flush(worker_self());
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&tr->cond, &tr->lock, &ts);
}

/* Worker 0: brings every thread of p over from the other tracer threads, stopped. */
void
trace_recall(struct jt_tracer *tr, struct jt_proc *p)
{
	struct jt_worker *self = worker_self();
	pid_t pid = p->pid;
	int rounds = 0;

	if (tr->nworkers <= 1 || !self || self->index != 0)
		return;
	tr->recall = p;
	while (proc_find(tr, pid) == p) {
		worker_receive(self, trace_arrived);
		if (!trace_elsewhere(tr, p, self))
			break;
		if (++rounds > 500) {	/* 10 s of 20 ms waits */
			error_msg("process %d: some threads could not be brought back from the other tracer threads", pid);
			break;
		}
		/* Wake them each round: a wake that lands just before a worker blocks is lost. */
		worker_wake_all(tr);
		trace_cond_wait(tr, 20);
	}
	tr->recall = NULL;
}

/* Another tracer thread: while worker 0 recalls a process, stop our threads of it and hand them over. */
void
trace_serve_recall(struct jt_tracer *tr, struct jt_worker *w)
{
	if (!tr->recall)
		return;
	trace_flush(w);
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++) {
		struct jt_thread *t = tr->threads[i], *next;

		for (; t; t = next) {
			next = t->hnext;
			if (t->owner != w || t->proc != tr->recall || t->in_transit)
				continue;
			if (t->stopped) {
				if (worker_send(t, &tr->workers[0]) < 0)
					debug_msg("thread %d: cannot hand it over for a recall", t->tid);
			} else if (!t->want_stop) {
				t->want_stop = 1;
				if (ptrace(PTRACE_INTERRUPT, t->tid, 0L, 0L) < 0 && errno == ESRCH)
					t->stopped = 1;
			}
		}
	}
}

int
trace_wait_stopped(struct jt_tracer *tr, struct jt_proc *p)
{
	pid_t pid = p->pid;

	trace_flush(worker_self());
	trace_recall(tr, p);
	if (proc_find(tr, pid) != p)
		return -1;

	/* Bounded: a thread that never stops (it should not happen) must not hang the detach. */
	for (int rounds = 0; rounds < 100000; rounds++) {
		int status;
		pid_t tid;

		trace_each_thread(tr, p, trace_interrupt);
		if (trace_all_stopped(tr, p))
			return 0;
		trace_flush(worker_self());
		/* __WNOTHREAD: only our own tracees; the other tracer threads wait for theirs. */
		tid = wait4(-1, &status, __WALL | __WNOTHREAD, NULL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		trace_dispatch(tr, tid, status);
		/* The process may have exited meanwhile, and a followed child's tables be freed. */
		if (proc_find(tr, pid) != p || (tr->main_exited && pid == tr->main_pid))
			return -1;
	}
	return -1;
}

void
trace_restart(struct jt_tracer *tr, struct jt_thread *t)
{
	int sig = t->pending_sig;

	if (!t->stopped) {
		/* A vfork parent counted as stopped: its stop, when it comes, is not one we wait for. */
		t->want_stop = 0;
		return;
	}
	t->stopped = t->want_stop = 0;
	t->pending_sig = 0;
	if (t->group_stop) {
		t->group_stop = 0;
		if (ptrace(PTRACE_LISTEN, t->tid, 0L, 0L) < 0 && errno != ESRCH)
			perror_msg("ptrace(PTRACE_LISTEN, %d)", t->tid);
		return;
	}
	trace_resume(t->tid, sig);
}

static void
trace_step_if_pending(struct jt_tracer *tr, struct jt_thread *t)
{
	int end;

	if (t->step_pending && t->stopped && trace_step_one(t, &end) < 0)
		trace_exited(tr, t->tid, end);
}

void
trace_resume_all(struct jt_tracer *tr, struct jt_proc *p)
{
	/* Everyone is stopped here, so pending steps over breakpoints are safe now. */
	trace_each_thread(tr, p, trace_step_if_pending);
	trace_each_thread(tr, p, trace_restart);
}

/* Stops the other threads, steps t over its breakpoint, and lets everyone go again. */
static void
trace_step_locked(struct jt_tracer *tr, struct jt_thread *t)
{
	struct jt_proc *p = t->proc;
	pid_t pid = p->pid;

	t->stopped = t->want_stop = 1;
	/* While we wait, t may exit and be freed, and a followed child's p with it. */
	if ((p->nthreads > 1 || p->vfork_child) && trace_wait_stopped(tr, p) < 0 && proc_find(tr, pid) != p)
		return;
	trace_resume_all(tr, p);
}
