/* worker.c - tracer threads, and the hand-over of a traced thread from one tracer thread to another. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch.h"
#include "park.h"
#include "regs.h"
#include "mem.h"
#include "proc.h"
#include "procfs.h"
#include "util.h"
#include "worker.h"

/*
 * Which jt_worker the calling thread is. Thread-local by nature: it names
 * the per-thread block, it is not state of its own.
 */
static __thread struct jt_worker *worker_cur;

/* The signal that interrupts a worker's wait4. The first real-time signal glibc leaves us. */
#define WORKER_WAKE_SIG (SIGRTMIN + 1)

struct jt_worker *
worker_self(void)
{
	return worker_cur;
}

static void
worker_on_wake(int sig)
{
	(void)sig;
}

void
worker_init(struct jt_tracer *tr)
{
	struct jt_worker *w = &tr->workers[0];
	pthread_mutexattr_t ma;
	struct sigaction sa;

	memset(w, 0, sizeof(*w));
	w->tr = tr;
	w->ktid = (pid_t)syscall(SYS_gettid);
	cpu_init(&w->cpu);
	tr->nworkers = 1;
	worker_cur = w;
	/*
	 * Held for a couple of microseconds per stop: a waiter that spins a
	 * little gets it sooner than one that sleeps in futex and is woken.
	 */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&tr->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_cond_init(&tr->cond, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = worker_on_wake;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the point is to make wait4 return EINTR. */
	sigaction(WORKER_WAKE_SIG, &sa, NULL);
}

struct worker_boot {
	struct jt_worker *w;
	void *(*loop)(void *);
};

static void *
worker_main(void *arg)
{
	struct worker_boot boot = *(struct worker_boot *)arg;
	sigset_t wake;

	free(arg);
	worker_cur = boot.w;
	/* worker_wake reads it under the lock. */
	pthread_mutex_lock(&boot.w->tr->lock);
	boot.w->ktid = (pid_t)syscall(SYS_gettid);
	pthread_mutex_unlock(&boot.w->tr->lock);
	/* Only the wake signal reaches a worker; SIGINT and the tick belong to the main thread. */
	sigemptyset(&wake);
	sigaddset(&wake, WORKER_WAKE_SIG);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	return boot.loop(boot.w);
}

int
worker_start(struct jt_tracer *tr, int n, void *(*loop)(void *))
{
	sigset_t mine, old;

	if (n > JT_MAX_WORKERS)
		n = JT_MAX_WORKERS;
	/*
	 * Workers inherit this mask: the signals the main thread acts on stay
	 * blocked in them. SIGCHLD must not be blocked anywhere: an ignored
	 * signal is dropped when sent, but a blocked one is queued, and every
	 * stop of every tracee sends one; the main thread would then dequeue
	 * and discard it after each of its system calls.
	 */
	sigemptyset(&mine);
	sigaddset(&mine, SIGINT);
	sigaddset(&mine, SIGTERM);
	sigaddset(&mine, SIGHUP);
	sigaddset(&mine, SIGUSR1);
	sigaddset(&mine, SIGALRM);
	sigaddset(&mine, WORKER_WAKE_SIG);
	pthread_sigmask(SIG_BLOCK, &mine, &old);
	for (int i = 1; i < n; i++) {
		struct jt_worker *w = &tr->workers[i];
		struct worker_boot *boot = xcalloc(1, sizeof(*boot));

		memset(w, 0, sizeof(*w));
		w->tr = tr;
		w->index = i;
		cpu_init(&w->cpu);
		boot->w = w;
		boot->loop = loop;
		if (pthread_create(&w->thread, NULL, worker_main, boot) != 0) {
			free(boot);
			break;
		}
		w->running = 1;
		tr->nworkers = i + 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return tr->nworkers;
}

void
worker_wake(struct jt_worker *w)
{
	if (w->index > 0 && w->running && w->ktid > 0)
		syscall(SYS_tgkill, getpid(), w->ktid, WORKER_WAKE_SIG);
}

void
worker_wake_all(struct jt_tracer *tr)
{
	for (int i = 1; i < tr->nworkers; i++)
		worker_wake(&tr->workers[i]);
	pthread_cond_broadcast(&tr->cond);
}

void
worker_join_all(struct jt_tracer *tr)
{
	for (int i = 1; i < tr->nworkers; i++) {
		struct jt_worker *w = &tr->workers[i];

		if (!w->running)
			continue;
		/* Called with tr->lock held; the worker needs it to see quit. */
		worker_wake_all(tr);
		pthread_mutex_unlock(&tr->lock);
		pthread_join(w->thread, NULL);
		pthread_mutex_lock(&tr->lock);
		w->running = 0;
	}
	tr->nworkers = 1;
}

struct jt_worker *
worker_least_loaded(struct jt_tracer *tr)
{
	struct jt_worker *best = &tr->workers[0];

	for (int i = 1; i < tr->nworkers; i++)
		if (tr->workers[i].running && tr->workers[i].nactive < best->nactive)
			best = &tr->workers[i];
	return best;
}

/* Looks for the bytes of code in one mapping, at an address the CPU can run them from. Returns it or 0. */
static uint64_t
worker_find_bytes(pid_t pid, uint64_t start, uint64_t end, const uint8_t *code)
{
	static const size_t chunk = 16384;
	const size_t n = ARCH_PARK_CODE_LEN;
	uint8_t *buf = xcalloc(1, chunk);
	uint64_t found = 0;

	/* Look at the first MiB only: the vDSO is two pages, and a libc has both early. */
	if (end - start > (1u << 20))
		end = start + (1u << 20);
	/* Chunks overlap by n - 1 bytes, so code across a chunk boundary is seen too. */
	for (uint64_t a = start; a + n <= end && !found; a += chunk - (n - 1)) {
		size_t len = end - a < chunk ? end - a : chunk;

		if (mem_read(pid, a, buf, len) < 0)
			break;
		for (size_t i = 0; i + n <= len; i++)
			if ((a + i) % ARCH_PARK_CODE_ALIGN == 0 && memcmp(buf + i, code, n) == 0) {
				found = a + i;
				break;
			}
	}
	free(buf);
	return found;
}

/*
 * Finds park code anywhere in the process's executable memory, the vDSO
 * first (every process has one, static ones too). The CPU decodes from
 * wherever pc points, so it need not be on an instruction boundary of the
 * code around it.
 */
static uint64_t
worker_find_code(struct jt_proc *p, enum arch_park_code code)
{
	char path[64], line[512];
	uint64_t found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	if (!(f = fopen(path, "re")))
		return 0;
	for (int pass = 0; pass < 2 && !found; pass++) {
		rewind(f);
		while (!found && fgets(line, sizeof(line), f)) {
			unsigned long start, end;
			char perms[8];

			if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3 || perms[2] != 'x')
				continue;
			if ((pass == 0) != (strstr(line, "[vdso]") != NULL))
				continue;
			found = worker_find_bytes(p->pid, start, end, arch_park_bytes(code));
		}
	}
	fclose(f);
	return found;
}

/*
 * Where a parked thread waits, with every signal blocked: on a system call
 * instruction calling pause(), which only SIGKILL or our PTRACE_INTERRUPT
 * ends. A thread under seccomp might not be allowed pause(), so it spins on
 * a jump to itself instead, for the moment the hand-over takes. Returns the
 * pc and sets *code, or 0 when the process has no such code.
 */
static uint64_t
worker_park_pc(struct jt_thread *t, enum arch_park_code *code)
{
	struct jt_proc *p = t->proc;

	if (procfs_seccomp(t->tid)) {
		if (!p->spin_pc)
			p->spin_pc = worker_find_code(p, ARCH_PARK_SPIN);
		*code = ARCH_PARK_SPIN;
		return p->spin_pc;
	}
	*code = ARCH_PARK_SYSCALL;
	return worker_syscall_pc(p);
}

uint64_t
worker_syscall_pc(struct jt_proc *p)
{
	if (!p->park_pc)
		p->park_pc = worker_find_code(p, ARCH_PARK_SYSCALL);
	return p->park_pc;
}

int
worker_send(struct jt_thread *t, struct jt_worker *to)
{
	struct jt_worker *from = t->owner;
	uint64_t all = ~0ull, pc;
	enum arch_park_code code;
	arch_regs park;

	if (arch_regs_get(t->tid, &t->park_regs) < 0 ||
	    ptrace(PTRACE_GETSIGMASK, t->tid, (long)sizeof(all), &t->park_mask) < 0 ||
	    !(pc = worker_park_pc(t, &code)))
		return -1;
	park = t->park_regs;
	arch_park_setup(&park, code, pc);
	if (ptrace(PTRACE_SETSIGMASK, t->tid, (long)sizeof(all), &all) < 0)
		return -1;
	/*
	 * A signal held for t goes with the detach. t sits in the
	 * signal-delivery-stop it came in (nothing else holds one), and the
	 * kernel queues a signal injected while blocked again: t gets it once
	 * the new tracer thread gives it its own mask back. Held instead, it
	 * would be lost: the new tracer thread restarts t from an interrupt
	 * stop, where a restart's signal is ignored.
	 */
	if (arch_regs_set(t->tid, &park) < 0 ||
	    ptrace(PTRACE_DETACH, t->tid, 0L, (long)t->pending_sig) < 0) {
		arch_regs_set(t->tid, &t->park_regs);
		ptrace(PTRACE_SETSIGMASK, t->tid, (long)sizeof(all), &t->park_mask);
		return -1;
	}
	debug_msg("thread %d: handed from tracer thread %d to %d", t->tid, from ? from->index : -1, to->index);
	if (from) {
		from->ntracees--;
		from->nactive -= t->active;
	}
	to->ntracees++;
	to->nactive += t->active;
	t->owner = to;
	t->in_transit = 1;
	t->stopped = 0;
	t->pending_sig = 0;
	t->inext = to->inbox;
	to->inbox = t;
	worker_wake(to);
	pthread_cond_broadcast(&to->tr->cond);
	return 0;
}

static int
worker_is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Takes t over from its parked state. Returns 0 with t stopped under us, or -1 when it is gone. */
static int
worker_seize(struct jt_tracer *tr, struct jt_thread *t)
{
	int status;

	if (ptrace(PTRACE_SEIZE, t->tid, 0L, (long)tr->ptrace_options) < 0) {
		if (errno != ESRCH)
			perror_msg("thread %d: cannot take it over (PTRACE_SEIZE)", t->tid);
		return -1;
	}
	ptrace(PTRACE_INTERRUPT, t->tid, 0L, 0L);
	if (util_wait_tid(t->tid, &status) < 0 || !WIFSTOPPED(status))
		return -1;	/* killed while parked; nobody else will report it */
	if ((unsigned)status >> 16 == PTRACE_EVENT_STOP) {
		t->group_stop = worker_is_stop_signal(WSTOPSIG(status));
	} else if (((unsigned)status >> 16) == 0 && !t->pending_sig) {
		/* SIGSTOP or SIGKILL-class signal dequeued before our interrupt: deliver it later. */
		t->pending_sig = WSTOPSIG(status);
	}
	if (arch_regs_set(t->tid, &t->park_regs) < 0 ||
	    ptrace(PTRACE_SETSIGMASK, t->tid, (long)sizeof(t->park_mask), &t->park_mask) < 0) {
		perror_msg("thread %d: cannot restore it after the hand-over", t->tid);
		return -1;
	}
	t->stopped = 1;
	return 0;
}

void
worker_receive(struct jt_worker *w, void (*arrived)(struct jt_tracer *, struct jt_thread *))
{
	struct jt_thread *t;

	while ((t = w->inbox)) {
		w->inbox = t->inext;
		t->inext = NULL;
		t->in_transit = 0;
		if (worker_seize(w->tr, t) < 0) {
			thread_free(w->tr, t);
			continue;
		}
		arrived(w->tr, t);
	}
}
