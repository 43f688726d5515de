/* loop.c - the tracer threads' loops: waiting for stops, the tick, SIGINT and SIGUSR1, and the end. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpu.h"
#include "detach.h"
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

/* The process-wide timer of the next due snapshot, and the main tracer thread it wakes. */
static timer_t loop_due_timer;
static int loop_due_timer_made;
static pid_t loop_main_tid;

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

/*
 * --interval and --duration: snapshots fall due at fixed times of the main
 * process's clock (its JSON time_ms), k * interval and duration after the
 * loop began (after the attach: an attach slowed down by a busy host does not
 * eat into the duration), never "interval after the last one", so no
 * lateness adds up. They are checked between any two stops, and a timer on
 * CLOCK_MONOTONIC (the clock of util_now_us) wakes wait4 at the due time of
 * the next.
 */

/* ms of the main process's clock, as its snapshots' time_ms count them. */
static uint64_t
loop_time_ms(const struct jt_tracer *tr)
{
	return (util_now_us() - tr->origin_us) / 1000;
}

static uint64_t
loop_secs_ms(double s)
{
	return (uint64_t)(s * 1000 + 0.5);
}

/* --duration's end in time_ms, or 0 when it has none (it must be attached). */
static uint64_t
loop_duration_end(struct jt_tracer *tr)
{
	struct jt_proc *p = proc_find(tr, tr->main_pid);

	return p && p->attached && tr->opt->duration > 0 ? tr->start_ms + loop_secs_ms(tr->opt->duration) : 0;
}

/* The first due time after after_ms (not before start_ms): the next of --interval's, or --duration's end; 0 for none. */
static uint64_t
loop_next_due(struct jt_tracer *tr, uint64_t after_ms)
{
	uint64_t iv = loop_secs_ms(tr->opt->interval), end = loop_duration_end(tr), due = 0;

	if (iv)
		due = tr->start_ms + ((after_ms - tr->start_ms) / iv + 1) * iv;
	if (end > after_ms && (!due || end < due))
		due = end;
	return due;
}

/*
 * How long before a due time tracer thread 0 leaves SCHED_IDLE (cpu_hurry):
 * in SCHED_IDLE a tracee resumed on its CPU preempts it, and on a busy host
 * it may then not run again for seconds. Half the interval at most.
 */
#define LOOP_HURRY_MS 50

static uint64_t
loop_hurry_ms(const struct jt_tracer *tr)
{
	uint64_t half = loop_secs_ms(tr->opt->interval) / 2;

	return half && half < LOOP_HURRY_MS ? half : LOOP_HURRY_MS;
}

/*
 * The due timer's notification, in a thread of glibc's that runs in
 * SCHED_OTHER: tracer thread 0 may be in SCHED_IDLE and, on a busy host,
 * not run for seconds (16 s seen under ASan at a load of 13 on 2 CPUs), so
 * it is hurried from here, then its wait4 interrupted by the tick's signal. Nothing
 * here touches a tracee.
 */
static void
loop_on_due_timer(union sigval v)
{
	struct jt_tthread *t0 = v.sival_ptr;

	cpu_hurry(&t0->cpu, loop_main_tid, 1);
	syscall(SYS_tgkill, getpid(), loop_main_tid, SELFSIG_TICK);
}

/* Makes the due timer, for the calling thread, tracer thread 0. */
static void
loop_due_timer_make(void)
{
	struct sched_param sp = { 0 };
	pthread_attr_t attr;
	struct sigevent ev = {
		.sigev_notify = SIGEV_THREAD, .sigev_notify_function = loop_on_due_timer,
		.sigev_value.sival_ptr = tthread_self(), .sigev_notify_attributes = &attr,
	};

	loop_main_tid = gettid();
	pthread_attr_init(&attr);
	/* Not the caller's policy, which cpu_adapt may make SCHED_IDLE later. */
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &sp);
	loop_due_timer_made = timer_create(UTIL_CLOCK, &ev, &loop_due_timer) == 0;
	pthread_attr_destroy(&attr);
}

/* Sets the timer to hurry and wake tracer thread 0 at at_ms of the main process's clock. */
static void
loop_arm(const struct jt_tracer *tr, uint64_t at_ms)
{
	uint64_t at = tr->origin_us + at_ms * 1000;
	struct itimerspec its = { { 0, 0 }, { (time_t)(at / 1000000), (long)(at % 1000000) * 1000 } };

	if (loop_due_timer_made)
		timer_settime(loop_due_timer, TIMER_ABSTIME, &its, NULL);
}

/* Sets the next due time after after_ms, and the timer to wake us a little before it. */
static void
loop_schedule(struct jt_tracer *tr, uint64_t after_ms)
{
	uint64_t hurry = loop_hurry_ms(tr);

	tr->due_ms = loop_next_due(tr, after_ms);
	tr->late_why[0] = '\0';
	cpu_hurry(&tthread_self()->cpu, 0, 0);
	tr->due_armed = tr->due_ms <= after_ms + hurry;
	if (tr->due_ms)
		loop_arm(tr, tr->due_armed ? tr->due_ms : tr->due_ms - hurry);
}

/* Close to the due time: out of SCHED_IDLE, and the timer set for the due time itself. */
static void
loop_hurry(struct jt_tracer *tr, uint64_t now_ms)
{
	struct jt_cpu *c = &tthread_self()->cpu;

	if (!tr->due_ms || tr->due_armed || now_ms + loop_hurry_ms(tr) < tr->due_ms)
		return;
	cpu_hurry(c, 0, 1);
	loop_arm(tr, tr->due_ms);
	tr->due_armed = 1;
}

/*
 * Called by tracer thread 0 after each piece of its work, begun at
 * since_us: the one under way at the due time held the snapshot up, and is
 * its reason if it is late.
 */
static void
loop_work_done(struct jt_tracer *tr, const char *what, uint64_t since_us)
{
	uint64_t now = util_now_us(), due = tr->origin_us + tr->due_ms * 1000;

	if (!tr->due_ms || since_us >= due || now < due)
		return;
	snprintf(tr->late_why, sizeof(tr->late_why), "%s took %llu ms", what,
		 (unsigned long long)((now - since_us) / 1000));
}

/* How long to wait for other work, at most ms: not past the next due time. */
static unsigned
loop_wait_ms(const struct jt_tracer *tr, unsigned ms)
{
	uint64_t now = loop_time_ms(tr);

	if (!tr->due_ms || tr->due_ms >= now + ms)
		return ms;
	return tr->due_ms > now ? (unsigned)(tr->due_ms - now) : 1;
}

/* Writes the snapshot that fell due at due_ms, now_ms: saying when it is late, and why. */
static void
loop_due_snapshot(struct jt_tracer *tr, struct jt_proc *p, const char *reason, uint64_t due_ms, uint64_t now_ms)
{
	struct jt_due due = { due_ms, now_ms - due_ms, NULL };

	if (due.late_ms > LOOP_LATE_MS) {
		/* None of our work was under way at the due time: we waited for a CPU. */
		due.late_why = tr->late_why[0] ? tr->late_why : "jmptrace was not given a CPU in time (a busy host)";
		debug_msg("snapshot %u (%s) is %llu ms late, due at %llu ms: %s", tr->nsnapshots + 1, reason,
			  (unsigned long long)due.late_ms, (unsigned long long)due.due_ms, due.late_why);
	}
	tr->due = &due;
	snapshot_write(tr, p, reason);
	tr->due = NULL;
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
 * How long a SIGTSTP waits for the traced processes to stop too (the
 * terminal's Ctrl-Z reaches their process group with ours, in any order).
 */
#define LOOP_TSTP_MS 200

/* Non-zero when every thread of every traced process sits in a group-stop: nothing waits for us at a breakpoint. */
static int
loop_all_group_stopped(struct jt_tracer *tr)
{
	int n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		for (struct jt_thread *t = tr->threads[i]; t; t = t->hnext, n++)
			if (t->state != TS_GROUP_STOPPED)
				return 0;
	return n > 0;
}

/*
 * SIGTSTP (Ctrl-Z): jmptrace stops only along with the processes it traces,
 * which would otherwise wait at its breakpoints for as long as it is
 * stopped. A Ctrl-Z that stopped them too stops jmptrace; one sent to
 * jmptrace alone is refused with a line.
 */
static void
loop_tstp(struct jt_tracer *tr, struct jt_proc *p)
{
	uint64_t since;

	if (!selfsig_tstp_pending(&since))
		return;
	if (loop_all_group_stopped(tr)) {
		selfsig_tstp_done();
		debug_msg("SIGTSTP: every traced thread is stopped too: stopping");
		kill(getpid(), SIGSTOP);
		return;
	}
	if (util_now_ms() - since < LOOP_TSTP_MS)
		return;
	selfsig_tstp_done();
	error_msg("SIGTSTP refused: process %d would wait at jmptrace's breakpoints while jmptrace is stopped; %s",
		  p->pid, p->attached ? "Ctrl-C or SIGTERM detaches" : "stop the program itself (kill -TSTP), or Ctrl-C");
}

/* The snapshot that is due, if any, or asked for by a signal; then the stop a signal asked for. */
static void
loop_flags(struct jt_tracer *tr)
{
	struct jt_proc *p = proc_find(tr, tr->main_pid);
	int stop, due, wrote = 0, snap, ended;
	uint64_t now, since = util_now_us();

	if (!p)
		return;
	loop_tstp(tr, p);
	stop = selfsig_take_stop();
	snap = selfsig_take_snapshot();
	now = loop_time_ms(tr);
	loop_hurry(tr, now);
	due = tr->due_ms && now >= tr->due_ms;
	/* --duration's end: a last snapshot, its due one, then the detach. */
	ended = due && !stop && loop_duration_end(tr) && now >= loop_duration_end(tr);
	if (tr->status_shown && (snap || stop || due))
		fputc('\n', stderr);
	if (snap || stop) {
		/*
		 * Out of SCHED_IDLE for it (and the detach after a stop): the
		 * program's threads wait stopped meanwhile, and an idle-class
		 * thread 0 whose CPU another task holds got no CPU for a minute
		 * (detach_signal.t, 1 run in 10: symbolizing, 0 s of CPU in 19 s).
		 */
		cpu_hurry(&tthread_self()->cpu, 0, 1);
		snapshot_write(tr, p, stop ? "signal" : "sigusr1");
		if (!stop && !tr->due_armed)
			cpu_hurry(&tthread_self()->cpu, 0, 0);
		wrote = 1;
	}
	if (due && !stop) {
		loop_due_snapshot(tr, p, ended ? "duration" : "interval", ended ? loop_duration_end(tr) : tr->due_ms, now);
		wrote = 1;
	}
	if (due)
		loop_schedule(tr, now);
	if (wrote)
		loop_work_done(tr, tr->opt->leak_check ? "the snapshot before it, with its leak check,"
			       : "the snapshot before it", since);
	if (!stop && !ended)
		return;
	/* A signal that ends jmptrace lets a launched program go too: it runs on, untraced. */
	if (p->attached || selfsig_fatal()) {
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
	/* __WNOTHREAD: only our own tracees; the other tracer threads wait for theirs. */
	tid = kops->wait(-1, status, __WALL | __WNOTHREAD);
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
		loop_work_done(tr, "waiting for a stop", waited);
		loop_work_done(tr, "waiting for the other tracer threads", locked);
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
		loop_work_done(tr, "handling a stop", since);
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
	/* What came back stopped runs on under tracer thread 0, which is the only tracer thread now. */
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

/* Starts the clock of the due snapshots: the main process's time_ms, now, and the first due time. */
static void
loop_start_clock(struct jt_tracer *tr)
{
	struct jt_proc *p = proc_find(tr, tr->main_pid);

	/* time_ms began at the main process's heap_new: before the launch or the attach. */
	tr->start_ms = p ? heap_clock_ms(p->heap) : 0;
	tr->origin_us = util_now_us() - tr->start_ms * 1000;
	if (tr->opt->interval > 0 || tr->opt->duration > 0)
		loop_due_timer_make();
	loop_schedule(tr, tr->start_ms);
}

int
loop_run(struct jt_tracer *tr)
{
	struct jt_tthread *self = tthread_self();
	uint64_t since;

	tr->status_ms = util_now_ms();
	tr->arrived = loop_arrived;
	loop_start_clock(tr);
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

		loop_flags(tr);
		if (tr->detached)
			break;
		since = util_now_us();
		loop_tick(tr, self);
		handover_receive(self);
		loop_run_deferred(tr);
		loop_rtld_due(tr);
		loop_reports_due(tr);
		loop_work_done(tr, "taking threads handed over", since);
		tid = loop_wait_next(tr, self, &status);
		if (tid == 0)
			continue;
		if (tid < 0) {
			/* With -f, the processes left may all be traced by other tracer threads. */
			if (errno == ECHILD && tr->tthreads.n > 1 && !loop_done(tr)) {
				handover_wait(tr, loop_wait_ms(tr, 200));
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
	if (loop_due_timer_made)
		timer_delete(loop_due_timer);	/* no more hurry or wake-up for thread 0 */
	loop_due_timer_made = 0;
	loop_stop_tthreads(tr);
	loop_reports_due(tr);
	tthread_clear_waited(self);
	tthread_unlock(&tr->tthreads);
	cpu_release(&self->cpu);
	if (tr->status_shown)
		fputc('\n', stderr);
	return tr->fatal ? -1 : 0;
}
