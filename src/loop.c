/* loop.c - the tracer threads' loops: waiting for stops, the tick, SIGINT and SIGUSR1, and the end. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "cpu.h"
#include "detach.h"
#include "handover.h"
#include "heap.h"
#include "loop.h"
#include "proc.h"
#include "regs.h"
#include "restart.h"
#include "snapshot.h"
#include "stop.h"
#include "tthread.h"
#include "util.h"

static uint64_t
loop_now_ms(void)
{
	return util_now_us() / 1000;
}

/* Set by signal handlers; signals are process-wide, so these are the only globals. */
static volatile sig_atomic_t got_snapshot, got_stop;

static void
loop_on_signal(int sig)
{
	if (sig == SIGUSR1)
		got_snapshot = 1;
	else if (sig == SIGINT)
		got_snapshot = got_stop = sig;
	else if (sig != SIGALRM)
		got_stop = sig;
}

void
loop_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = loop_on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: wait4 must return EINTR so the loop sees the flags. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
}

void
loop_install_signals(void)
{
	struct itimerval it = { { 0, 50000 }, { 0, 50000 } };

	loop_catch_signals();
	/*
	 * A periodic tick closes the race between checking the flags and
	 * blocking in wait4; every 50 ms, so that the timeline of a program
	 * that allocates nothing for a while still gets a sample at least
	 * every HEAP_SAMPLE_MS or so (loop_tick).
	 */
	setitimer(ITIMER_REAL, &it, NULL);
}

static void
loop_status_line(struct jt_tracer *tr, struct jt_proc *p)
{
	struct jt_heap_totals tot;
	uint64_t now = loop_now_ms();

	if (now - tr->status_ms < 1000)
		return;
	heap_totals(p->heap, &tot);
	fprintf(stderr, "\rjmptrace: pid %d: %llu events/s, %llu bytes live in %llu blocks, %u stacks   ",
		p->pid, (unsigned long long)((tr->events - tr->status_events) * 1000 / (now - tr->status_ms)),
		(unsigned long long)tot.live_bytes, (unsigned long long)tot.live_blocks,
		heap_stack_count(p->heap));
	tr->status_ms = now;
	tr->status_events = tr->events;
	tr->status_shown = 1;
}

static void
loop_flags(struct jt_tracer *tr)
{
	struct jt_proc *p = proc_find(tr, tr->main_pid);
	int stop = got_stop;
	int attached = p && p->attached;

	if (!p)
		return;
	if (attached && tr->opt->duration > 0 &&
	    loop_now_ms() - tr->start_ms >= (uint64_t)(tr->opt->duration * 1000))
		stop = SIGALRM;
	if (tr->status_shown && (got_snapshot || stop))
		fputc('\n', stderr);
	if (got_snapshot || stop) {
		got_snapshot = 0;
		snapshot_write(tr, p, stop == SIGALRM ? "duration" : stop ? "signal" : "sigusr1");
	} else if (tr->opt->interval > 0 &&
		   loop_now_ms() - tr->interval_ms >= (uint64_t)(tr->opt->interval * 1000)) {
		/* --interval: the clock restarts at each periodic snapshot, not at a SIGUSR1 one. */
		tr->interval_ms = loop_now_ms();
		snapshot_write(tr, p, "interval");
	}
	if (!stop)
		return;
	got_stop = 0;
	if (attached) {
		detach_all(tr);
		return;
	}
	/* In launch mode the program shares our terminal and gets its own SIGINT. */
	if (stop != SIGINT)
		kill(p->pid, stop);
}

/*
 * --pin: pins t to the CPU of tt, the tracer thread that traces it, if it is
 * not there yet (new, or handed over from another tracer thread).
 */
static void
loop_pin(struct jt_tthread *tt, struct jt_thread *t)
{
	struct jt_proc *p = t->proc;
	int cpu = tt->cpu.bound, first = t->pin_cpu < 0;

	if (cpu < 0 || t->pin_cpu == cpu || t->owner != tt || thread_in_transit(t))
		return;
	if (cpu_pin(t->tid, cpu, first ? &t->pin_saved : NULL) < 0) {
		if (errno != ESRCH)
			perror_msg("--pin: thread %d: cannot set its CPU affinity", t->tid);
		return;
	}
	t->pin_cpu = cpu;
	if (!first)
		return;
	/*
	 * A thread created while traced inherited its creator's pinned CPU:
	 * give it the process's own affinity (its main thread's) instead.
	 */
	if (t->born_traced && p->pin_orig_set && CPU_COUNT(&t->pin_saved) == 1)
		t->pin_saved = p->pin_orig;
	else if (!t->born_traced && (t->tid == p->pid || !p->pin_orig_set)) {
		p->pin_orig = t->pin_saved;
		p->pin_orig_set = 1;
	}
}

/* A thread handed to us arrived: with --pin it moves to our CPU before it runs on. */
static void
loop_arrived(struct jt_tracer *tr, struct jt_thread *t)
{
	if (tr->opt->pin)
		loop_pin(t->owner, t);
	handover_arrived(tr, t);
}

/* --pin: every thread tt traces, blocked ones too, which may never stop. */
static void
loop_pin_all(struct jt_tracer *tr, struct jt_tthread *tt)
{
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		for (struct jt_thread *t = tr->threads[i]; t; t = t->hnext)
			loop_pin(tt, t);
}

/*
 * Work done a few times a second: waking the other tracer threads, and the status line.
 * CPU placement is done at stops, where the tracee is known to be stopped;
 * a tracer thread without tracees has no stops, but while it wakes up on a
 * busy tracer thread's CPU in SCHED_OTHER, that CPU is not idle for the
 * scheduler and the tracee there is woken on another: it adapts here.
 */
static void
loop_tick(struct jt_tracer *tr, struct jt_tthread *tt)
{
	uint64_t now = loop_now_ms();
	struct jt_proc *p;

	/* The timeline of a program that makes no allocation goes on (heap_sample waits its 100 ms). */
	if (tt->index == 0)
		for (p = tr->procs; p; p = p->next)
			if (p->heap)
				heap_sample(p->heap, 0);
	if (now - tt->tick_ms < 200)
		return;
	tt->tick_ms = now;
	if (tt->ntracees == 0 && !tr->opt->no_cpu_follow && !tr->opt->pin)
		cpu_adapt(&tt->cpu);
	if (tr->opt->pin)
		loop_pin_all(tr, tt);
	if (tt->index != 0)
		return;
	/* The timer signal reaches tracer thread 0 only; it passes the tick on (and makes up for lost wakes). */
	tthread_wake_all(&tr->tthreads);
	if (tr->show_status && (p = proc_find(tr, tr->main_pid)))
		loop_status_line(tr, p);
}

/* Threads that arrived to be stepped while tracer thread 0 was recalling another process. */
static void
loop_run_deferred(struct jt_tracer *tr)
{
	struct jt_thread *t;

	while (!tr->recall && (t = tr->deferred)) {
		tr->deferred = t->inext;
		t->inext = NULL;
		handover_arrived(tr, t);
	}
}

/*
 * Waits for the next stop of one of tt's own tracees, with the lock
 * released meanwhile; does tt's held-back restart first. Returns its tid, 0
 * when woken for other work, -1 on ECHILD (nothing to wait for) or another
 * error.
 */
static pid_t
loop_wait_next(struct jt_tracer *tr, struct jt_tthread *tt, int *status)
{
	struct jt_thread *t;
	pid_t tid;

	pthread_mutex_unlock(&tr->tthreads.lock);
	restart_held(tt);
	/* __WNOTHREAD: only our own tracees; the other tracer threads wait for theirs. */
	tid = wait4(-1, status, __WALL | __WNOTHREAD, NULL);
	tt->regs_tid = 0;
	if (tid > 0 && WIFSTOPPED(*status) && WSTOPSIG(*status) == SIGTRAP && (*status >> 16) == 0 &&
	    arch_regs_get(tid, &tt->regs) == 0)
		tt->regs_tid = tid;
	/* Our own tracee, stopped: its placement needs no lock. With --pin we stay where we are. */
	if (tid > 0 && WIFSTOPPED(*status))
		cpu_on_stop(&tt->cpu, tid, !tr->opt->no_cpu_follow && !tr->opt->pin);
	pthread_mutex_lock(&tr->tthreads.lock);
	if (tid < 0 && errno == EINTR)
		return 0;
	if (tid > 0 && tr->opt->pin && (t = thread_find(tr, tid)))
		loop_pin(tt, t);
	return tid;
}

/*
 * Handles a stop the loop waited for. Its allocation event may unwind with
 * the lock released (proc_unwind); a stop handled inside work on a whole
 * process (stopall.c) never does, as that work walks the session's tables.
 */
static void
loop_dispatch(struct jt_tracer *tr, struct jt_tthread *tt, pid_t tid, int status)
{
	tt->unwind_unlock = 1;
	stop_dispatch(tr, tid, status);
	tt->unwind_unlock = 0;
}

/*
 * Under --verbose: a tracer thread's hits and the share of its sampled stops
 * where the tracee had stopped on another CPU than the tracer thread (each
 * such stop costs a cross-CPU wakeup both ways). make bench reads this line.
 */
static void
loop_report_cpu(const struct jt_tthread *tt)
{
	const struct jt_cpu *c = &tt->cpu;

	debug_msg("tracer thread %d: %lu breakpoint hits, %lu stops; cross-CPU stops: %lu of %lu sampled (every %dth stop), %.1f%%; %lu other checks, %lu moves",
		  tt->index, (unsigned long)tt->events, c->stops, c->cross, c->samples, CPU_SAMPLE_EVERY,
		  c->samples ? 100.0 * (double)c->cross / (double)c->samples : 0.0, c->checks, c->moves);
}

/* A tracer thread other than the main one: serves its own tracees until told to quit. */
static void *
loop_tthread(void *arg)
{
	struct jt_tthread *tt = arg;
	struct jt_tracer *tr = tt->tr;

	/* --pin: one tracer thread per CPU, each staying on its own. */
	if (tr->opt->pin)
		cpu_bind_nth(&tt->cpu, tt->index);
	pthread_mutex_lock(&tr->tthreads.lock);
	while (!tr->tthreads.quit) {
		int status;
		pid_t tid;

		handover_receive(tt, loop_arrived);
		handover_serve_recall(tr, tt);
		loop_tick(tr, tt);
		if (tt->ntracees == 0) {
			handover_wait(tr, 200);
			continue;
		}
		tid = loop_wait_next(tr, tt, &status);
		if (tid < 0) {
			handover_wait(tr, 200);
			continue;
		}
		if (tid > 0)
			loop_dispatch(tr, tt, tid, status);
	}
	cpu_release(&tt->cpu);
	loop_report_cpu(tt);
	pthread_mutex_unlock(&tr->tthreads.lock);
	return NULL;
}

/*
 * How many tracer threads to run: one per CPU we may use, unless
 * --tracer-threads chose (main.c keeps that within 1..JT_MAX_TTHREADS). One
 * thread per CPU lets each stop be a same-CPU switch between a tracee and its
 * own tracer thread while the other CPUs do the same.
 */
static int
loop_thread_count(const struct jt_tracer *tr)
{
	int n = tr->opt->tracer_threads ? (int)tr->opt->tracer_threads : cpu_count_allowed();

	return n > JT_MAX_TTHREADS ? JT_MAX_TTHREADS : n;
}

/* Brings every thread back to tracer thread 0 and ends the other tracer threads (tr->tthreads.lock held). */
static void
loop_stop_tthreads(struct jt_tracer *tr)
{
	struct jt_tthread *self = tthread_self();
	struct jt_proc *p;

	restart_held(self);
	if (tr->tthreads.n <= 1)
		return;
	/* A tracer thread that ends takes its tracees with it (killed, or detached onto our trap bytes). */
	for (int again = 1; again;) {
		again = 0;
		for (p = tr->procs; p; p = p->next)
			if (handover_elsewhere(tr, p, self)) {
				handover_recall(tr, p);
				again = handover_elsewhere(tr, p, self) ? 0 : 1;
				break;
			}
	}
	tr->tthreads.quit = 1;
	tthread_join_all(&tr->tthreads);
	/* What came back stopped runs on under tracer thread 0, which is the only tracer thread now. */
	handover_receive(self, loop_arrived);
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		for (struct jt_thread *t = tr->threads[i]; t; t = t->hnext)
			if (thread_is_stopped(t) && !t->step_pending && !tr->detached && !tr->main_exited)
				restart_stopped(tr, t);
	tr->deferred = NULL;
}

/* Done when the main process is gone and, with -f, every followed child too. */
static int
loop_done(const struct jt_tracer *tr)
{
	if (tr->fatal || tr->detached)
		return 1;
	if (!tr->main_exited)
		return 0;
	if (!tr->opt->follow_forks)
		return 1;
	for (const struct jt_proc *p = tr->procs; p; p = p->next)
		if (p->pid != tr->main_pid && p->nthreads > 0)
			return 0;
	return 1;
}

int
loop_run(struct jt_tracer *tr)
{
	struct jt_tthread *self = tthread_self();

	tr->start_ms = tr->status_ms = tr->interval_ms = loop_now_ms();
	tthread_start(&tr->tthreads, loop_thread_count(tr), loop_tthread);
	/* Only now: the other tracer threads must not inherit a single CPU. */
	if (tr->opt->pin)
		cpu_bind_nth(&self->cpu, 0);
	debug_msg("%d tracer thread%s, CPU placement %s, breakpoints %s", tr->tthreads.n,
		  tr->tthreads.n == 1 ? "" : "s", tr->opt->pin ? "pinned" : tr->opt->no_cpu_follow ? "off" : "on",
		  tr->opt->no_emulate ? "stepped over" : "emulated");
	pthread_mutex_lock(&tr->tthreads.lock);
	while (!loop_done(tr)) {
		int status;
		pid_t tid;

		loop_flags(tr);
		if (tr->detached)
			break;
		loop_tick(tr, self);
		handover_receive(self, loop_arrived);
		loop_run_deferred(tr);
		tid = loop_wait_next(tr, self, &status);
		if (tid == 0)
			continue;
		if (tid < 0) {
			/* With -f, the processes left may all be traced by other tracer threads. */
			if (errno == ECHILD && tr->tthreads.n > 1 && !loop_done(tr)) {
				handover_wait(tr, 200);
				continue;
			}
			if (errno != ECHILD)
				perror_msg("wait4");
			break;
		}
		loop_dispatch(tr, self, tid, status);
	}
	loop_report_cpu(self);
	loop_stop_tthreads(tr);
	pthread_mutex_unlock(&tr->tthreads.lock);
	cpu_release(&self->cpu);
	if (tr->status_shown)
		fputc('\n', stderr);
	return tr->fatal ? -1 : 0;
}
