/* wake.c - waking a tracer thread out of its wait for a stop: a flag per thread, checked in the same window as the system call (arch waitcp.h). */
#include <errno.h>
#include <signal.h>

#include "waitcp.h"
#include "wake.h"

/* A thread's own, written by its own signal handler: static TLS, safe there. */
static __thread volatile sig_atomic_t wake_flag;

void
wake_arm(void)
{
	wake_flag = 0;
}

void
wake_note(void *ucontext)
{
	wake_flag = 1;
	if (ucontext)
		arch_waitcp_cancel(ucontext);
}

pid_t
wake_wait(pid_t pid, int *status, int options)
{
	long r = arch_waitcp(&wake_flag, pid, status, options);

	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (pid_t)r;
}
