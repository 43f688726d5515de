/* cpu.h - keeps a tracer thread on the CPU its tracees run on, so every stop is a same-CPU wakeup. */
#ifndef JT_CPU_H
#define JT_CPU_H

#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

/* One stop in this many is sampled: where did the tracee stop, where do we run. */
#define CPU_SAMPLE_EVERY 64
/* Stops between two looks at how often we slept waiting for the tracee (cpu.c). */
#define CPU_PROBE_EVERY 8

/* One tracer thread's placement. Each tracer thread has its own; zero-initialise it. */
struct jt_cpu {
	cpu_set_t allowed;	/* the affinity it started with: the CPUs the user allows */
	int saved;		/* allowed is filled in */
	int bound;		/* CPU it is bound to now, or -1 (set by cpu_init) */
	unsigned long stops;	/* stops seen by cpu_on_stop */
	unsigned long samples;	/* of those, sampled: every CPU_SAMPLE_EVERY-th */
	unsigned long cross;	/* sampled stops where the tracee stopped on another CPU than ours */
	long nvcsw;		/* our voluntary context switches at the last probe */
	int probe_every;	/* stops between two probes of them (set by cpu_init) */
	int probe_in;		/* stops left to the next probe */
	unsigned long checks;	/* stops checked besides the samples (on a probe's word) */
	unsigned long moves;	/* times we moved to the tracee's CPU */
	int saturated;		/* consecutive cpu_adapt calls that found no CPU to spare */
	uint64_t adapt_ms;	/* when cpu_on_stop last called cpu_adapt */
	int hurry;		/* cpu_hurry: SCHED_OTHER whatever cpu_adapt finds */
	unsigned long unpinned;	/* --pin: stops of a tracee that had run on since it came to us, not pinned to our CPU */
};

void cpu_init(struct jt_cpu *c);

/*
 * Call at every stop of tid, with tid stopped, from the tracer thread that
 * traces it. Samples every CPU_SAMPLE_EVERY-th stop (counts it in samples
 * and cross). When follow is set it also calls cpu_adapt a few times a
 * second, moves us onto tid's CPU when a sample finds it elsewhere, and
 * every few stops looks whether we mostly slept waiting for our tracees (a
 * sign that they run elsewhere) and checks then too. A few microseconds per
 * check, about one check per 64 stops while they stay with us.
 */
void cpu_on_stop(struct jt_cpu *c, pid_t tid, int follow);

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
 * to spare, and back in SCHED_OTHER when it has been saturated twice in a
 * row. Call it a few times a second, at a stop: the stopped tracee must not
 * count as a busy CPU. The scheduler then counts the tracer's CPU as idle
 * when the tracer wakes a tracee, and places the tracee there, next to the
 * tracer, instead of on another idle CPU: every stop then costs a same-CPU
 * switch rather than a cross-CPU wakeup.
 */
int cpu_adapt(struct jt_cpu *c);

/*
 * cpu_adapt for a thread that works in bursts far apart (the snapshot
 * writers), at the start of each: one look at the machine decides, since
 * the looks are too far apart for the hysteresis, and a burst begun in
 * SCHED_IDLE on a busy host would starve.
 */
int cpu_adapt_burst(struct jt_cpu *c);

/*
 * The policy cpu_adapt chooses when a sample finds `running` tasks runnable
 * (-1: unknown), given c's earlier samples, which it updates.
 */
int cpu_policy_for(struct jt_cpu *c, int running);

/*
 * With on set, puts the tracer thread whose placement c is (tid, 0 for the
 * calling one) in SCHED_OTHER at once, and its cpu_adapt keeps it there until
 * cpu_hurry(c, 0, 0): work due at a set time (a snapshot of --interval) must
 * not wait for an idle CPU, which on a busy host may not come for seconds.
 * Another thread may hurry it: a thread in SCHED_IDLE may not run to do it
 * itself. With on clear, cpu_adapt chooses: now for the calling thread (tid
 * 0) when cpu_on_stop adapts it, which would otherwise stay in SCHED_OTHER
 * until its next adapt, up to 200 ms of cross-CPU stops after every
 * snapshot; else at its next (never, for a thread that does not follow).
 */
void cpu_hurry(struct jt_cpu *c, pid_t tid, int on);

/*
 * --pin: binds the calling tracer thread to the n-th CPU it may run on
 * (modulo their number), for good. Returns that CPU, or -1.
 */
int cpu_bind_nth(struct jt_cpu *c, int n);

/*
 * --pin: binds thread tid (of the program) to cpu. When saved is not NULL,
 * stores the affinity it had there first. Returns 0 or -1.
 */
int cpu_pin(pid_t tid, int cpu, cpu_set_t *saved);

/* Gives thread tid (of the program) back the affinity cpu_pin saved. Returns 0 or -1. */
int cpu_unpin(pid_t tid, const cpu_set_t *saved);

/* Gives the calling tracer thread back the affinity and policy it started with. */
void cpu_release(struct jt_cpu *c);

#endif
