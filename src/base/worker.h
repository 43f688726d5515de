/* worker.h - a thread of jmptrace's own that runs one job at a time beside the tracing (a snapshot's writers). */
#ifndef JT_WORKER_H
#define JT_WORKER_H

/*
 * One background thread and the job it runs. The thread is made at the
 * first job, in SCHED_OTHER on every CPU the user allows (the tracer
 * threads may be idle-class or placed), with every signal blocked but the
 * faults, so that the main thread's wait4 is the one signals interrupt and
 * a fault in a job takes jmptrace's way out (emerg.h). A job never waits
 * for the session lock: whoever waits for the worker may hold it.
 */
struct jt_worker;

/* A new worker (its thread comes with the first job). Never NULL. */
struct jt_worker *worker_new(void);

/*
 * Hands fn(arg) to the worker, to run on its thread. Returns 0, -1 with
 * errno EBUSY while the last job runs (nothing is handed over), or -1
 * with errno from pthread_create when the thread cannot be made.
 */
int worker_post(struct jt_worker *w, void (*fn)(void *), void *arg);

/* Non-zero while a job is handed over and has not returned. */
int worker_busy(struct jt_worker *w);

/*
 * A job may run its thread in SCHED_IDLE (the snapshot writers do while a
 * CPU is spare); one that is needed now is put back in SCHED_OTHER: on a
 * host that became busy it would not run again for seconds. For the rest of
 * that job; the next chooses its class again.
 */
void worker_hurry(struct jt_worker *w);

/*
 * Waits until no job runs (hurried: worker_hurry): what the last job read
 * may then change and what it wrote may be read. NULL is fine.
 */
void worker_wait(struct jt_worker *w);

/* Waits as worker_wait, ends the thread and frees w (NULL is fine). */
void worker_free(struct jt_worker *w);

#endif
