/* launch.h - starts a program under ptrace. */
#ifndef JT_LAUNCH_H
#define JT_LAUNCH_H

#include <sys/ptrace.h>
#include <sys/types.h>

/* What a launched program's threads are seized with: EXITKILL, it dies with us rather than run into our trap instructions. */
#define LAUNCH_PTRACE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
			       PTRACE_O_TRACEVFORKDONE | \
			       PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)

/*
 * Checks that argv[0] names an ELF executable of the traced architecture (or a #! script), forks,
 * and seizes the child before it execs. Sets *script to 1 for a script, else 0.
 * Returns the child's pid, or -1 after printing one line that says why.
 */
pid_t launch_program(char *const argv[], int *script);

#endif
