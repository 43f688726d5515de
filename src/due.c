/* due.c - what falls due between two stops: snapshots (--interval, --duration, SIGUSR1, SIGINT), the detach after, SIGTSTP. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cpu.h"
#include "detach.h"
#include "due.h"
#include "heap.h"
#include "options.h"
#include "proc.h"
#include "report.h"
#include "selfsig.h"
#include "snapshot.h"
#include "tracer.h"
#include "tthread.h"
#include "util.h"

/* The process-wide timer of the next due snapshot, and the main tracer thread it wakes. */
static timer_t due_timer;
static int due_timer_made;
static pid_t due_main_tid;

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
due_time_ms(const struct jt_tracer *tr)
{
	return (util_now_us() - tr->origin_us) / 1000;
}

static uint64_t
due_secs_ms(double s)
{
	return (uint64_t)(s * 1000 + 0.5);
}

/* --duration's end in time_ms, or 0 when it has none (it must be attached). */
static uint64_t
due_duration_end(struct jt_tracer *tr)
{
	struct jt_proc *p = proc_find(tr, tr->main_pid);

	return p && p->attached && tr->opt->duration > 0 ? tr->start_ms + due_secs_ms(tr->opt->duration) : 0;
}

/* The first due time after after_ms (not before start_ms): the next of --interval's, or --duration's end; 0 for none. */
static uint64_t
due_next(struct jt_tracer *tr, uint64_t after_ms)
{
	uint64_t iv = due_secs_ms(tr->opt->interval), end = due_duration_end(tr), due = 0;

	if (iv)
		due = tr->start_ms + ((after_ms - tr->start_ms) / iv + 1) * iv;
	if (end > after_ms && (!due || end < due))
		due = end;
	return due;
}

/*
 * How long before a due time tracer thread 0 leaves SCHED_IDLE (cpu_hurry):
 * in SCHED_IDLE a tracee resumed on its CPU preempts it, and on a busy host
 * it may then not run again for seconds. Half the interval at most. Only
 * just before: in SCHED_OTHER the scheduler wakes the tracee on the other
 * CPU at each stop, and 50 ms before each due time made 5-24% of python3's
 * stops cross CPUs under --interval 0.5 (0.1% without), 1.3x its time; the
 * timer's own hurry at the due time is what makes it prompt.
 */
#define DUE_HURRY_MS 1

static uint64_t
due_hurry_ms(const struct jt_tracer *tr)
{
	uint64_t half = due_secs_ms(tr->opt->interval) / 2;

	return half && half < DUE_HURRY_MS ? half : DUE_HURRY_MS;
}

/*
 * The due timer's notification, in a thread of glibc's that runs in
 * SCHED_OTHER: tracer thread 0 may be in SCHED_IDLE and, on a busy host,
 * not run for seconds (16 s seen under ASan at a load of 13 on 2 CPUs), so
 * it is hurried from here, then its wait4 interrupted by the tick's signal. Nothing
 * here touches a tracee.
 */
static void
due_on_timer(union sigval v)
{
	struct jt_tthread *t0 = v.sival_ptr;

	cpu_hurry(&t0->cpu, due_main_tid, 1);
	syscall(SYS_tgkill, getpid(), due_main_tid, SELFSIG_TICK);
}

/* Makes the due timer, for the calling thread, tracer thread 0. */
static void
due_timer_make(void)
{
	struct sched_param sp = { 0 };
	pthread_attr_t attr;
	struct sigevent ev = {
		.sigev_notify = SIGEV_THREAD, .sigev_notify_function = due_on_timer,
		.sigev_value.sival_ptr = tthread_self(), .sigev_notify_attributes = &attr,
	};

	due_main_tid = gettid();
	pthread_attr_init(&attr);
	/* Not the caller's policy, which cpu_adapt may make SCHED_IDLE later. */
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &sp);
	due_timer_made = timer_create(UTIL_CLOCK, &ev, &due_timer) == 0;
	pthread_attr_destroy(&attr);
}

/* Sets the timer to hurry and wake tracer thread 0 at at_ms of the main process's clock. */
static void
due_arm(const struct jt_tracer *tr, uint64_t at_ms)
{
	uint64_t at = tr->origin_us + at_ms * 1000;
	struct itimerspec its = { { 0, 0 }, { (time_t)(at / 1000000), (long)(at % 1000000) * 1000 } };

	if (due_timer_made)
		timer_settime(due_timer, TIMER_ABSTIME, &its, NULL);
}

/* Sets the next due time after after_ms, and the timer to wake us a little before it. */
static void
due_schedule(struct jt_tracer *tr, uint64_t after_ms)
{
	uint64_t hurry = due_hurry_ms(tr);

	tr->due_ms = due_next(tr, after_ms);
	tr->late_why[0] = '\0';
	cpu_hurry(&tthread_self()->cpu, 0, 0);
	/* Nothing due (no --interval, no --duration) is nothing armed: a snapshot on a signal then ends its hurry. */
	tr->due_armed = tr->due_ms && tr->due_ms <= after_ms + hurry;
	if (tr->due_ms)
		due_arm(tr, tr->due_armed ? tr->due_ms : tr->due_ms - hurry);
}

/*
 * Where the next due time is looked for once snapshots were written from
 * now_ms to end_ms. Shorter than --interval, from now_ms: the next due time
 * after it, even if it passed meanwhile. Longer, past end_ms by as long
 * again, so that the program runs at least as long as a snapshot took
 * (half the time, at worst): due at once instead, such a snapshot was
 * followed by the next with no wait4 between (the tick's wake ended each
 * at once), and the program's stops, its exit too, waited for ever, and so
 * did SIGINT. The interval's times passed over so are counted, and said
 * once on stderr.
 */
static uint64_t
due_spaced(struct jt_tracer *tr, uint64_t now_ms, uint64_t end_ms)
{
	uint64_t took = end_ms - now_ms, after = end_ms + took, iv = due_secs_ms(tr->opt->interval);
	uint64_t end = due_duration_end(tr), plain = due_next(tr, now_ms), spaced;
	unsigned passed;

	if (!iv || took < iv)
		return now_ms;
	if (took > tr->due_longest_ms)
		tr->due_longest_ms = took;
	/* --duration's end stays due when it comes. */
	if (end > now_ms && after >= end)
		after = end - 1;
	spaced = due_next(tr, after);
	if (!plain || spaced <= plain)
		return after;
	passed = (unsigned)((spaced - plain + iv - 1) / iv);
	if (!tr->due_skipped) {
		char a[32];

		error_msg("writing a snapshot took %s ms, more than --interval allows: the next ones come after the "
			  "program has run as long again (the text report counts the snapshots passed over)",
			  util_num(a, took));
	}
	tr->due_skipped += passed;
	return after;
}

/* Close to the due time: out of SCHED_IDLE, and the timer set for the due time itself. */
static void
due_hurry(struct jt_tracer *tr, uint64_t now_ms)
{
	struct jt_cpu *c = &tthread_self()->cpu;

	if (!tr->due_ms || tr->due_armed || now_ms + due_hurry_ms(tr) < tr->due_ms)
		return;
	cpu_hurry(c, 0, 1);
	due_arm(tr, tr->due_ms);
	tr->due_armed = 1;
}

void
due_work_done(struct jt_tracer *tr, const char *what, uint64_t since_us)
{
	uint64_t now = util_now_us(), due = tr->origin_us + tr->due_ms * 1000;

	if (!tr->due_ms || since_us >= due || now < due)
		return;
	snprintf(tr->late_why, sizeof(tr->late_why), "%s took %llu ms", what,
		 (unsigned long long)((now - since_us) / 1000));
}

unsigned
due_wait_ms(const struct jt_tracer *tr, unsigned ms)
{
	uint64_t now = due_time_ms(tr);

	if (!tr->due_ms || tr->due_ms >= now + ms)
		return ms;
	return tr->due_ms > now ? (unsigned)(tr->due_ms - now) : 1;
}

/*
 * A snapshot fell due while the one before was still being written beside
 * the tracing: it is passed over, the program running on meanwhile, and
 * counted (said once on stderr, then in the text report and at the end).
 */
static void
due_passed_over(struct jt_tracer *tr)
{
	if (!tr->due_skipped)
		error_msg("a snapshot was still being written when the next fell due: with --interval that short, the ones "
			  "due meanwhile are passed over (the text report counts them)");
	tr->due_skipped++;
}

/*
 * Writes the snapshot that fell due at due_ms, with the reason it is late
 * if it is (the snapshot measures that by its own time_ms, which a wait
 * for a CPU may put well after now). --interval's are written beside the
 * tracing; the last one, at --duration's end (ended), before the detach.
 */
static void
due_snapshot(struct jt_tracer *tr, struct jt_proc *p, int ended, uint64_t due_ms)
{
	const char *reason = ended ? "duration" : "interval";
	/* Without our work under way at the due time (due_work_done), we waited for a CPU. */
	struct jt_due due = { due_ms, 0, tr->late_why[0] ? tr->late_why : "jmptrace was not given a CPU in time (a busy host)" };

	tr->due = &due;
	if (ended)
		snapshot_write(tr, p, reason);
	else if (snapshot_post(tr, p, reason) > 0)
		due_passed_over(tr);
	tr->due = NULL;
}

/*
 * How long a SIGTSTP waits for the traced processes to stop too (the
 * terminal's Ctrl-Z reaches their process group with ours, in any order).
 */
#define DUE_TSTP_MS 200

/* Non-zero when every thread of every traced process sits in a group-stop: nothing waits for us at a breakpoint. */
static int
due_all_group_stopped(struct jt_tracer *tr)
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
due_tstp(struct jt_tracer *tr, struct jt_proc *p)
{
	uint64_t since;

	if (!selfsig_tstp_pending(&since))
		return;
	if (due_all_group_stopped(tr)) {
		selfsig_tstp_done();
		debug_msg("SIGTSTP: every traced thread is stopped too: stopping");
		kill(getpid(), SIGSTOP);
		return;
	}
	if (util_now_ms() - since < DUE_TSTP_MS)
		return;
	selfsig_tstp_done();
	error_msg("SIGTSTP refused: process %d would wait at jmptrace's breakpoints while jmptrace is stopped; %s",
		  p->pid, p->attached ? "Ctrl-C or SIGTERM detaches" : "stop the program itself (kill -TSTP), or Ctrl-C");
}

void
due_check(struct jt_tracer *tr)
{
	struct jt_proc *p = proc_find(tr, tr->main_pid);
	int stop, due, wrote = 0, snap, ended;
	uint64_t now, since = util_now_us();

	if (!p)
		return;
	due_tstp(tr, p);
	stop = selfsig_take_stop();
	snap = selfsig_take_snapshot();
	now = due_time_ms(tr);
	due_hurry(tr, now);
	due = tr->due_ms && now >= tr->due_ms;
	/* --duration's end: a last snapshot, its due one, then the detach. */
	ended = due && !stop && due_duration_end(tr) && now >= due_duration_end(tr);
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
		due_snapshot(tr, p, ended, ended ? due_duration_end(tr) : tr->due_ms);
		wrote = 1;
	}
	if (due)
		due_schedule(tr, wrote ? due_spaced(tr, now, due_time_ms(tr)) : now);
	if (wrote)
		due_work_done(tr, tr->opt->leak_check ? "the snapshot before it, with its leak check,"
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

void
due_start(struct jt_tracer *tr)
{
	struct jt_proc *p = proc_find(tr, tr->main_pid);

	/* time_ms began at the main process's heap_new: before the launch or the attach. */
	tr->start_ms = p ? heap_clock_ms(p->heap) : 0;
	tr->origin_us = util_now_us() - tr->start_ms * 1000;
	if (tr->opt->interval > 0 || tr->opt->duration > 0)
		due_timer_make();
	due_schedule(tr, tr->start_ms);
}

void
due_stop(void)
{
	if (due_timer_made)
		timer_delete(due_timer);	/* no more hurry or wake-up for thread 0 */
	due_timer_made = 0;
}
