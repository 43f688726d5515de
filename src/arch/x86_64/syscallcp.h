/* waitcp.h - a wait4 that a signal can never slip past: the flag check and the system call as one window (the contract every src/arch/<arch>/waitcp.h fills). */
#ifndef JT_ARCH_WAITCP_H
#define JT_ARCH_WAITCP_H

#include <sys/types.h>

/*
 * wait4(pid, status, options, NULL) unless *flag is non-zero, read just
 * before the system call instruction. Returns the system call's result: a
 * tid, 0, or a negative errno (-EINTR when *flag was set, without waiting).
 */
long arch_waitcp(const volatile int *flag, pid_t pid, int *status, int options);

/*
 * For a signal handler that has just set *flag: when the interrupted thread
 * stood between the check and the system call (ucontext's pc in that
 * window), moves it to the way out that returns -EINTR. Before the window it
 * will see the flag; in the system call the kernel ends the wait (no
 * SA_RESTART) or, restarting it, puts the pc back on the instruction, which
 * is in the window.
 */
void arch_waitcp_cancel(void *ucontext);

#endif
