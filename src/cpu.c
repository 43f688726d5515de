/* cpu.c - moves each tracer thread next to the threads it serves; cross-CPU ptrace wakeups cost several times more. */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "cpu.h"

void
cpu_init(struct jt_cpu *c)
{
	memset(c, 0, sizeof(*c));
	c->bound = -1;
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
	char path[64], buf[1024], *p;
	int cpu = -1, field;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	if (!(f = fopen(path, "re")))
		return -1;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* "processor" is field 39; fields after the comm start at 3. */
	for (field = 2; p && field < 39; field++)
		p = strchr(p + 1, ' ');
	if (p && sscanf(p + 1, "%d", &cpu) != 1)
		cpu = -1;
	return cpu;
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

int
cpu_adapt(struct jt_cpu *c)
{
	struct sched_param sp = { 0 };
	int running = cpu_runnable(), want;

	if (cpu_save(c) < 0)
		return -1;
	/*
	 * SCHED_IDLE only while there is a CPU to spare for the others; on a
	 * saturated machine an idle-class tracer would starve, and the target
	 * waiting on it with it.
	 */
	want = running >= 0 && running <= CPU_COUNT(&c->allowed) ? SCHED_IDLE : SCHED_OTHER;
	if (want == sched_getscheduler(0))
		return 0;
	return sched_setscheduler(0, want, &sp);
}

int
cpu_follow(struct jt_cpu *c, pid_t tid)
{
	int cpu = cpu_of(tid);
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
