/* worker.h - tracer threads: each traces its own share of the program's threads, and they hand threads over. */
#ifndef JT_WORKER_H
#define JT_WORKER_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"
#include "cpu.h"

#define JT_MAX_WORKERS 8

struct jt_tracer;
struct jt_thread;
struct jt_proc;

/*
 * One tracer thread. ptrace ties a tracee to the tracer *thread* that
 * attached it: only that thread may restart it or read its registers, and
 * only it sees its stops (with __WNOTHREAD). Index 0 is the main thread.
 */
struct jt_worker {
	struct jt_tracer *tr;
	int index;
	pthread_t thread;
	pid_t ktid;			/* kernel thread id, for tgkill */
	int running;			/* a started worker thread (index > 0) */
	int ntracees;			/* program threads it traces or is being handed */
	int nactive;			/* of those, threads that hit a breakpoint at least once */
	struct jt_thread *inbox;	/* parked threads handed to it, to seize */
	struct jt_cpu cpu;
	uint64_t events;		/* breakpoint hits it handled */
	uint64_t tick_ms;
	/*
	 * The registers of the stop just reported, read before taking the lock,
	 * and a restart held back to be done after releasing it: system calls
	 * on our own tracee need no lock, and the other tracer threads should
	 * not wait for them.
	 */
	pid_t regs_tid;			/* regs belong to this stop, or 0 */
	arch_regs regs;
	pid_t resume_tid;		/* set resume_regs and PTRACE_CONT it, or 0 */
	arch_regs resume_regs;
};

/* The calling tracer thread's block (NULL before worker_init). */
struct jt_worker *worker_self(void);

/* Makes the calling thread worker 0 of tr. Call it once, before any thread is traced. */
void worker_init(struct jt_tracer *tr);

/*
 * Starts worker threads 1..n-1, each running loop(w). The signals the main
 * thread acts on (SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGALRM) are blocked in
 * them; only the wake signal reaches them. Returns how many tracer threads
 * there now are (1 when none could be started).
 */
int worker_start(struct jt_tracer *tr, int n, void *(*loop)(void *));

/* Tells the workers to finish (tr->quit must be set) and joins them. */
void worker_join_all(struct jt_tracer *tr);

/* Interrupts worker w's wait4 so that it looks at its inbox and at tr's requests. */
void worker_wake(struct jt_worker *w);
void worker_wake_all(struct jt_tracer *tr);

/* The tracer thread with the fewest active tracees. */
struct jt_worker *worker_least_loaded(struct jt_tracer *tr);

/* The address of a system call instruction in p's memory (found once, then cached), or 0. */
uint64_t worker_syscall_pc(struct jt_proc *p);

/*
 * Hands t, stopped and traced by the calling thread, to worker `to`. t is
 * parked first, so it cannot run into a breakpoint while nobody traces it:
 * every signal blocked, and its pc on a system call instruction that calls
 * pause() (on a jump to itself under seccomp, which might forbid pause()). Its real
 * registers and signal mask travel with it. Returns 0, or
 * -1 when it could not be parked (it is then still ours, stopped, unchanged).
 */
int worker_send(struct jt_thread *t, struct jt_worker *to);

/*
 * Seizes every thread in the calling worker's inbox, gives each its real
 * registers and signal mask back, and calls arrived(t) with t stopped
 * (t->stopped set). Threads that died on the way are freed.
 */
void worker_receive(struct jt_worker *w, void (*arrived)(struct jt_tracer *, struct jt_thread *));

#endif
