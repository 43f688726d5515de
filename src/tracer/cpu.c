/* cpu.c - moves each tracer thread next to the threads it serves; cross-CPU ptrace wakeups cost several times more. */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "cpu.h"
#include "procfs.h"
#include "util.h"

void
cpu_init(struct jt_cpu *c)
{
	memset(c, 0, sizeof(*c));
	c->bound = -1;
	c->probe_every = CPU_PROBE_EVERY;
}

/*
 * The affinity the thread was started with, saved before the first move, so
 * that we only ever pick CPUs the user allowed and can restore them.
 */
static int
cpu_save(struct jt_cpu *c)
{
	if (!c->saved) {
		if (sched_getaffinity(0, sizeof(c->allowed), &c->allowed) < 0)
			return -1;
		c->saved = 1;
	}
	return 0;
}

int
cpu_count_allowed(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

int
cpu_of(pid_t tid)
{
	unsigned long long cpu;

	/* "processor" is field 39. */
	return procfs_stat_field(tid, 39, &cpu) == 0 ? (int)cpu : -1;
}

/* Tasks runnable on the machine right now, from the 4th field of /proc/loadavg. */
static int
cpu_runnable(void)
{
	int running = -1;
	FILE *f = fopen("/proc/loadavg", "re");

	if (!f)
		return -1;
	if (fscanf(f, "%*s %*s %*s %d", &running) != 1)
		running = -1;
	fclose(f);
	return running;
}

/*
 * Two samples in a row must find the machine saturated before we leave
 * SCHED_IDLE. One sample sees one instant: a daemon or a kernel worker that
 * happens to be runnable then would put us in SCHED_OTHER for a whole
 * period, and in SCHED_OTHER the scheduler wakes the tracee on the other,
 * idle, CPU at every stop (ten times the cost on a 2-CPU VM).
 */
#define CPU_SATURATED_SAMPLES 2

int
cpu_policy_for(struct jt_cpu *c, int running)
{
	/*
	 * SCHED_IDLE only while there is a CPU to spare for the others; on a
	 * saturated machine an idle-class tracer would starve, and the target
	 * waiting on it with it. Called at a stop, running counts us and the
	 * others but not the stopped tracee: it and we take turns on one CPU,
	 * and the others may have all the rest.
	 */
	if (running >= 0 && running <= CPU_COUNT(&c->allowed))
		c->saturated = 0;
	else
		c->saturated++;
	return c->saturated >= CPU_SATURATED_SAMPLES ? SCHED_OTHER : SCHED_IDLE;
}

/*
 * Whether a thread of ours may leave SCHED_IDLE again: the kernel lets it
 * only with CAP_SYS_NICE, or when RLIMIT_NICE allows its nice value (20 -
 * nice at most; the default limit, 0, does not). A plain user's tracer
 * thread that went idle stayed so for good: starved on a loaded host, and
 * every thread it made with an explicit SCHED_OTHER (the report writer) was
 * refused, EPERM: no report was written at all. Asked once.
 */
static int
cpu_idle_reversible(void)
{
	static int known, yes;
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	struct rlimit rl;
	int nice;

	if (known)
		return yes;
	known = 1;
	if (syscall(SYS_capget, &h, d) == 0 && (d[CAP_SYS_NICE / 32].effective >> (CAP_SYS_NICE % 32)) & 1)
		return yes = 1;
	nice = getpriority(PRIO_PROCESS, 0);
	yes = getrlimit(RLIMIT_NICE, &rl) == 0 &&
	      (rl.rlim_cur == RLIM_INFINITY || (rlim_t)(20 - nice) <= rl.rlim_cur);
	if (!yes)
		debug_msg("tracer threads stay in SCHED_OTHER: without CAP_SYS_NICE or RLIMIT_NICE %d, SCHED_IDLE could "
			  "not be left", 20 - nice);
	return yes;
}

int
cpu_adapt(struct jt_cpu *c)
{
	struct sched_param sp = { 0 };
	int want;

	if (cpu_save(c) < 0)
		return -1;
	want = cpu_policy_for(c, cpu_runnable());
	if (want == SCHED_IDLE && !cpu_idle_reversible())
		want = SCHED_OTHER;
	if (__atomic_load_n(&c->hurry, __ATOMIC_RELAXED))
		want = SCHED_OTHER;
	if (want == sched_getscheduler(0))
		return 0;
	return sched_setscheduler(0, want, &sp);
}

int
cpu_adapt_burst(struct jt_cpu *c)
{
	c->saturated = CPU_SATURATED_SAMPLES - 1;
	return cpu_adapt(c);
}

void
cpu_hurry(struct jt_cpu *c, pid_t tid, int on)
{
	struct sched_param sp = { 0 };

	__atomic_store_n(&c->hurry, on, __ATOMIC_RELAXED);
	if (on && sched_getscheduler(tid) == SCHED_IDLE)
		sched_setscheduler(tid, SCHED_OTHER, &sp);
	else if (!on && !tid && c->adapt_ms)	/* only a thread cpu_on_stop adapts: not under --pin, --no-cpu-follow */
		cpu_adapt(c);
}

/* Binds the calling thread to cpu, if it is one we may run on. Returns cpu, or -1. */
static int
cpu_bind(struct jt_cpu *c, int cpu)
{
	cpu_set_t one;

	if (cpu_save(c) < 0)
		return -1;
	if (cpu < 0 || cpu == c->bound || !CPU_ISSET(cpu, &c->allowed))
		return -1;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		return -1;
	c->bound = cpu;
	return cpu;
}

int
cpu_follow(struct jt_cpu *c, pid_t tid)
{
	return cpu_bind(c, cpu_of(tid));
}

/*
 * Every few stops we look at how often we slept. A tracee resumed on our
 * CPU preempts us (SCHED_IDLE) and stops again before we run: an
 * involuntary switch, and wait4 finds its stop waiting. A tracee resumed on
 * another CPU lets us run on into wait4 and sleep there: a voluntary one.
 * When most of the last stops were voluntary, it has moved (or it sleeps in
 * system calls): look where it is. One getrusage per probe instead of a
 * /proc read at each stop. When the tracee is found elsewhere again and
 * again, following does not keep it (the scheduler wakes it on the other
 * CPU each time): cpu_on_stop then probes half as often, down to once per
 * sample, and back to every CPU_PROBE_EVERY stops once we stop sleeping.
 */
/* Non-zero when a probe is due and says: look where the tracee is. */
static int
cpu_probe(struct jt_cpu *c)
{
	struct rusage ru;
	long slept;

	if (--c->probe_in > 0)
		return 0;
	c->probe_in = c->probe_every;
	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return 0;
	slept = ru.ru_nvcsw - c->nvcsw;
	c->nvcsw = ru.ru_nvcsw;
	if (slept > c->probe_every / 2)
		return 1;
	c->probe_every = CPU_PROBE_EVERY;
	return 0;
}

void
cpu_on_stop(struct jt_cpu *c, pid_t tid, int follow)
{
	int periodic = c->stops++ % CPU_SAMPLE_EVERY == 0, probed, cpu, here;
	uint64_t now;

	if (follow && (now = util_now_ms()) - c->adapt_ms >= 200) {
		cpu_adapt(c);
		c->adapt_ms = now;
	}
	probed = follow && cpu_probe(c);
	if (!periodic && !probed)
		return;
	if ((cpu = cpu_of(tid)) < 0)
		return;
	here = sched_getcpu();
	if (periodic) {
		c->samples++;
		c->cross += cpu != here;
	} else {
		c->checks++;
	}
	if (cpu == here && cpu == c->bound)
		return;
	if (probed && c->probe_every < CPU_SAMPLE_EVERY)
		c->probe_every *= 2;
	if (follow && cpu_bind(c, cpu) >= 0)
		c->moves++;
}

int
cpu_bind_nth(struct jt_cpu *c, int n)
{
	int count;

	if (cpu_save(c) < 0 || (count = CPU_COUNT(&c->allowed)) == 0)
		return -1;
	n %= count;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &c->allowed) && n-- == 0)
			return cpu_bind(c, cpu);
	return -1;
}

int
cpu_pin(pid_t tid, int cpu, cpu_set_t *saved)
{
	cpu_set_t one;

	if (saved && sched_getaffinity(tid, sizeof(*saved), saved) < 0)
		return -1;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(tid, sizeof(one), &one);
}

int
cpu_unpin(pid_t tid, const cpu_set_t *saved)
{
	return sched_setaffinity(tid, sizeof(*saved), saved);
}

void
cpu_release(struct jt_cpu *c)
{
	struct sched_param sp = { 0 };

	if (c->saved && c->bound >= 0)
		sched_setaffinity(0, sizeof(c->allowed), &c->allowed);
	c->bound = -1;
	/* Writing the report is ordinary work again. */
	if (sched_getscheduler(0) == SCHED_IDLE)
		sched_setscheduler(0, SCHED_OTHER, &sp);
}
