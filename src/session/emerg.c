/* emerg.c - the last way out: a fault or an exhausted allocator in jmptrace lets every traced thread go as it was. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bp.h"
#include "outfile.h"
#include "emerg.h"
#include "proc.h"
#include "sigsafe.h"
#include "regs.h"
#include "testfault.h"
#include "thread.h"
#include "tracer.h"
#include "tthread.h"
#include "uprobes.h"
#include "util.h"

/*
 * Everything here runs in a signal handler, possibly while another thread
 * of ours is half-way through changing the same tables, so it reads them
 * and never writes them, calls only system calls, takes no lock and
 * allocates nothing. The tables are left as they are: jmptrace dies next.
 */

/* The signal that makes a tracer thread let its own tracees go: only it may (ptrace ties a tracee to it). */
#define EMERG_SIG (SIGRTMIN + 2)
#define EMERG_STACK (64 * 1024)		/* an alternate signal stack, per thread */
#define EMERG_STOP_MS 500		/* how long a running tracee is given to stop */
#define EMERG_PEERS_MS 10000		/* how long the other tracer threads are given */

static struct jt_tracer *emerg_tr;
/* The kernel thread id that runs the way out, 0 before. */
static int emerg_owner;
/* Tracer thread i let its tracees go. */
static volatile sig_atomic_t emerg_done[JT_MAX_TTHREADS];
/*
 * Tracer thread i is in the way out, doing nothing else: no step over a
 * breakpoint of its can put a trap byte back once the owner has taken them
 * out. The owner may be no tracer thread (the writer, the uprobe reader)
 * while every tracer thread handles stops.
 */
static volatile sig_atomic_t emerg_arrived[JT_MAX_TTHREADS];
/* The owner has put back the return addresses and the bytes: the tracees may go. */
static volatile sig_atomic_t emerg_memory_done;

/* Puts back c's return address if its slot still holds our trampoline. */
static void
emerg_unhijack_call(int fd, const struct jt_call *c)
{
	uint64_t cur, ret = c->ret_addr;

	if (c->fn == CALL_SIGNAL || !c->trampoline)
		return;
	if (sigsafe_rw(fd, c->entry_sp, &cur, sizeof(cur), 0) == 0 && cur == c->trampoline)
		sigsafe_rw(fd, c->entry_sp, &ret, sizeof(ret), 1);
}

/*
 * Puts back the return address of each call in flight whose slot still
 * holds our trampoline. Then calls[ncalls], last, so that it never
 * overwrites a call in flight's: its slot may have been written by a
 * tracer thread that the way out stopped before it counted the call.
 */
static void
emerg_unhijack(int fd, const struct jt_thread *t)
{
	int n = t->ncalls;

	if (n < 0 || n > JT_MAX_CALLS)
		return;
	for (int i = n - 1; i >= 0; i--)
		emerg_unhijack_call(fd, &t->calls[i]);
	if (n < JT_MAX_CALLS)
		emerg_unhijack_call(fd, &t->calls[n]);
}

/*
 * In every address space we changed: the return addresses first, so that
 * a thread that returns meanwhile goes back to its caller, not through an
 * entry whose trap byte is gone into a second call; then the trap bytes.
 */
static void
emerg_restore_memory(struct jt_tracer *tr)
{
	for (struct jt_proc *p = tr->procs; p; p = p->next) {
		int fd;

		if (p->exited || (fd = sigsafe_mem_open(p->pid)) < 0)
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
			for (struct jt_thread *t = tr->threads[i]; t; t = t->hnext)
				if (t->proc && t->proc->vm_owner == p->vm_owner)
					emerg_unhijack(fd, t);
		if (p->vm_owner == p) {
			for (size_t i = 0; i < p->bps.n; i++) {
				struct jt_bp *bp = p->bps.v[i];

				if (bp->inserted)
					sigsafe_rw(fd, bp->addr, bp->insn.bytes, 1, 1);
			}
			/* One being inserted when the way out came. */
			if (p->bps.pending) {
				uint8_t byte = p->bps.pending_byte;

				sigsafe_rw(fd, p->bps.pending_addr, &byte, 1, 1);
			}
		}
		close(fd);
	}
}

/* Non-zero when addr holds one of the trap bytes of t's address space. */
static int
emerg_is_bp(const struct jt_thread *t, uint64_t addr)
{
	const struct jt_proc *p = t->proc ? t->proc->vm_owner : NULL;

	if (!p)
		return 0;
	for (size_t i = 0; i < p->bps.n; i++)
		if (p->bps.v[i]->addr == addr && p->bps.v[i]->inserted)
			return 1;
	return 0;
}

/*
 * Puts regs of t, stopped, where it would be untraced. A return through
 * our trampoline (the entry's trap, with the stack pointer a return from
 * a call in flight leaves) goes to the real return address; a trap at an
 * entry of ours runs the entry's instruction again, now that its byte is
 * back. Returns 1 when regs changed. trap_stop: the stop is an int3's.
 */
static int
emerg_fix_regs(const struct jt_thread *t, arch_regs *regs, int trap_stop)
{
	uint64_t pc = arch_pc(regs), sp = arch_sp(regs);

	/*
	 * calls[ncalls] too: the call whose return is being recorded was taken
	 * off already (call_return), and the way out may have come from inside
	 * its recording (an allocation that failed).
	 */
	for (int i = t->ncalls < JT_MAX_CALLS ? t->ncalls : t->ncalls - 1; i >= 0; i--) {
		const struct jt_call *c = &t->calls[i];

		if (c->fn == CALL_SIGNAL || sp != arch_sp_after_ret(c->entry_sp))
			continue;
		if (pc == c->trampoline || (trap_stop && pc - ARCH_TRAP_PC_ADJUST == c->trampoline)) {
			arch_set_pc(regs, c->ret_addr);
			return 1;
		}
	}
	if (trap_stop && emerg_is_bp(t, pc - ARCH_TRAP_PC_ADJUST)) {
		arch_set_pc(regs, pc - ARCH_TRAP_PC_ADJUST);
		return 1;
	}
	return 0;
}

/*
 * Waits up to EMERG_STOP_MS for a stop of tid that we have not waited for.
 * Returns 1 with *status set, 0 when none came, -1 when it is gone.
 */
static int
emerg_wait_stop(pid_t tid, int *status)
{
	for (int ms = 0; ms < EMERG_STOP_MS; ms++) {
		pid_t r = waitpid(tid, status, WNOHANG | __WALL);

		if (r == tid)
			return WIFSTOPPED(*status) ? 1 : -1;
		if (r < 0 && errno != EINTR)
			return -1;
		sigsafe_sleep_ms(1);
	}
	return 0;
}

/*
 * What t's stop, read from its siginfo, holds for the program: its own
 * signal's delivery stop delivers it; our traps, steps, perf hooks, ptrace
 * events and group-stops (no siginfo) deliver none. An int3 trap is the
 * program's own only when the byte before the pc is still a trap byte
 * (ours are back out by now). *trap_stop: the stop is an int3's.
 */
static int
emerg_stop_signal(pid_t tid, const arch_regs *regs, int *trap_stop)
{
	siginfo_t si;

	*trap_stop = 0;
	if (ptrace(PTRACE_GETSIGINFO, tid, 0L, &si) < 0)
		return 0;	/* a group-stop */
	if (si.si_signo != SIGTRAP)
		return si.si_signo;
	if (si.si_code <= 0)
		return SIGTRAP;	/* sent by kill or tgkill */
	if (si.si_code != SI_KERNEL)
		return 0;	/* an event, a single step, a perf hook of the uprobe source */
	*trap_stop = 1;
	return sigsafe_byte_at(tid, arch_pc(regs) - ARCH_TRAP_PC_ADJUST) == ARCH_TRAP_BYTE ? SIGTRAP : 0;
}

/* Lets t go, traced by the calling tracer thread tt: stopped, registers right, its signal delivered. */
static void
emerg_release(struct jt_tthread *tt, struct jt_thread *t)
{
	arch_regs regs;
	int status, sig, trap_stop;

	if (tt->resume_tid == t->tid) {
		/* Handled, its registers waiting to be set with its restart: they are right. */
		regs = tt->resume_regs;
		arch_regs_set(t->tid, &regs);
		ptrace(PTRACE_DETACH, t->tid, 0L, 0L);
		return;
	}
	/* Not in a stop (PTRACE_DETACH needs one): emerg_release_mine asked for one. */
	if (arch_regs_get(t->tid, &regs) < 0) {
		/* Gone, or blocked where it cannot stop (a vfork): the kernel lets it go at our exit. */
		if (emerg_wait_stop(t->tid, &status) <= 0 || arch_regs_get(t->tid, &regs) < 0)
			return;
	}
	sig = emerg_stop_signal(t->tid, &regs, &trap_stop);
	/* A stop we held: the loop decided what it delivers. */
	if (thread_is_stopped(t))
		sig = t->pending_sig;
	if (emerg_fix_regs(t, &regs, trap_stop))
		arch_regs_set(t->tid, &regs);
	ptrace(PTRACE_DETACH, t->tid, 0L, (long)sig);
}

/*
 * Lets tid go, traced by us though emerg_release did not: a clone or fork
 * child the loop had not met yet (the kernel attaches it at its parent's
 * event), a thread whose stop came late, or one in hand-over that its new
 * tracer thread had seized but not yet given back its registers and mask
 * (left so, it would wait parked for ever). A launched program is traced
 * with PTRACE_O_EXITKILL: one such thread left at our exit kills it whole.
 */
static void
emerg_release_tid(pid_t tid)
{
	struct jt_thread *t = emerg_tr ? thread_find(emerg_tr, tid) : NULL;
	arch_regs regs;
	int status = 0, sig = 0, trap_stop = 0;

	ptrace(PTRACE_INTERRUPT, tid, 0L, 0L);
	if (arch_regs_get(tid, &regs) < 0 && (emerg_wait_stop(tid, &status) <= 0 || arch_regs_get(tid, &regs) < 0))
		return;
	if (t && thread_in_transit(t)) {
		/* Seized by its new tracer thread (handover_seize) but not yet given back its own state. */
		regs = t->park_regs;
		emerg_fix_regs(t, &regs, 0);
		arch_regs_set(tid, &regs);
		ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(t->park_mask), &t->park_mask);
		ptrace(PTRACE_DETACH, tid, 0L, 0L);
		return;
	}
	/* An event or seized-stop (a new child's first stop) holds no signal; SIGSTOP there would stop the group. */
	if (!(status >> 16))
		sig = emerg_stop_signal(tid, &regs, &trap_stop);
	if (t && emerg_fix_regs(t, &regs, trap_stop))
		arch_regs_set(tid, &regs);
	ptrace(PTRACE_DETACH, tid, 0L, (long)sig);
}

/*
 * Every task of every process we know, and the children each has forked,
 * still traced by the calling tracer thread me: let go. Returns how many.
 */
static int
emerg_sweep(pid_t me)
{
	pid_t tasks[512], kids[64];
	char path[96], buf[1024];
	int found = 0;

	for (struct jt_proc *p = emerg_tr->procs; p; p = p->next) {
		int n;

		if (p->exited)
			continue;
		sigsafe_proc_path(path, p->pid, 0, "task");
		n = sigsafe_list_dir(path, tasks, (int)ARRAY_SIZE(tasks));
		for (int i = 0; i < n; i++) {
			int nk = 0;
			char *s = buf;

			if (sigsafe_traced_by(p->pid, tasks[i], me)) {
				emerg_release_tid(tasks[i]);
				found++;
			}
			sigsafe_proc_path(path, p->pid, tasks[i], "children");
			if (!sigsafe_read_file(path, buf, sizeof(buf)))
				continue;
			while (*s && nk < (int)ARRAY_SIZE(kids)) {
				long v = 0;

				for (; *s >= '0' && *s <= '9'; s++)
					v = v * 10 + (*s - '0');
				if (v > 0)
					kids[nk++] = (pid_t)v;
				while (*s && (*s < '0' || *s > '9'))
					s++;
			}
			for (int k = 0; k < nk; k++)
				if (sigsafe_traced_by(kids[k], kids[k], me)) {
					emerg_release_tid(kids[k]);
					found++;
				}
		}
	}
	return found;
}

/* Lets every tracee of the calling tracer thread go, then says so in emerg_done. */
static void
emerg_release_mine(void)
{
	struct jt_tthread *tt = tthread_self();
	struct jt_tracer *tr = emerg_tr;
	arch_regs regs;

	if (!tt || !tr)
		return;
	/* Every running one asked to stop first, so that their stops come together. */
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		for (struct jt_thread *t = tr->threads[i]; t; t = t->hnext)
			if (t->owner == tt && !thread_in_transit(t) && arch_regs_get(t->tid, &regs) < 0)
				ptrace(PTRACE_INTERRUPT, t->tid, 0L, 0L);
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		for (struct jt_thread *t = tr->threads[i]; t; t = t->hnext)
			if (t->owner == tt && !thread_in_transit(t) && !(t->proc && t->proc->exited))
				emerg_release(tt, t);
	/* Then what the tables do not hold, until a sweep finds none (a child may clone meanwhile). */
	for (int pass = 0; pass < 8 && emerg_sweep(tt->ktid) > 0; pass++)
		;
	emerg_done[tt->index] = 1;
}

/*
 * Tracer thread tid out of SCHED_IDLE (cpu.c puts it there while a CPU is
 * spare) and ahead of the program's threads where we may: once the trap
 * bytes are out, every program thread runs free, and a tracer thread of
 * the idle class would wait seconds for a CPU among them.
 */
static void
emerg_hurry(pid_t tid)
{
	struct sched_param sp = { 0 };

	sched_setscheduler(tid, SCHED_OTHER, &sp);
	setpriority(PRIO_PROCESS, (id_t)tid, -10);
}

/*
 * A thread parked on its way between tracer threads is traced by nobody,
 * in a pause() with every signal blocked: seized, and given back its
 * registers and signal mask, it goes on as before.
 */
static void
emerg_release_parked(struct jt_tracer *tr)
{
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		for (struct jt_thread *t = tr->threads[i]; t; t = t->hnext) {
			arch_regs regs;
			int status;

			if (!thread_in_transit(t) || ptrace(PTRACE_SEIZE, t->tid, 0L, 0L) < 0)
				continue;
			ptrace(PTRACE_INTERRUPT, t->tid, 0L, 0L);
			if (emerg_wait_stop(t->tid, &status) <= 0)
				continue;
			regs = t->park_regs;
			emerg_fix_regs(t, &regs, 0);
			arch_regs_set(t->tid, &regs);
			ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(t->park_mask), &t->park_mask);
			ptrace(PTRACE_DETACH, t->tid, 0L, 0L);
		}
}

/* EMERG_SIG: another thread runs the way out; let our own tracees go, then wait for the end. */
static void
emerg_on_signal(int sig)
{
	struct jt_tthread *tt = tthread_self();
	int saved = errno;

	(void)sig;
	if (tt)
		emerg_arrived[tt->index] = 1;
	for (int ms = 0; !emerg_memory_done && ms < EMERG_PEERS_MS; ms++)
		sigsafe_sleep_ms(1);
	emerg_release_mine();
	errno = saved;
	for (;;)
		pause();
}

int
emerg_begun(void)
{
	return __atomic_load_n(&emerg_owner, __ATOMIC_RELAXED) != 0;
}

/* Dies by sig with its default action, or with status 1 for sig 0. */
static void __attribute__((noreturn))
emerg_die(int sig)
{
	if (sig > 0)
		util_die_by_signal(sig);
	_exit(1);
}

/* Waits up to EMERG_PEERS_MS until flag[i] is set for each of the n tracer threads. Returns 1 when all were. */
static int
emerg_wait_all(const volatile sig_atomic_t *flag, int n)
{
	for (int waited = 0; waited < EMERG_PEERS_MS; waited++) {
		int left = 0;

		for (int i = 0; i < n; i++)
			left += !flag[i];
		if (!left)
			return 1;
		sigsafe_sleep_ms(1);
	}
	return 0;
}

void
emerg_exit(int sig, const char *why)
{
	struct jt_tracer *tr = emerg_tr;
	int me = sigsafe_gettid(), expected = 0, answered;
	char num[24];

	if (!__atomic_compare_exchange_n(&emerg_owner, &expected, me, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		if (expected == me)
			emerg_die(sig);	/* a fault inside the way out: the last resort failed */
		/* Another thread runs it: do our part as the signal would, and wait for the end. */
		emerg_on_signal(EMERG_SIG);
	}
	/* One line: the cause now, what became of the processes at the end. */
	sigsafe_puts("jmptrace: ");
	sigsafe_puts(why);
	if (!tr) {
		sigsafe_puts("\n");
		emerg_die(sig);
	}
	for (int i = 0; i < tr->tthreads.n; i++)
		if (tr->tthreads.t[i].ktid > 0)
			emerg_hurry(tr->tthreads.t[i].ktid);
	emerg_hurry(me);
	/* Every other tracer thread into the way out first, then the memory put back. */
	for (int i = 0; i < tr->tthreads.n; i++) {
		struct jt_tthread *tt = &tr->tthreads.t[i];

		if (tt == tthread_self() || tt->ktid <= 0 || (i != 0 && !tt->running))
			emerg_arrived[i] = 1;
		else if (syscall(SYS_tgkill, getpid(), tt->ktid, EMERG_SIG) < 0)
			emerg_arrived[i] = emerg_done[i] = 1;
	}
	emerg_wait_all(emerg_arrived, tr->tthreads.n);
	emerg_restore_memory(tr);
	emerg_memory_done = 1;
	emerg_release_mine();
	emerg_release_parked(tr);
	answered = emerg_wait_all(emerg_done, tr->tthreads.n);
	/* Not before: a tracee's events must stay open while it is handed back. */
	uprobes_emerg_release(tr->uprobes);
	outfile_emerg_unlink();
	sigsafe_puts(answered ? "; every traced process was let go untraced, as it was; no report written (jmptrace pid "
					  : "; some tracer threads did not answer, and their processes may be harmed (jmptrace pid ");
	sigsafe_puts(sigsafe_utoa(num + sizeof(num), (uint64_t)getpid()));
	sigsafe_puts(")\n");
	emerg_die(sig);
}

int
emerg_thread_init(void)
{
	stack_t ss = { .ss_size = EMERG_STACK };
	sigset_t one;

	ss.ss_sp = mmap(NULL, EMERG_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ss.ss_sp == MAP_FAILED)
		return -1;
	sigemptyset(&one);
	sigaddset(&one, EMERG_SIG);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	return sigaltstack(&ss, NULL);
}

int
emerg_init(struct jt_tracer *tr)
{
	struct sigaction sa;

	emerg_tr = tr;
	testfault_init();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = emerg_on_signal;
	sigfillset(&sa.sa_mask);
	sa.sa_flags = SA_ONSTACK;
	if (sigaction(EMERG_SIG, &sa, NULL) < 0)
		return -1;
	return emerg_thread_init();
}
