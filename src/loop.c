/* loop.c - the tracer threads' loops: waiting for stops, the tick, and the end (due.c: the snapshots and signals between stops). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpu.h"
#include "due.h"
#include "emerg.h"
#include "testfault.h"
#include "handover.h"
#include "heap.h"
#include "image.h"
#include "kops.h"
#include "loop.h"
#include "options.h"
#include "proc.h"
#include "regs.h"
#include "report.h"
#include "report_common.h"
#include "restart.h"
#include "selfsig.h"
#include "snapshot.h"
#include "stop.h"
#include "stopall.h"
#include "tracer.h"
#include "tthread.h"
#include "uprobes.h"
#include "util.h"
#include "wake.h"

void
loop_install_signals(void)
{
	struct itimerspec its = { { 0, 50000000 }, { 0, 50000000 } };
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SELFSIG_TICK };
	timer_t tick;

	selfsig_catch();
	/*
	 * A periodic tick closes the race between checking the flags and
	 * blocking in wait4; every 50 ms, so that the timeline of a program
	 * that allocates nothing for a while still gets a sample at least
	 * every HEAP_SAMPLE_MS or so (loop_tick). A real-time signal of its
	 * own, to this thread: a SIGALRM of the timer's would swallow one
	 * that another process sends (a pending standard signal is not queued
	 * twice), and jmptrace starved of CPU keeps its tick pending long.
	 */
	ev._sigev_un._tid = gettid();	/* sigev_notify_thread_id, which glibc 2.36 does not name */
	if (timer_create(UTIL_CLOCK, &ev, &tick) == 0)
		timer_settime(tick, 0, &its, NULL);
}


static void
loop_status_line(struct jt_tracer *tr, struct jt_proc *p)
{
	struct jt_heap_totals tot;
	uint64_t now = util_now_ms();
	char a[32], b[96], d[32];

	if (now - tr->status_ms < 1000)
		return;
	heap_totals(p->heap, &tot);
	/* Figures as the report writes them (util_num: 128,512). */
	fprintf(stderr, "\rjmptrace: pid %d: %s events/s, live %s, %s stacks", p->pid,
		util_num(a, (tr->events - tr->status_events) * 1000 / (now - tr->status_ms)),
		report_bytes_blocks(b, sizeof(b), tot.live_bytes, tot.live_blocks),
		util_num(d, heap_stack_count(p->heap)));
	if (tr->uprobes)
		fprintf(stderr, ", %s lost", util_num(a, uprobes_lost(tr->uprobes)));
	fputs("   ", stderr);
	tr->status_ms = now;
	tr->status_events = tr->events;
	tr->status_shown = 1;
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
	stopall_arrived(tr, t);
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
 * How often, at most, stderr says that the uprobe source's rings lose
 * events, and how often their counters are read: a read of every thread's
 * counters holds the lock the uprobe reader applies samples under, and at
 * every tick it starved the reader into losing events of its own.
 */
#define LOOP_LOST_SAY_MS 5000
#define LOOP_LOST_CHECK_MS 2000

/*
 * --source uprobe: events the kernel dropped are said when they happen, not
 * only in the report's totals: every figure is short of them from then on.
 */
static void
loop_lost_say(struct jt_tracer *tr, uint64_t now)
{
	uint64_t lost;
	char a[32];

	if (!tr->uprobes || now - tr->lost_check_ms < LOOP_LOST_CHECK_MS || now - tr->lost_said_ms < LOOP_LOST_SAY_MS)
		return;
	tr->lost_check_ms = now;
	if ((lost = uprobes_lost(tr->uprobes)) <= tr->lost_said)
		return;
	if (tr->status_shown)
		fputc('\n', stderr);
	error_msg("%s events lost so far: the kernel's ring buffers overflowed, so every figure is short of them "
		  "(--buffer-size and --buffer-total keep more)", util_num(a, lost));
	tr->lost_said = lost;
	tr->lost_said_ms = now;
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
	uint64_t now = util_now_ms();
	struct jt_proc *p;

	/* The timeline of a program that makes no allocation goes on (heap_sample waits its 100 ms). */
	if (tt->index == 0)
		for (p = tr->procs; p; p = p->next)
			if (p->heap) {
				heap_sample(p->heap, 0);
				if (p->pages)
					heap_sample(p->pages, 0);
			}
	if (now - tt->tick_ms < 200)
		return;
	tt->tick_ms = now;
	if (tt->ntracees == 0 && !tr->opt->no_cpu_follow && !tr->opt->pin)
		cpu_adapt(&tt->cpu);
	if (tr->opt->pin)
		loop_pin_all(tr, tt);
	if (tt->index != 0)
		return;
	loop_lost_say(tr, now);
	/* A kernel uprobe registered since the last tick takes our breakpoint at its first hit: say it, move it. */
	for (p = tr->procs; p; p = p->next)
		if (!p->exited)
			image_check_taken(tr, p);
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
		stopall_arrived(tr, t);
	}
}

/* --source uprobe: re-reads the link maps whose rendezvous fired in an attached process (uevent.c). */
static void
loop_rtld_due(struct jt_tracer *tr)
{
	for (struct jt_proc *p = tr->procs; p; p = p->next)
		if (p->rtld_due) {
			p->rtld_due = 0;
			image_update(p, 0);
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
	struct jt_tthread *to;
	struct jt_waited kept;
	pid_t tid;
	uint64_t waited, locked;

	/* A stop met inside work on a whole process comes first: it happened before any wait4 can report. */
	if (tthread_take_waited(tt, 0, &kept) == 0) {
		tt->regs_tid = 0;
		*status = kept.status;
		return kept.tid;
	}
	tthread_unlock(&tr->tthreads);
	restart_held(tt);
	waited = util_now_us();
	/*
	 * __WNOTHREAD: only our own tracees; the other tracer threads wait for
	 * theirs. Not once woken since the loop's wake_arm (wake.h): a thread
	 * handed over or a stop passed on since we looked has no wait4 to end.
	 */
	tid = kops->wait_unless_woken(-1, status, __WALL | __WNOTHREAD);
	tt->regs_tid = 0;
	if (tid > 0 && WIFSTOPPED(*status) && WSTOPSIG(*status) == SIGTRAP && (*status >> 16) == 0 &&
	    kops->getregs(tid, &tt->regs) == 0)
		tt->regs_tid = tid;
	/* Our own tracee, stopped: its placement needs no lock. With --pin we stay where we are. */
	if (tid > 0 && WIFSTOPPED(*status))
		cpu_on_stop(&tt->cpu, tid, !tr->opt->no_cpu_follow && !tr->opt->pin);
	locked = util_now_us();
	tthread_lock(&tr->tthreads);
	if (tt->index == 0) {
		due_work_done(tr, "waiting for a stop", waited);
		due_work_done(tr, "waiting for the other tracer threads", locked);
	}
	if (tid < 0 && errno == EINTR)
		return 0;
	/* Not ours (handover_tracer_of): its tracer is told, and handles it. */
	if (tid > 0 && (to = handover_tracer_of(tr, tt, tid, *status))) {
		handover_pass_on(tt, to, tid, *status);
		return 0;
	}
	if (tid > 0 && tr->opt->pin && (t = thread_find(tr, tid))) {
		/* Pinned elsewhere: it came to us and ran on before loop_arrived moved it. */
		if (t->pin_cpu >= 0 && t->pin_cpu != tt->cpu.bound)
			tt->cpu.unpinned++;
		loop_pin(tt, t);
	}
	return tid;
}

void
loop_reports_due(struct jt_tracer *tr)
{
	struct jt_proc *p;

	while ((p = tr->ended)) {
		tr->ended = p->next;
		snapshot_write(tr, p, p->report_due);
		proc_free(tr, p);
	}
	if (tr->detached && (p = proc_find(tr, tr->main_pid)) && p->report_due) {
		snapshot_write(tr, p, p->report_due);
		p->report_due = NULL;
	}
}

/*
 * Handles a stop the loop waited for. Its allocation event may unwind with
 * the lock released (proc_unwind); a stop handled inside work on a whole
 * process (stopall.c) never does, as that work walks the session's tables.
 */
static void
loop_dispatch(struct jt_tracer *tr, struct jt_tthread *tt, pid_t tid, int status)
{
	uint64_t since = util_now_us();

	tt->unwind_unlock = 1;
	testfault_point("stop");
	stop_dispatch(tr, tid, status);
	tt->unwind_unlock = 0;
	loop_reports_due(tr);
	if (tt->index == 0)
		due_work_done(tr, "handling a stop", since);
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
	if (tt->tr->opt->pin)
		debug_msg("tracer thread %d: --pin: %lu stops of a thread that ran on unpinned after it came to it",
			  tt->index, c->unpinned);
}

/* A tracer thread other than the main one: serves its own tracees until told to quit. */
static void *
loop_tthread(void *arg)
{
	struct jt_tthread *tt = arg;
	struct jt_tracer *tr = tt->tr;

	/* Its own signal stack, and the way-out signal unblocked: a fault here lets its tracees go. */
	emerg_thread_init();
	/* --pin: one tracer thread per CPU, each staying on its own. */
	if (tr->opt->pin)
		cpu_bind_nth(&tt->cpu, tt->index);
	tthread_lock(&tr->tthreads);
	while (!tr->tthreads.quit) {
		int status;
		pid_t tid;

		/* Before looking at the work: a wake from here on ends the wait below. */
		wake_arm();
		handover_receive(tt);
		loop_reports_due(tr);
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
	tthread_clear_waited(tt);
	loop_report_cpu(tt);
	tthread_unlock(&tr->tthreads);
	return NULL;
}

/*
 * How many tracer threads to run: one per CPU we may use, unless
 * --tracer-threads chose (cmdline.c keeps that within 1..JT_MAX_TTHREADS). One
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
	/*
	 * What came back stopped runs on under tracer thread 0, which is the
	 * only tracer thread now: taken over whatever the rounds an exec in
	 * its process makes it wait (handover_receive), 10 s at most.
	 */
	for (int rounds = 0; self->inbox && rounds < 500; rounds++)
		handover_receive(self);
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
	uint64_t since;

	tr->status_ms = util_now_ms();
	tr->arrived = loop_arrived;
	due_start(tr);
	tthread_start(&tr->tthreads, loop_thread_count(tr), loop_tthread);
	/* Only now: the other tracer threads must not inherit a single CPU. */
	if (tr->opt->pin)
		cpu_bind_nth(&self->cpu, 0);
	debug_msg("%d tracer thread%s, CPU placement %s, breakpoints %s", tr->tthreads.n,
		  tr->tthreads.n == 1 ? "" : "s", tr->opt->pin ? "pinned" : tr->opt->no_cpu_follow ? "off" : "on",
		  tr->opt->no_emulate ? "stepped over" : "emulated");
	tthread_lock(&tr->tthreads);
	while (!loop_done(tr)) {
		int status;
		pid_t tid;

		/* Before looking at the work and the signals' flags: a wake from here on ends the wait below. */
		wake_arm();
		due_check(tr);
		if (tr->detached)
			break;
		since = util_now_us();
		loop_tick(tr, self);
		handover_receive(self);
		loop_run_deferred(tr);
		loop_rtld_due(tr);
		loop_reports_due(tr);
		due_work_done(tr, "taking threads handed over", since);
		tid = loop_wait_next(tr, self, &status);
		if (tid == 0)
			continue;
		if (tid < 0) {
			/* With -f, the processes left may all be traced by other tracer threads. */
			if (errno == ECHILD && tr->tthreads.n > 1 && !loop_done(tr)) {
				handover_wait(tr, due_wait_ms(tr, 200));
				continue;
			}
			if (errno != ECHILD)
				perror_msg("wait4");
			break;
		}
		loop_dispatch(tr, self, tid, status);
	}
	loop_report_cpu(self);
	/* Events lost since stderr last said so, said now whatever the rate limit. */
	tr->lost_said_ms = tr->lost_check_ms = 0;
	loop_lost_say(tr, util_now_ms());
	/* The last --interval snapshot is written, and how long it took known. */
	snapshot_sync(tr);
	if (tr->due_skipped) {
		char a[32];

		error_msg("%u --interval snapshot%s passed over in all: writing one took up to %s ms", tr->due_skipped,
			  tr->due_skipped == 1 ? "" : "s", util_num(a, tr->due_longest_ms));
	}
	due_stop();
	loop_stop_tthreads(tr);
	loop_reports_due(tr);
	tthread_clear_waited(self);
	tthread_unlock(&tr->tthreads);
	cpu_release(&self->cpu);
	if (tr->status_shown)
		fputc('\n', stderr);
	return tr->fatal ? -1 : 0;
}
