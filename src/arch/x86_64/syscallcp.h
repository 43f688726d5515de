/* syscallcp.h - a system call that a signal can never slip past: the flag check and the system call as one window (the contract every src/arch/<arch>/syscallcp.h fills). */
#ifndef JT_ARCH_SYSCALLCP_H
#define JT_ARCH_SYSCALLCP_H

/*
 * System call nr with arguments a1..a4, unless *flag is non-zero, read just
 * before the system call instruction. Returns the system call's result, or
 * a negative errno (-EINTR when *flag was set, without making the call).
 */
long arch_syscallcp(const volatile int *flag, long nr, long a1, long a2, long a3, long a4);

/*
 * For a signal handler that has just set *flag: when the interrupted thread
 * stood between the check and the system call (ucontext's pc in that
 * window), moves it to the way out that returns -EINTR. Before the window it
 * will see the flag; in the system call the kernel ends a wait (no
 * SA_RESTART) or, restarting the call (wait4 under SA_RESTART, or a call
 * that always restarts, as PTRACE_SEIZE waiting for an exec's lock), puts
 * the pc back on the instruction, which is in the window.
 */
void arch_syscallcp_cancel(void *ucontext);

#endif
