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

/* Gives the tracer back the affinity it started with. */
void cpu_release(void);

#endif
