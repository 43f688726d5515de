/* cpu.h - keeps a tracer thread on the CPU its tracees run on, so every stop is a same-CPU wakeup. */
#ifndef JT_CPU_H
#define JT_CPU_H

#include <sched.h>
#include <sys/types.h>

/* One tracer thread's placement. Each tracer thread has its own; zero-initialise it. */
struct jt_cpu {
	cpu_set_t allowed;	/* the affinity it started with: the CPUs the user allows */
	int saved;		/* allowed is filled in */
	int bound;		/* CPU it is bound to now, or -1 (set by cpu_init) */
};

void cpu_init(struct jt_cpu *c);

/* Returns the CPU tid last ran on (from /proc/TID/stat), or -1. */
int cpu_of(pid_t tid);

/* Number of CPUs the calling thread may run on, at least 1. */
int cpu_count_allowed(void);

/*
 * Moves the calling tracer thread onto the CPU tid last ran on, if that is
 * one we may run on. Never touches the target's own affinity. Returns the
 * CPU we are now bound to, or -1 when nothing changed.
 */
int cpu_follow(struct jt_cpu *c, pid_t tid);

/*
 * Puts the calling tracer thread in SCHED_IDLE while the machine has a CPU
 * to spare, and back in SCHED_OTHER when it is saturated. Call it a few times
 * a second. The scheduler then counts the tracer's CPU as idle when the
 * tracer wakes a tracee, and places the tracee there, next to the tracer,
 * instead of on another idle CPU: every stop then costs a same-CPU switch
 * rather than a cross-CPU wakeup.
 */
int cpu_adapt(struct jt_cpu *c);

/* Gives the calling tracer thread back the affinity and policy it started with. */
void cpu_release(struct jt_cpu *c);

#endif
