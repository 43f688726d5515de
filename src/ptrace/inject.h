/* inject.h - runs one system call inside a stopped tracee thread, as if the thread had made it. */
#ifndef JT_INJECT_H
#define JT_INJECT_H

#include <stdint.h>

#include "arch.h"

struct jt_thread;

/*
 * Runs system call nr with up to six arguments in t, which must be stopped
 * under the calling tracer thread, and puts its registers, signal mask and
 * the stack bytes used back as they were. The thread runs one system call
 * instruction of its own process's code. A signal that arrives meanwhile is
 * sent to it again afterwards (its si_pid is then ours). Refused for threads under seccomp (the filter
 * could kill the program for a call it never made). Returns 0 and sets *ret
 * to the call's return value (a negative errno on failure), or -1 when the
 * call could not be made.
 */
int inject_syscall(struct jt_thread *t, long nr, const uint64_t args[6], long *ret);

/*
 * rt_sigaction(sig, act, old) run in t: act and old (either may be NULL)
 * travel through scratch memory below t's stack red zone. Returns 0, or
 * -1 when the call could not be made or failed.
 */
int inject_sigaction(struct jt_thread *t, int sig, const struct arch_ksigaction *act,
		     struct arch_ksigaction *old);

#endif
