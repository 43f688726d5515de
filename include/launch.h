/* launch.h - starts a program under ptrace. */
#ifndef JT_LAUNCH_H
#define JT_LAUNCH_H

#include <sys/types.h>

/*
 * Checks that argv[0] names an x86-64 ELF executable (or a #! script), forks,
 * and seizes the child before it execs. Returns the child's pid, or -1 after
 * printing one line that says why.
 */
pid_t launch_program(char *const argv[]);

#endif
