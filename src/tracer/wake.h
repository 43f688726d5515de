/* wake.h - waking a tracer thread out of its wait for a stop, without a wake ever being lost. */
#ifndef JT_WAKE_H
#define JT_WAKE_H

#include <sys/types.h>

/*
 * A tracer thread looks at its work (threads handed to it, stops passed on
 * to it, a recall, the signals' flags), then waits in wait4 for its own
 * tracees. A wake is a signal that interrupts that wait: but one handled
 * after the look and before the wait began was lost, and the thread waited
 * for a stop that would never come (a stop another tracer thread took and
 * passed on: the program stayed stopped for ever). So the handler sets the
 * thread's flag, and the wait does not start once it is set.
 */

/*
 * Clears the calling thread's flag: call it before looking at the work.
 * Returns whether a wake was noted (for one who puts it back with
 * wake_note(NULL) after a call that must be made whatever came before).
 */
int wake_arm(void);

/* From a signal handler that wakes the thread it runs in (its third argument, the ucontext). */
void wake_note(void *ucontext);

/*
 * wait4(pid, status, options, NULL) unless a wake was noted in the calling
 * thread since its wake_arm: then -1 with errno EINTR, at once.
 */
pid_t wake_wait(pid_t pid, int *status, int options);

/*
 * ptrace(req, tid, addr, data) as the system call makes it (no PEEK
 * requests: their result is the word read), unless a wake was noted: then
 * -1 with errno EINTR. A wake ends it even where the kernel would restart
 * it: PTRACE_SEIZE waits for the lock an exec holds until every other
 * thread of the process is reaped, perhaps by the very tracer thread that
 * waits (handover.c).
 */
long wake_ptrace(int req, pid_t tid, void *addr, void *data);

#endif
