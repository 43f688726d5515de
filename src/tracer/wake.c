/* wake.c - waking a tracer thread out of its wait for a stop: a flag per thread, checked in the same window as the system call (arch syscallcp.h). */
#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "syscallcp.h"
#include "wake.h"

/* A thread's own, written by its own signal handler: static TLS, safe there. */
static __thread volatile sig_atomic_t wake_flag;

int
wake_arm(void)
{
	int was = wake_flag;

	wake_flag = 0;
	return was;
}

void
wake_note(void *ucontext)
{
	wake_flag = 1;
	if (ucontext)
		arch_syscallcp_cancel(ucontext);
}

/* System call nr unless woken (arch_syscallcp), its result as libc gives it: -1 with errno set. */
static long
wake_syscall(long nr, long a1, long a2, long a3, long a4)
{
	long r = arch_syscallcp(&wake_flag, nr, a1, a2, a3, a4);

	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

pid_t
wake_wait(pid_t pid, int *status, int options)
{
	return (pid_t)wake_syscall(SYS_wait4, pid, (long)status, options, 0);
}

long
wake_ptrace(int req, pid_t tid, void *addr, void *data)
{
	return wake_syscall(SYS_ptrace, req, tid, (long)addr, (long)data);
}
