/* cpu.h - keeps the tracer on the CPU its tracee runs on, so every stop is a same-CPU wakeup. */
#ifndef JT_CPU_H
#define JT_CPU_H

#include <sys/types.h>

/* Returns the CPU tid last ran on (from /proc/TID/stat), or -1. */
int cpu_of(pid_t tid);

/*
 * Moves the calling tracer thread onto the CPU tid last ran on, if that is
 * one we may run on. Never touches the target's own affinity. Returns the
 * CPU we are now bound to, or -1 when nothing changed.
 */
int cpu_follow(pid_t tid);

/*
 * Puts the tracer in SCHED_IDLE while the machine has a CPU to spare, and
 * back in SCHED_OTHER when it is saturated. Call it a few times a second. The scheduler then counts the tracer's CPU
 * as idle when the tracer wakes a tracee, and places the tracee there, next
 * to the tracer, instead of on another idle CPU: every stop then costs a
 * same-CPU switch rather than a cross-CPU wakeup.
 */
int cpu_adapt(void);

/* Gives the tracer back the affinity it started with. */
void cpu_release(void);

#endif
