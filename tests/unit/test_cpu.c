/* test_cpu.c - unit tests of the tracer threads' CPU placement: policy, sampling, following, pinning. */
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu.h"
#include "tap.h"

/* One saturated sample is an instant, not a saturated machine; two in a row are. */
static void
test_policy(void)
{
	struct jt_cpu c;

	cpu_init(&c);
	CPU_ZERO(&c.allowed);
	CPU_SET(0, &c.allowed);
	CPU_SET(1, &c.allowed);
	c.saved = 1;
	ok(cpu_policy_for(&c, 2) == SCHED_IDLE, "2 runnable on 2 CPUs: SCHED_IDLE");
	ok(cpu_policy_for(&c, 3) == SCHED_IDLE, "3 runnable once: still SCHED_IDLE");
	ok(cpu_policy_for(&c, 2) == SCHED_IDLE, "then 2: SCHED_IDLE");
	ok(cpu_policy_for(&c, 3) == SCHED_IDLE, "3 again, once");
	ok(cpu_policy_for(&c, 4) == SCHED_OTHER, "more than 2 twice in a row: SCHED_OTHER");
	ok(cpu_policy_for(&c, 5) == SCHED_OTHER, "and while it stays so");
	ok(cpu_policy_for(&c, 1) == SCHED_IDLE, "a CPU to spare again: SCHED_IDLE");
	ok(cpu_policy_for(&c, -1) == SCHED_IDLE, "unknown once: SCHED_IDLE");
}

/*
 * cpu_hurry: out of SCHED_IDLE at once, and cpu_adapt keeps it so whatever
 * the machine looks like, until the hurry is over; then it chooses at once.
 */
static void
test_hurry(void)
{
	struct sched_param sp = { 0 };
	struct jt_cpu c;

	cpu_init(&c);
	if (sched_setscheduler(0, SCHED_IDLE, &sp) < 0) {
		ok(0, "SCHED_IDLE to start from");
		return;
	}
	cpu_hurry(&c, 0, 1);
	ok(sched_getscheduler(0) == SCHED_OTHER, "cpu_hurry: SCHED_OTHER at once");
	c.saturated = 0;
	cpu_adapt(&c);
	ok(sched_getscheduler(0) == SCHED_OTHER, "cpu_adapt keeps it, a CPU to spare or not");
	/* A thread that does not follow its tracees (--pin, --no-cpu-follow) is never adapted. */
	cpu_hurry(&c, 0, 1);
	cpu_hurry(&c, 0, 0);
	ok(!c.hurry && sched_getscheduler(0) == SCHED_OTHER, "cpu_hurry(off) of a thread cpu_on_stop never adapted: SCHED_OTHER still");
	/* One saturated sample is not enough to stay out of SCHED_IDLE. */
	cpu_hurry(&c, 0, 1);
	c.saturated = 0;
	c.adapt_ms = 1;	/* as cpu_on_stop leaves it */
	cpu_hurry(&c, 0, 0);
	ok(!c.hurry && (sched_getscheduler(0) == SCHED_IDLE || geteuid() != 0),
	   "cpu_hurry(off), by a following thread itself: cpu_adapt chooses at once (SCHED_IDLE, a CPU to spare, as root)");
	sched_setscheduler(0, SCHED_OTHER, &sp);
}

/* A child stopped on CPU `cpu`, that stops again each time it is continued. Returns its pid, or -1. */
static pid_t
stopped_child_on(int cpu)
{
	cpu_set_t one;
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0)
			_exit(1);
		/* Make sure it has run on that CPU before it stops. */
		while (sched_getcpu() != cpu)
			sched_yield();
		for (;;)
			raise(SIGSTOP);
	}
	if (pid < 0 || waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status))
		return -1;
	return pid;
}

static void
test_sample_and_follow(void)
{
	struct jt_cpu c;
	cpu_set_t got, saved;
	int here, there, status;
	pid_t child;

	cpu_init(&c);
	here = cpu_bind_nth(&c, 0);
	there = -1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &c.allowed) && cpu != here) {
			there = cpu;
			break;
		}
	if (here < 0 || there < 0) {
		ok(1, "# SKIP needs 2 CPUs");
		cpu_release(&c);
		return;
	}
	if ((child = stopped_child_on(there)) < 0) {
		ok(0, "a child stopped on CPU %d", there);
		cpu_release(&c);
		return;
	}
	ok(cpu_of(child) == there, "cpu_of: the child stopped on CPU %d", there);

	/* Measuring only: every 64th stop sampled, each one on the other CPU; we stay. */
	for (int i = 0; i < 2 * CPU_SAMPLE_EVERY; i++)
		cpu_on_stop(&c, child, 0);
	is_u64(c.samples, 2, "128 stops: 2 sampled");
	is_u64(c.cross, 2, "both crossed CPUs");
	ok(sched_getcpu() == here && c.moves == 0, "without follow we stay on CPU %d", here);

	/* Following: the next sample crosses, we move, and the later ones do not. */
	for (int i = 0; i < 2 * CPU_SAMPLE_EVERY; i++)
		cpu_on_stop(&c, child, 1);
	is_u64(c.samples, 4, "256 stops: 4 sampled");
	is_u64(c.cross, 3, "one more crossed, then none");
	is_u64(c.moves, 1, "moved once");
	ok(sched_getcpu() == there && c.bound == there, "we run on the child's CPU %d", there);

	/*
	 * The child moves back to our first CPU between two samples. We sleep
	 * before each of the next stops, as a tracer whose tracee runs on
	 * another CPU sleeps in wait4: the probe at the 8th sees it and we
	 * follow at once, without waiting for the next 64th stop.
	 */
	cpu_on_stop(&c, child, 1);
	if (cpu_pin(child, here, NULL) < 0 || kill(child, SIGCONT) < 0 ||
	    waitpid(child, &status, WUNTRACED) != child || !WIFSTOPPED(status) || cpu_of(child) != here) {
		ok(0, "the child stopped again on CPU %d", here);
	} else {
		unsigned long checks = c.checks;

		for (int i = 1; i < 8; i++) {
			usleep(1000);
			cpu_on_stop(&c, child, 1);
		}
		ok(sched_getcpu() == there && c.checks == checks, "7 stops: no sample, no probe yet");
		usleep(1000);
		cpu_on_stop(&c, child, 1);
		ok(c.checks == checks + 1 && c.moves == 2 && sched_getcpu() == here,
		   "the 8th: the probe found it elsewhere and we followed it to CPU %d (checks %lu, moves %lu)",
		   here, c.checks - checks, c.moves);
		is_u64(c.samples, 5, "still 5 samples");
		/* Had it gone again at once, following would not help: probe less often, until we stop sleeping. */
		is_u64(c.probe_every, 2 * CPU_PROBE_EVERY, "next probe in twice as many stops");
		for (int i = 0; i < 2 * CPU_PROBE_EVERY; i++)
			cpu_on_stop(&c, child, 1);
		is_u64(c.probe_every, CPU_PROBE_EVERY, "back to every 8 stops once we did not sleep");
		is_u64(c.moves, 2, "no move meanwhile");
	}

	/* --pin: the child (on CPU `here` only, now) pinned to the other CPU, then its affinity back. */
	ok(cpu_pin(child, there, &saved) == 0, "cpu_pin");
	ok(CPU_COUNT(&saved) == 1 && CPU_ISSET(here, &saved), "saved the child's affinity (CPU %d)", here);
	ok(sched_getaffinity(child, sizeof(got), &got) == 0 && CPU_COUNT(&got) == 1 && CPU_ISSET(there, &got),
	   "the child may run on CPU %d only", there);
	ok(cpu_unpin(child, &saved) == 0 && sched_getaffinity(child, sizeof(got), &got) == 0 &&
	   CPU_EQUAL(&got, &saved), "cpu_unpin gives it back");

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	cpu_release(&c);
	ok(sched_getaffinity(0, sizeof(got), &got) == 0 && CPU_EQUAL(&got, &c.allowed),
	   "cpu_release: our own affinity back");
}

int
main(void)
{
	test_policy();
	test_hurry();
	test_sample_and_follow();
	return tap_done();
}
